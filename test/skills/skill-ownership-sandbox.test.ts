// Skill ownership from sandbox code: real sandbox processes with agents configured. Code saves as
// its agent, cannot plant a version of another agent's skill, and import_skill (including the
// imports inside a skill) resolves only among the skills the calling agent sees.

import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/config-types.js';
import { createExecutor, createHostApi } from '../../src/executor/index.js';
import type { CallIdentity, ExecutionResult, HostCallContext, HostMethod, PooledExecutor } from '../../src/executor/index.js';
import { createSandboxApi } from '../../src/sandbox-api/index.js';
import { SkillStore } from '../../src/skills/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { adaptError } from '../../src/util/daemon-error.js';
import { Workspace } from '../../src/workspace/index.js';
import { FULL_PERMISSIONS, tempDir, testConfig } from '../fixtures/config.js';

const root = tempDir('cem-skill-owners-');
const alice: CallIdentity = { agent: 'alice', sessionId: 'session-alice', workspaceNamespace: 'alice', permissions: { ...FULL_PERMISSIONS, skills: 'publish' } };
const bob: CallIdentity = { agent: 'bob', sessionId: 'session-bob', workspaceNamespace: 'bob', permissions: { ...FULL_PERMISSIONS, skills: 'read-write' } };

let config: Config;
let skills: SkillStore;
let executor: PooledExecutor;
let saveSkill: HostMethod;

function run(code: string, identity: CallIdentity): Promise<ExecutionResult> {
  return executor.execute({ code, language: 'javascript', timeoutSeconds: 20, memoryMb: 256 }, identity);
}

/** The host method the sandbox's save_skill forwards to, called with the optional 5th argument. */
function hostSave(identity: CallIdentity, args: unknown[]): Promise<unknown> {
  const ctx: HostCallContext = { identity, language: 'javascript', signal: new AbortController().signal, account: () => undefined };
  return saveSkill(args, ctx);
}

beforeAll(async () => {
  const base = testConfig();
  config = {
    ...base,
    sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 0 },
    skillsDir: path.join(root, 'skills'),
    workspaceDir: path.join(root, 'workspace'),
    agents: [
      { name: 'alice', token: 'token-alice-0123456789abcdef', permissions: alice.permissions },
      { name: 'bob', token: 'token-bob-0123456789abcdef00', permissions: bob.permissions },
    ],
  };
  const logger = silentLogger();
  skills = new SkillStore({ dir: config.skillsDir, logger });
  await skills.start();
  const workspace = new Workspace({ root: config.workspaceDir, maxFileBytes: config.limits.maxFileBytes });
  const api = createSandboxApi({ config, skills });
  const method = api.extensions['save_skill'];
  if (!method) throw new Error('the sandbox API has no save_skill');
  saveSkill = method;
  executor = await createExecutor({
    config,
    hostApi: createHostApi({ config, workspace, logger, extensions: api.extensions, toolNames: api.toolNames, virtual: api.virtual }),
    logger,
    workspace,
    countTokens: (v) => JSON.stringify(v ?? null).length,
  });
}, 90_000);

afterAll(async () => {
  await executor?.close();
  await skills?.close();
  await rm(root, { recursive: true, force: true });
});

describe('skills from code, with agents configured', () => {
  it("saves as the calling agent (private), and another agent's code cannot see, import or overwrite it", async () => {
    const saved = await run('return save_skill("vault", "export function secret() { return read_file(\\"notes.txt\\") }", "reads my notes")', alice);
    expect(saved).toMatchObject({ success: true, result: { author: 'alice', visibility: 'private' } });
    expect(await readFile(path.join(config.skillsDir, 'vault', 'SKILL.md'), 'utf8')).toMatch(/author: alice\nvisibility: private\n/);

    const listed = await run('return list_skills().map((s) => s.name)', bob);
    expect(listed.result).not.toContain('vault');
    const imported = await run('await import_skill("vault")', bob);
    expect(imported).toMatchObject({ success: false, error_type: 'ImportError' });
    expect(imported.error).toMatch(/not found/);
    const loaded = await run('return load_skill("vault")', bob);
    expect(loaded).toMatchObject({ success: false });
    expect(JSON.stringify(loaded)).not.toContain('notes.txt');

    // The attack of issue 10: plant a version of alice's skill that alice's next call would run.
    const planted = await run('return save_skill("vault", "export function secret() { write_file(\\"pwned.txt\\", \\"x\\"); return 1 }")', bob);
    expect(planted).toMatchObject({ success: false, error_type: 'PermissionError' });
    expect(planted.error).toMatch(/belongs to another agent/);
    expect(await readFile(path.join(config.skillsDir, 'vault', 'index.js'), 'utf8')).toContain('notes.txt');
    expect((await run('return list_skills().map((s) => [s.name, s.author, s.visibility])', alice)).result).toContainEqual(['vault', 'alice', 'private']);
  });

  it('publishes with { shared: true } as the 5th argument, only with the "publish" permission', async () => {
    await expect(hostSave(bob, ['bob_pub', 'export const x = 1', '', null, { shared: true }])).rejects.toSatisfy(
      (e: unknown) => adaptError(e).guest === 'PermissionError' && /needs the "skills" permission "publish", and agent "bob" has "read-write"/.test(adaptError(e).message),
    );
    expect(await hostSave(alice, ['lib_math', 'export function double(x) { return 2 * x }', 'doubles', null, { shared: true }])).toMatchObject({ author: 'alice', visibility: 'shared' });
    expect(await hostSave(bob, ['bob_default', 'export const y = 1', '', null])).toMatchObject({ author: 'bob', visibility: 'private' });
    await expect(hostSave(bob, ['bob_bad', 'export const y = 1', '', null, 'yes'])).rejects.toThrow(/options must be \{ shared: true \}/);
    const used = await run('const { double } = await import_skill("lib_math"); return double(21)', bob);
    expect(used).toMatchObject({ success: true, result: 42 });
    const overwrite = await run('return save_skill("lib_math", "export function double(x) { return 0 }")', bob);
    expect(overwrite).toMatchObject({ success: false, error_type: 'PermissionError' });
    expect(overwrite.error).toMatch(/belongs to agent "alice"/);
  });

  it('publishes from code with save_skill(name, code, description, language, { shared: true })', async () => {
    const refused = await run('return save_skill("bob_code_pub", "export const x = 1", "", null, { shared: true })', bob);
    expect(refused).toMatchObject({ success: false, error_type: 'PermissionError' });
    const published = await run('return save_skill("alice_code_pub", "export const x = 1", "shared from code", null, { shared: true })', alice);
    expect(published).toMatchObject({ success: true, result: { author: 'alice', visibility: 'shared' } });
    expect((await run('return (await import_skill("alice_code_pub")).x', bob)).result).toBe(1);
  });

  it("imports inside a skill resolve to the skills pinned when it was saved, for every caller", async () => {
    await run('return save_skill("helper_priv", "export const who = \\"alice helper\\"")', alice);
    // A shared skill cannot import a private one: other agents could not run it.
    await expect(hostSave(alice, ['greeter', "import { who } from 'skill:helper_priv';\nexport const greet = () => 'hello from ' + who;", '', null, { shared: true }])).rejects.toThrow(
      /is shared but imports "helper_priv", which is private/,
    );
    await run('return save_skill("helper_pub", "export const who = \\"alice helper\\"", "", null, { shared: true })', alice);
    await hostSave(alice, ['greeter', "import { who } from 'skill:helper_pub';\nexport const greet = () => 'hello from ' + who;", '', null, { shared: true }]);
    const asAlice = await run('const { greet } = await import_skill("greeter"); return greet()', alice);
    expect(asAlice).toMatchObject({ success: true, result: 'hello from alice helper' });
    const asBob = await run('const { greet } = await import_skill("greeter"); return greet()', bob);
    expect(asBob).toMatchObject({ success: true, result: 'hello from alice helper' });
  });
});
