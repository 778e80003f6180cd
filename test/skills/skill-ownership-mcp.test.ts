// Skill ownership through the MCP tools: three agents with their own tokens on the real HTTP
// daemon, one skill store, and the single-user case over the in-memory transport.

import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HttpDaemon } from '../../src/mcp/http/http-daemon.js';
import { SkillStore } from '../../src/skills/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { buildServices, connectInMemory, textOf } from '../fixtures/mcp/harness.js';
import { makeTempDir } from './helpers.js';

const TOKENS = { alice: 'token-alice-0123456789abcdef', bob: 'token-bob-0123456789abcdef00', carol: 'token-carol-0123456789abcdef' };

interface ToolResult {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

function names(result: ToolResult): string[] {
  return ((result.structuredContent?.['skills'] ?? []) as { name: string }[]).map((s) => s.name);
}

describe('skill ownership over the HTTP daemon, three agents', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let store: SkillStore;
  let daemon: HttpDaemon;
  let workspaceDir: string;
  const clients: Client[] = [];
  const as: Record<keyof typeof TOKENS, Client> = {} as Record<keyof typeof TOKENS, Client>;

  beforeAll(async () => {
    ({ dir, cleanup } = await makeTempDir());
    store = new SkillStore({ dir, logger: silentLogger() });
    await store.start();
    const built = await buildServices({
      configure: (c) => {
        c.agents = [
          { name: 'alice', token: TOKENS.alice, permissions: { workspace: 'read-write', skills: 'publish', tools: [], net: [] } },
          { name: 'bob', token: TOKENS.bob, permissions: { workspace: 'read-write', skills: 'read-write', tools: [], net: [] } },
          { name: 'carol', token: TOKENS.carol, permissions: { workspace: 'read', skills: 'read', tools: [], net: [] } },
        ];
      },
    });
    const { services } = built;
    workspaceDir = built.workspaceDir;
    services.skills = store;
    daemon = new HttpDaemon(services);
    const { url } = await daemon.listen();
    for (const agent of ['alice', 'bob', 'carol'] as const) {
      const client = new SdkClient({ name: agent, version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${TOKENS[agent]}` } } }));
      clients.push(client);
      as[agent] = client;
    }
    expect(await call(as.alice, 'save_skill', { name: 'alice_private', code: 'export const payload = "alice-secret-42";', description: 'alice only' })).not.toHaveProperty('isError', true);
    expect(await call(as.alice, 'save_skill', { name: 'alice_shared', code: 'export const answer = 42;', description: 'for everyone', shared: true })).not.toHaveProperty('isError', true);
  }, 30_000);

  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await daemon?.shutdown(0);
    await store?.close();
    await cleanup?.();
    if (workspaceDir) await rm(workspaceDir, { recursive: true, force: true });
  });

  it('saves record the author; shared: true publishes, the default is private', async () => {
    const saved = await call(as.bob, 'save_skill', { name: 'bob_tool', code: 'export const b = 1;' });
    expect(saved.structuredContent).toMatchObject({ success: true, name: 'bob_tool', author: 'bob', visibility: 'private' });
    expect(await readFile(join(dir, 'bob_tool', 'SKILL.md'), 'utf8')).toMatch(/author: bob\nvisibility: private\n/);
    const listed = await call(as.alice, 'list_skills', {});
    expect(listed.structuredContent?.['skills']).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'alice_private', author: 'alice', visibility: 'private' }),
        expect.objectContaining({ name: 'alice_shared', author: 'alice', visibility: 'shared' }),
      ]),
    );
  });

  it("another agent's private skill does not exist for list_skills and load_skill", async () => {
    expect(names(await call(as.bob, 'list_skills', {}))).not.toContain('alice_private');
    expect(names(await call(as.carol, 'list_skills', {}))).toEqual(['alice_shared']);
    const loaded = (await as.carol.callTool({ name: 'load_skill', arguments: { name: 'alice_private' } })) as ToolResult;
    expect(loaded.isError).toBe(true);
    expect(textOf(loaded)).toMatch(/not found/);
    expect(textOf(loaded)).not.toContain('alice-secret-42');
    const shared = await call(as.carol, 'load_skill', { name: 'alice_shared' });
    expect(shared.structuredContent).toMatchObject({ name: 'alice_shared', metadata: { author: 'alice', visibility: 'shared' } });
  });

  it("another agent's private skill is no MCP resource either (resources/list and resources/read)", async () => {
    const listed = (await as.carol.listResources()).resources.map((r) => r.uri);
    expect(listed).toContain('skill://alice_shared');
    expect(listed).not.toContain('skill://alice_private');
    await expect(as.carol.readResource({ uri: 'skill://alice_private' })).rejects.toThrow(/not found/i);
    const own = await as.alice.readResource({ uri: 'skill://alice_private' });
    expect(JSON.stringify(own.contents)).toContain('alice-secret-42');
  });

  it("saving over another agent's skill is refused, private or shared, and nothing of it is revealed", async () => {
    const overPrivate = await as.bob.callTool({ name: 'save_skill', arguments: { name: 'alice_private', code: 'export const payload = "planted";' } });
    expect(overPrivate.isError).toBe(true);
    expect(textOf(overPrivate)).toMatch(/belongs to another agent.*another name/);
    expect(textOf(overPrivate)).not.toMatch(/alice-secret-42|alice only/);
    const overShared = await as.bob.callTool({ name: 'save_skill', arguments: { name: 'alice_shared', code: 'export const answer = 0;' } });
    expect(overShared.isError).toBe(true);
    expect(textOf(overShared)).toMatch(/belongs to agent "alice"/);
    expect((await call(as.alice, 'load_skill', { name: 'alice_private' })).structuredContent?.['code']).toBe('export const payload = "alice-secret-42";');
    expect((await call(as.alice, 'load_skill', { name: 'alice_shared' })).structuredContent?.['code']).toBe('export const answer = 42;');
  });

  it("deleting another agent's skill is refused; its author deletes it", async () => {
    const shared = await as.bob.callTool({ name: 'delete_skill', arguments: { name: 'alice_shared' } });
    expect(shared.isError).toBe(true);
    expect(textOf(shared)).toMatch(/not deleted.*agent "alice"/);
    const hidden = await as.bob.callTool({ name: 'delete_skill', arguments: { name: 'alice_private' } });
    expect(hidden.isError).toBe(true);
    expect(textOf(hidden)).toMatch(/not found/);
    await call(as.alice, 'save_skill', { name: 'alice_temp', code: 'export const t = 1;' });
    expect((await call(as.alice, 'delete_skill', { name: 'alice_temp' })).structuredContent).toEqual({ success: true });
  });

  it('publishing needs the "publish" permission; saving at all needs "read-write"', async () => {
    const publish = await as.bob.callTool({ name: 'save_skill', arguments: { name: 'bob_pub', code: 'export const p = 1;', shared: true } });
    expect(publish.isError).toBe(true);
    expect(textOf(publish)).toMatch(/permission denied: save_skill with shared: true .*needs the "skills" permission "publish", and agent "bob" has "read-write"/);
    expect(names(await call(as.bob, 'list_skills', {}))).not.toContain('bob_pub');
    const save = await as.carol.callTool({ name: 'save_skill', arguments: { name: 'carol_tool', code: 'export const c = 1;' } });
    expect(save.isError).toBe(true);
    expect(textOf(save)).toMatch(/needs the "skills" permission "read-write", and agent "carol" has "read"/);
  });
});

describe('one user (no agents configured) over MCP, as the seed', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let store: SkillStore;
  let session: Awaited<ReturnType<typeof connectInMemory>>;
  let workspaceDir: string;

  beforeEach(async () => {
    ({ dir, cleanup } = await makeTempDir());
    store = new SkillStore({ dir, logger: silentLogger() });
    await store.start();
    const { services, config, workspaceDir: wsDir } = await buildServices();
    workspaceDir = wsDir;
    services.skills = store;
    session = await connectInMemory(services, { sessionId: 'local-session', name: 'local', workspaceNamespace: '', permissions: config.defaultPermissions });
  });

  afterEach(async () => {
    await session.close();
    await store.close();
    await cleanup();
    await rm(workspaceDir, { recursive: true, force: true });
  });

  it("sees and changes every skill, whoever saved it; the local agent's saves are shared", async () => {
    await store.save({ name: 'from_bob', code: 'export const b = 1;' }, { agent: 'bob', agentsConfigured: true });
    const { client } = session;
    expect(names(await call(client, 'list_skills', {}))).toEqual(['from_bob']);
    expect((await call(client, 'load_skill', { name: 'from_bob' })).structuredContent?.['code']).toBe('export const b = 1;');
    const saved = await call(client, 'save_skill', { name: 'mine', code: 'export const m = 1;' });
    expect(saved.structuredContent).toMatchObject({ success: true, author: 'local', visibility: 'shared' });
    expect((await call(client, 'save_skill', { name: 'from_bob', code: 'export const b = 2;' })).structuredContent).toMatchObject({ success: true });
    expect((await call(client, 'delete_skill', { name: 'from_bob' })).structuredContent).toEqual({ success: true });
    expect(names(await call(client, 'list_skills', {}))).toEqual(['mine']);
  });
});
