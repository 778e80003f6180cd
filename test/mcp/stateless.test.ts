// Revision 2026-07-28 (stateless) on the same /mcp endpoint as sessions: server/discover, tool
// calls without initialize or Mcp-Session-Id, per-request validation with the request's id in
// every error, and each agent answered as itself (its own workspace), also when two clients use
// the same request id at once.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/config-types.js';
import { SkillStore } from '../../src/skills/skill-store.js';
import { silentLogger } from '../../src/util/logger.js';
import { startHttpHarness } from '../fixtures/mcp/http-harness.js';
import type { HttpHarness } from '../fixtures/mcp/http-harness.js';

let h: HttpHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const REVISION = '2026-07-28';
const TOKEN_A = 'token-alice-0123456789abcdef';
const TOKEN_B = 'token-bob-0123456789abcdef00';
const withAgents = (c: Config): void => {
  c.agents = [
    { name: 'alice', token: TOKEN_A, workspace: 'alice', permissions: { workspace: 'read-write', skills: 'read-write', tools: ['*'], net: [] } },
    { name: 'bob', token: TOKEN_B, workspace: 'bob', permissions: { workspace: 'read-write', skills: 'read', tools: [], net: [] } },
  ];
};

interface Answer {
  status: number;
  headers: Headers;
  body: { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };
}

async function stateless(method: string, params: Record<string, unknown>, options: { token?: string; id?: number | string; meta?: Record<string, unknown> | null; headers?: Record<string, string> } = {}): Promise<Answer> {
  const name = method === 'tools/call' ? params['name'] : method === 'resources/read' ? params['uri'] : undefined;
  const meta = options.meta === null ? undefined : (options.meta ?? { 'io.modelcontextprotocol/protocolVersion': REVISION, 'io.modelcontextprotocol/clientCapabilities': {} });
  const res = await fetch(h!.url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': REVISION,
      'Mcp-Method': method,
      ...(typeof name === 'string' && { 'Mcp-Name': name }),
      ...(options.token && { Authorization: `Bearer ${options.token}` }),
      ...options.headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: options.id ?? 1, method, params: { ...params, ...(meta && { _meta: meta }) } }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'] };
}

describe('revision 2026-07-28 (stateless)', () => {
  it('answers server/discover and tool calls without initialize or a session, beside a session client', async () => {
    h = await startHttpHarness();
    const discover = await stateless('server/discover', {});
    expect(discover.status).toBe(200);
    expect(discover.headers.get('mcp-session-id')).toBeNull();
    expect(discover.body.result).toMatchObject({ supportedVersions: [REVISION], capabilities: { tools: {} }, resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
    const list = await stateless('tools/list', {});
    expect((list.body.result?.['tools'] as { name: string }[]).map((t) => t.name)).toContain('execute_code');
    expect(list.body.result).toMatchObject({ resultType: 'complete', cacheScope: 'private' });
    const call = await stateless('tools/call', { name: 'write_workspace_file', arguments: { filename: 'a.txt', content: 'hi' } }, { id: 'call-1' });
    expect(call.body).toMatchObject({ id: 'call-1', result: { resultType: 'complete', structuredContent: { success: true } } });
    expect(call.body.result?.['ttlMs']).toBeUndefined();
    // a session client on the same endpoint sees the same local agent's file
    const client = await h.connect();
    const read = await client.callTool({ name: 'read_workspace_file', arguments: { filename: 'a.txt' } });
    expect(read.structuredContent).toMatchObject({ content: 'hi' });
  });

  it('refuses a malformed stateless request with 400, a code that names the fault and the request id', async () => {
    h = await startHttpHarness();
    const noMeta = await stateless('tools/list', {}, { meta: null, id: 7 });
    expect(noMeta).toMatchObject({ status: 400, body: { id: 7, error: { code: -32602 } } });
    expect(noMeta.body.error?.message).toMatch(/missing _meta keys: io\.modelcontextprotocol\/protocolVersion, io\.modelcontextprotocol\/clientCapabilities/);
    const mismatch = await stateless('tools/list', {}, { id: 8, meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01', 'io.modelcontextprotocol/clientCapabilities': {} } });
    expect(mismatch).toMatchObject({ status: 400, body: { id: 8, error: { code: -32020 } } });
    const unsupported = await stateless('tools/list', {}, { id: 9, headers: { 'MCP-Protocol-Version': '2099-01-01' }, meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01', 'io.modelcontextprotocol/clientCapabilities': {} } });
    expect(unsupported).toMatchObject({ status: 400, body: { id: 9, error: { code: -32022, data: { supported: [REVISION], requested: '2099-01-01' } } } });
    const removed = await stateless('ping', {}, { id: 10 });
    expect(removed).toMatchObject({ status: 404, body: { id: 10, error: { code: -32601 } } });
    const wrongName = await stateless('tools/call', { name: 'list_workspace_files', arguments: {} }, { id: 11, headers: { 'Mcp-Name': 'execute_code' } });
    expect(wrongName).toMatchObject({ status: 400, body: { id: 11, error: { code: -32020 } } });
    // without the revision's header or _meta, a request with no session is refused as before
    const bare = await fetch(h.url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    expect(bare.status).toBe(400);
    expect(await bare.text()).toMatch(/no Mcp-Session-Id header/);
  });

  it('answers each agent as itself, also two agents using the same request id at once', async () => {
    h = await startHttpHarness({ configure: withAgents });
    const write = (token: string, content: string) => stateless('tools/call', { name: 'write_workspace_file', arguments: { filename: 'mine.txt', content } }, { token, id: 1 });
    const [a, b] = await Promise.all([write(TOKEN_A, 'alice data'), write(TOKEN_B, 'bob data')]);
    expect(a.body.result?.['structuredContent']).toMatchObject({ success: true });
    expect(b.body.result?.['structuredContent']).toMatchObject({ success: true });
    const read = (token: string) => stateless('tools/call', { name: 'read_workspace_file', arguments: { filename: 'mine.txt' } }, { token, id: 1 });
    const [ra, rb] = await Promise.all([read(TOKEN_A), read(TOKEN_B)]);
    expect(ra.body).toMatchObject({ id: 1, result: { structuredContent: { content: 'alice data' } } });
    expect(rb.body).toMatchObject({ id: 1, result: { structuredContent: { content: 'bob data' } } });
    const anonymous = await stateless('tools/list', {});
    expect(anonymous.status).toBe(401);
  });

  it("serves skills through the SEP-2640 extension as each agent's skill tools see them: another agent's private skill is not there", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'cem-skills-ext-'));
    const store = new SkillStore({ dir, logger: silentLogger() });
    await store.start();
    try {
      h = await startHttpHarness({ configure: (c) => (withAgents(c), (c.skillsDir = dir)) });
      h.services.skills = store;
      await store.save({ name: 'alice-secret', code: 'export function f() { return 1; }', description: 'Alice only' }, { agent: 'alice', agentsConfigured: true });
      const discover = await stateless('server/discover', {}, { token: TOKEN_A });
      expect(discover.body.result?.['capabilities']).toMatchObject({ resources: {}, extensions: { 'io.modelcontextprotocol/skills': {} } });
      const mine = await stateless('skills/list', {}, { token: TOKEN_A });
      const skills = mine.body.result?.['skills'] as { uri: string; frontmatter: Record<string, unknown>; resources: { uri: string; digest: string; size: number }[] }[];
      expect(skills.map((s) => s.uri)).toEqual(['skill://alice-secret/SKILL.md']);
      expect(skills[0]?.frontmatter).toMatchObject({ name: 'alice-secret', description: 'Alice only' });
      expect(skills[0]?.resources.map((r) => r.uri).sort()).toEqual(['skill://alice-secret/SKILL.md', 'skill://alice-secret/index.js']);
      expect(skills[0]?.resources.every((r) => /^sha256:[0-9a-f]{64}$/.test(r.digest) && r.size > 0)).toBe(true);
      const code = await stateless('resources/read', { uri: 'skill://alice-secret/index.js' }, { token: TOKEN_A });
      expect(code.body.result).toMatchObject({ contents: [{ text: 'export function f() { return 1; }' }] });
      // bob: not listed, not gettable, not readable
      const theirs = await stateless('skills/list', {}, { token: TOKEN_B });
      expect(theirs.body.result?.['skills']).toEqual([]);
      expect((await stateless('skills/get', { uri: 'skill://alice-secret/SKILL.md' }, { token: TOKEN_B })).body.error?.code).toBe(-32602);
      expect((await stateless('resources/read', { uri: 'skill://alice-secret/index.js' }, { token: TOKEN_B })).body.error?.code).toBe(-32002);
      // no way out of a skill folder
      expect((await stateless('resources/read', { uri: 'skill://alice-secret/..%2F..%2Fetc%2Fpasswd' }, { token: TOKEN_A })).body.error?.code).toBe(-32002);
      expect((await stateless('resources/read', { uri: 'skill://alice-secret/../alice-secret/index.js' }, { token: TOKEN_A })).body.error?.code).toBe(-32002);
      // a malformed %-escape is the caller's mistake: invalid params naming the URI, not HTTP 500
      const malformed = await stateless('resources/read', { uri: 'skill://alice-secret/%E0%A4%A' }, { token: TOKEN_A });
      expect(malformed).toMatchObject({ status: 200, body: { error: { code: -32602, data: { uri: 'skill://alice-secret/%E0%A4%A' } } } });
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
