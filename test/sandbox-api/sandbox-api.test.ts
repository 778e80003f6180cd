// The sandbox API end to end through the real executor, with real subsystems: upstream MCP servers
// installed from npm (memory, filesystem), the skill store, the catalog's servers/ tree, PII
// vaults with pii.auto and flow rules, and fetch against a local HTTP server.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../src/catalog/index.js';
import type { JsonSchema } from '../../src/catalog/index.js';
import type { Config } from '../../src/config/config-types.js';
import { createExecutor, createHostApi } from '../../src/executor/index.js';
import type { CallIdentity, ExecutionRequest, ExecutionResult, PooledExecutor } from '../../src/executor/index.js';
import { PiiVaultStore } from '../../src/pii/index.js';
import { createSandboxApi } from '../../src/sandbox-api/index.js';
import { SkillStore } from '../../src/skills/index.js';
import { UpstreamManager } from '../../src/upstream/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { Workspace } from '../../src/workspace/index.js';
import { FULL_PERMISSIONS, tempDir, testConfig } from '../fixtures/config.js';
import { filesystemConfig, memoryConfig } from '../upstream/helpers.js';

const root = tempDir('cem-sandbox-api-');
const fsRoot = path.join(root, 'shared-files');
mkdirSync(fsRoot, { recursive: true });
writeFileSync(path.join(fsRoot, 'customers.json'), JSON.stringify([{ name: 'Dana', email: 'dana@example.com' }, { name: 'Eve', email: 'eve@example.org' }]));

let server: Server;
let port = 0;
let config: Config;
let executor: PooledExecutor;
let upstream: UpstreamManager;
let skills: SkillStore;
let catalog: Catalog;
let vaults: PiiVaultStore;

const agent: CallIdentity = { agent: 'a', sessionId: 'session-a', workspaceNamespace: 'a', permissions: FULL_PERMISSIONS };

function run(code: string, identity: CallIdentity = agent, extra: Partial<ExecutionRequest> = {}): Promise<ExecutionResult> {
  return executor.execute({ code, language: 'javascript', timeoutSeconds: 20, memoryMb: 256, ...extra }, identity);
}

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/redirect-out') {
      res.writeHead(302, { location: 'http://localhost.invalid.test/x' }).end();
      return;
    }
    if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(4096));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url, method: req.method }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;

  const base = testConfig();
  config = {
    ...base,
    catalogDir: path.join(root, 'catalog'),
    skillsDir: path.join(root, 'skills'),
    workspaceDir: path.join(root, 'workspace'),
    limits: { ...base.limits, maxFetchBytes: 1024 },
    pii: { ...base.pii, auto: true, flows: [{ tools: 'memory.add_observations', types: ['EMAIL'], action: 'deny' }] },
  };
  mkdirSync(path.join(config.catalogDir, 'docs'), { recursive: true });
  writeFileSync(
    path.join(config.catalogDir, 'docs', 'lookup.json'),
    JSON.stringify({ name: 'lookup', description: 'Look up a document by id.', mcp_server: 'docs', functions: [], use_cases: ['find a document'], input_schema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } }),
  );
  const logger = silentLogger();
  catalog = new Catalog({ dir: config.catalogDir, logger, watch: false });
  skills = new SkillStore({ dir: config.skillsDir, logger });
  vaults = new PiiVaultStore();
  upstream = new UpstreamManager({
    servers: { memory: memoryConfig(path.join(root, 'memory.jsonl')), files: filesystemConfig(fsRoot) },
    logger,
    onToolsChanged: (name, tools) =>
      catalog.setDynamicTools(
        name,
        (tools ?? []).map((t) => ({ name: t.name, description: t.description, mcp_server: name, functions: [`tools.${name}.${t.name}(args)`], use_cases: [], input_schema: t.inputSchema as JsonSchema, source: 'upstream' as const })),
      ),
  });
  await Promise.all([catalog.start(), skills.start(), upstream.start()]);
  const workspace = new Workspace({ root: config.workspaceDir, maxFileBytes: config.limits.maxFileBytes });
  const api = createSandboxApi({ config, skills, pii: vaults, catalog, upstream });
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
  await upstream?.close();
  await skills?.close();
  await catalog?.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('upstream tools from code', () => {
  it('calls a real upstream tool and gets its structured result', async () => {
    const r = await run("const out = await tools.memory.create_entities({ entities: [{ name: 'Ann', entityType: 'person', observations: ['likes tea'] }] });\nreturn out");
    expect(r.success).toBe(true);
    expect(JSON.stringify(r.result)).toContain('Ann');
  });

  it('chains two tool calls in one execution and returns only the small result', async () => {
    const r = await run(`
      const file = await tools.files.read_text_file({ path: ${JSON.stringify(path.join(fsRoot, 'customers.json'))} });
      const customers = JSON.parse(file.content);
      await tools.memory.create_entities({ entities: customers.map((c) => ({ name: c.name, entityType: 'customer', observations: ['imported'] })) });
      const graph = await tools.memory.read_graph({});
      return graph.entities.filter((e) => e.entityType === 'customer').map((e) => e.name).sort();`);
    expect(r).toMatchObject({ success: true, result: ['Dana', 'Eve'] });
    expect(r.context_savings?.tokens_in).toBeGreaterThan(0);
  });

  it('validates arguments against the input schema before calling', async () => {
    const r = await run('await tools.memory.create_entities({ wrong: 1 })');
    expect(r).toMatchObject({ success: false, error_type: 'TypeError' });
    expect(r.error).toMatch(/create_entities/);
  });

  it('applies the agent tools permission', async () => {
    const limited: CallIdentity = { ...agent, permissions: { ...FULL_PERMISSIONS, tools: ['memory.read_graph'] } };
    const r = await run(
      `const refused = (p) => p.then(() => 'ran', (e) => e.name);
      return [typeof tools.memory.read_graph, Object.keys(tools), Object.keys(tools.memory), await refused(tools.memory.create_entities({ entities: [] })), await refused(tools.files.read_file({ path: 'x' }))]`,
      limited,
    );
    // Only what the agent may call is listed; anything else still reaches the host, which refuses it by name.
    expect(r.result).toEqual(['function', ['memory'], ['read_graph'], 'PermissionError', 'PermissionError']);
  });

  it('finds tools with search_tools from code', async () => {
    const r = await run("return search_tools('knowledge graph entities', { detail_level: 'name', limit: 3 }).tools.map((t) => t.category + '.' + t.name)");
    expect(r.success).toBe(true);
    expect(r.result as string[]).toContain('memory.create_entities');
  });
});

describe('the servers/ tree', () => {
  it('lists and reads generated TypeScript declarations, read-only', async () => {
    const r = await run(`
      const files = list_files('servers/memory');
      const text = read_file('servers/docs/lookup.ts');
      let refused = '';
      try { write_file('servers/docs/lookup.ts', 'x') } catch (e) { refused = e.name + ': ' + e.message }
      return { files, text, refused };`);
    expect(r.success).toBe(true);
    const v = r.result as { files: string[]; text: string; refused: string };
    expect(v.files).toContain('servers/memory/create_entities.ts');
    expect(v.files).toContain('servers/memory/index.ts');
    expect(v.text).toMatch(/export async function lookup\(input: LookupInput\)/);
    expect(v.refused).toMatch(/^PermissionError: .*read-only/);
  });

  it('is the same tree however the path is spelled: no real files can be put under it', async () => {
    const r = await run(`
      const out = [];
      for (const p of ['././servers/docs/lookup.ts', 'servers//docs/lookup.ts', 'x/../servers/docs/lookup.ts', './servers/./docs/lookup.ts']) {
        try { write_file(p, 'planted'); out.push('written') } catch (e) { out.push(e.name) }
        out.push(read_file(p).includes('export async function lookup'));
      }
      return out;`);
    expect(r.error, r.traceback).toBeUndefined();
    expect(r.result).toEqual(Array.from({ length: 4 }, () => ['PermissionError', true]).flat());
  });
});

describe('skills from code', () => {
  it('saves a skill in one call and imports it in the next', async () => {
    const saved = await run("return save_skill('risk', 'export function filter_high_risk(items, threshold = 7) { return items.filter((i) => i.risk_score >= threshold) }', 'Keep high-risk items')");
    expect(saved).toMatchObject({ success: true });
    const r = await run("const { filter_high_risk } = await import_skill('risk');\nreturn filter_high_risk([{ risk_score: 9 }, { risk_score: 2 }]).length");
    expect(r).toMatchObject({ success: true, result: 1 });
  });

  it("imports a seed-style skill's top-level functions and chains imports", async () => {
    await run("save_skill('base_math', 'function double(x) { return x * 2 }\\nfunction triple(x) { return x * 3 }')");
    await run("save_skill('uses_base', \"import { double } from 'skill:base_math';\\nexport const quad = (x) => double(double(x));\", '', 'javascript')");
    const r = await run("const m = await import_skill('uses_base');\nconst b = await import_skill('base_math');\nreturn [m.quad(2), b.triple(2)]");
    expect(r).toMatchObject({ success: true, result: [8, 6] });
  });

  it('reports an import cycle and a missing skill clearly', async () => {
    // An import must exist when its skill is saved; the loop is closed by saving cyc_b again.
    await run("save_skill('cyc_b', 'export const b = 2;')");
    await run("save_skill('cyc_a', \"import { b } from 'skill:cyc_b';\\nexport const a = 1;\")");
    await run("save_skill('cyc_b', \"import { a } from 'skill:cyc_a';\\nexport const b = 2;\")");
    const cycle = await run("await import_skill('cyc_a')");
    expect(cycle).toMatchObject({ success: false, error_type: 'ImportError' });
    // Imports inside skills name the skill they were pinned to (NAME@OWNER).
    expect(cycle.error).toMatch(/import cycle between skills: cyc_b@\S* -> cyc_a@\S* -> cyc_b@/);
    const missing = await run("await import_skill('nope_nothing')");
    expect(missing).toMatchObject({ success: false, error_type: 'ImportError' });
  });

  it('needs the skills write permission to save', async () => {
    const reader: CallIdentity = { ...agent, permissions: { ...FULL_PERMISSIONS, skills: 'read' } };
    const r = await run("save_skill('denied', 'export const x = 1')", reader);
    expect(r).toMatchObject({ success: false, error_type: 'PermissionError' });
    expect(r.error).toMatch(/read-write/);
  });
});

describe('PII in the sandbox', () => {
  it('tokenizes and restores in any session of the agent, never for another agent', async () => {
    const tokenized = await run("return tokenize_pii('mail ann@example.com now')");
    const text = tokenized.result as string;
    expect(text).toMatch(/^mail \[EMAIL_[0-9a-f]{8}\] now$/);
    expect((await run(`return detokenize_pii(${JSON.stringify(text)})`)).result).toBe('mail ann@example.com now');
    const later: CallIdentity = { ...agent, sessionId: 'session-b' };
    expect((await run(`return detokenize_pii(${JSON.stringify(text)})`, later)).result).toBe('mail ann@example.com now');
    const other: CallIdentity = { ...agent, agent: 'b', sessionId: 'session-c', workspaceNamespace: 'b' };
    expect((await run(`return detokenize_pii(${JSON.stringify(text)})`, other)).result).toBe(text);
  });

  it('restores tokens in tool arguments on the way out (pii.auto) and refuses unknown tokens', async () => {
    const token = (await run("return tokenize_pii('carol@example.net')")).result as string;
    const r = await run(`await tools.memory.create_entities({ entities: [{ name: 'Carol', entityType: 'person', observations: [${JSON.stringify(token)}] }] });
      const g = await tools.memory.open_nodes({ names: ['Carol'] });
      return g.entities[0].observations;`);
    expect(r).toMatchObject({ success: true, result: ['carol@example.net'] });
    const forged = await run("await tools.memory.create_entities({ entities: [{ name: 'X', entityType: 'p', observations: ['[EMAIL_deadbeef]'] }] })");
    expect(forged).toMatchObject({ success: false, error_type: 'PermissionError' });
    expect(forged.error).toMatch(/\[EMAIL_deadbeef\] is unknown to this agent/);
  });

  it('enforces PII flow rules', async () => {
    const r = await run("await tools.memory.add_observations({ observations: [{ entityName: 'Ann', contents: ['reach me at ann@example.com'] }] })");
    expect(r).toMatchObject({ success: false, error_type: 'PermissionError' });
    expect(r.error).toMatch(/rule #1/);
  });
});

describe('fetch', () => {
  const netAgent = (): CallIdentity => ({ ...agent, permissions: { ...FULL_PERMISSIONS, net: [`127.0.0.1:${port}`] } });

  it('is refused without a net permission, with a message naming it', async () => {
    const r = await run(`return await fetch('http://127.0.0.1:${port}/hello').then(() => 'fetched', (e) => [e.name, e.message])`);
    expect(r.result).toEqual(['PermissionError', expect.stringMatching(/net permission/)]);
  });

  it('reaches allowed hosts through the host', async () => {
    const r = await run(`const res = await fetch('http://127.0.0.1:${port}/hello', { method: 'POST', body: 'x' });\nreturn [res.status, res.ok, await res.json()]`, netAgent());
    expect(r).toMatchObject({ success: true, result: [200, true, { path: '/hello', method: 'POST' }] });
  });

  it('refuses other hosts, redirects out, and oversized responses', async () => {
    const denied = await run("await fetch('http://10.0.0.1/')", netAgent());
    expect(denied).toMatchObject({ success: false, error_type: 'PermissionError' });
    expect(denied.error).toMatch(/net permission/);
    const redirected = await run(`await fetch('http://127.0.0.1:${port}/redirect-out')`, netAgent());
    expect(redirected).toMatchObject({ success: false, error_type: 'PermissionError' });
    const big = await run(`await fetch('http://127.0.0.1:${port}/big')`, netAgent());
    expect(big).toMatchObject({ success: false, error_type: 'RangeError' });
    expect(big.error).toMatch(/maxFetchBytes/);
  });
});

describe('nothing leaks to disk outside the workspace', () => {
  it('keeps skills and workspace where configured', () => {
    expect(existsSync(path.join(config.skillsDir, 'risk', 'SKILL.md'))).toBe(true);
  });
});
