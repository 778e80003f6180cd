// The HTTP daemon in process: Streamable HTTP sessions with the SDK client, health and metrics,
// and every guard (Host, Origin, tokens, body size, malformed input, sessions) answering with a
// clear error while the daemon keeps serving.

import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Config } from '../../src/config/config-types.js';
import { StartupError } from '../../src/mcp/http/bind-port.js';
import { HttpDaemon } from '../../src/mcp/http/http-daemon.js';
import { buildServices } from '../fixtures/mcp/harness.js';
import { INITIALIZE, MCP_POST_HEADERS, rawRequest, startHttpHarness } from '../fixtures/mcp/http-harness.js';
import type { HttpHarness } from '../fixtures/mcp/http-harness.js';

let h: HttpHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const TOKEN_A = 'token-alice-0123456789abcdef';
const TOKEN_B = 'token-bob-0123456789abcdef00';
const withAgents = (c: Config): void => {
  c.agents = [
    { name: 'alice', token: TOKEN_A, workspace: 'alice', permissions: { workspace: 'read-write', skills: 'read-write', tools: ['*'], net: [] } },
    { name: 'bob', token: TOKEN_B, workspace: 'bob', permissions: { workspace: 'read', skills: 'read', tools: [], net: [] } },
  ];
};

async function expectServing(harness: HttpHarness, token?: string): Promise<void> {
  const client = await harness.connect(token);
  const result = await client.callTool({ name: 'execute_code', arguments: { code: 'return "alive"' } });
  expect(result.structuredContent).toMatchObject({ success: true, result: 'alive' });
}

describe('Streamable HTTP', () => {
  it('serves tools over an MCP session', async () => {
    h = await startHttpHarness();
    const client = await h.connect();
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('execute_code');
    const result = await client.callTool({ name: 'execute_code', arguments: { code: 'return 6 * 7' } });
    expect(result.structuredContent).toMatchObject({ success: true, result: 42 });
  });

  it('GET /healthz answers JSON with status, version, uptime and pool', async () => {
    h = await startHttpHarness();
    const res = await fetch(`${h.base}/healthz`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(await res.json()).toMatchObject({ status: 'ok', version: '0.0.0-test', uptime_s: expect.any(Number), pool: { threads: 1, queued: 0 } });
  });

  it('GET /metrics answers Prometheus text with calls, latency buckets, queue, workers, restarts, sessions', async () => {
    h = await startHttpHarness();
    const client = await h.connect();
    await client.callTool({ name: 'execute_code', arguments: { code: 'return 1' } });
    await client.callTool({ name: 'execute_code', arguments: {} });
    await expect(client.callTool({ name: 'made_up_tool_name', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    const res = await fetch(`${h.base}/metrics`);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toContain('code_exec_tool_calls_total{tool="execute_code",outcome="ok"} 1');
    expect(text).toContain('code_exec_tool_calls_total{tool="execute_code",outcome="invalid"} 1');
    // names of tools that do not exist never become labels (bounded cardinality)
    expect(text).toContain('code_exec_tool_calls_total{tool="(unknown)",outcome="invalid"} 1');
    expect(text).not.toContain('made_up_tool_name');
    expect(text).toMatch(/code_exec_execute_duration_seconds_bucket\{le="\+Inf"\} 1/);
    expect(text).toContain('# TYPE code_exec_execute_duration_seconds histogram');
    for (const name of ['code_exec_pool_queue_depth', 'code_exec_pool_workers', 'code_exec_pool_process_restarts_total', 'code_exec_sessions 1']) expect(text).toContain(name);
  });

  it('DELETE ends the session and later requests on it get 404', async () => {
    h = await startHttpHarness();
    const res = await fetch(h.url, { method: 'POST', headers: MCP_POST_HEADERS, body: JSON.stringify(INITIALIZE) });
    const id = res.headers.get('mcp-session-id');
    await res.body?.cancel();
    expect(id).toBeTruthy();
    expect(h.daemon.sessionCount).toBe(1);
    const del = await fetch(h.url, { method: 'DELETE', headers: { 'mcp-session-id': id!, 'mcp-protocol-version': '2025-06-18' } });
    expect(del.status).toBe(200);
    await vi.waitFor(() => expect(h!.daemon.sessionCount).toBe(0));
    const after = await fetch(h.url, { method: 'POST', headers: { ...MCP_POST_HEADERS, 'mcp-session-id': id! }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
    expect(after.status).toBe(404);
    expect(((await after.json()) as { error: { message: string } }).error.message).toMatch(/start a new session with initialize/);
  });

  it('closes sessions idle past server.sessionIdleSeconds', async () => {
    let clock = 0;
    h = await startHttpHarness({ now: () => clock, configure: (c) => (c.server = { ...c.server!, sessionIdleSeconds: 1 }) });
    await h.connect();
    expect(h.daemon.sessionCount).toBe(1);
    // the clock moves on each check: the client's event stream may touch the session late
    await vi.waitFor(
      () => {
        clock += 5_000;
        expect(h!.daemon.sessionCount).toBe(0);
      },
      { timeout: 10_000, interval: 100 },
    );
  });
});

describe('guards', () => {
  it('refuses a forbidden Host header with 403 JSON and keeps serving', async () => {
    h = await startHttpHarness();
    const res = await rawRequest(h.url, { method: 'POST', headers: { ...MCP_POST_HEADERS, Host: 'evil.example.com' }, body: JSON.stringify(INITIALIZE) });
    expect(res.status).toBe(403);
    expect((JSON.parse(res.body) as { error: string }).error).toMatch(/Host "evil.example.com" is not allowed.*allowedHosts/);
    await expectServing(h);
  });

  it('accepts a Host listed in allowedHosts', async () => {
    h = await startHttpHarness({ configure: (c) => (c.allowedHosts = ['mcp.internal']) });
    const res = await rawRequest(`${h.base}/healthz`, { headers: { Host: 'mcp.internal:7337' } });
    expect(res.status).toBe(200);
    const other = await rawRequest(`${h.base}/healthz`, { headers: { Host: 'other.internal' } });
    expect(other.status).toBe(403);
  });

  it('answers CORS for allowed origins: a preflight, and the session id exposed to the page', async () => {
    h = await startHttpHarness({ configure: (c) => (c.allowedOrigins = ['https://app.example.com']) });
    const origin = 'https://app.example.com';
    const preflight = await fetch(h.url, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type, mcp-session-id' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(origin);
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Mcp-Session-Id/);
    const init = await fetch(h.url, { method: 'POST', headers: { ...MCP_POST_HEADERS, Origin: origin }, body: JSON.stringify(INITIALIZE) });
    expect(init.status).toBe(200);
    expect(init.headers.get('access-control-allow-origin')).toBe(origin);
    expect(init.headers.get('access-control-expose-headers')).toMatch(/Mcp-Session-Id/);
    expect(init.headers.get('mcp-session-id')).toBeTruthy();
    const foreign = await fetch(h.url, { method: 'OPTIONS', headers: { Origin: 'https://evil.example.com' } });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses a foreign Origin, accepts loopback and configured origins', async () => {
    h = await startHttpHarness({ configure: (c) => (c.allowedOrigins = ['https://app.example.com']) });
    const evil = await fetch(`${h.base}/healthz`, { headers: { Origin: 'https://evil.example.com' } });
    expect(evil.status).toBe(403);
    expect(((await evil.json()) as { error: string }).error).toMatch(/allowedOrigins/);
    expect((await fetch(`${h.base}/healthz`, { headers: { Origin: 'http://localhost:6274' } })).status).toBe(200);
    expect((await fetch(`${h.base}/healthz`, { headers: { Origin: 'https://app.example.com' } })).status).toBe(200);
  });

  it('answers 401 with WWW-Authenticate for a missing or wrong token, and serves the right one', async () => {
    h = await startHttpHarness({ configure: withAgents });
    const missing = await fetch(h.url, { method: 'POST', headers: MCP_POST_HEADERS, body: JSON.stringify(INITIALIZE) });
    expect(missing.status).toBe(401);
    // error="invalid_token" with a description even without a token, and no resource_metadata:
    // an OAuth-aware client (Inspector 2.12) reports the header instead of starting OAuth.
    const challenge = missing.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer realm="code-execution-mcp", error="invalid_token", error_description="this daemon needs a bearer token; send 'Authorization: Bearer <token>'/);
    expect(challenge).not.toMatch(/resource_metadata/);
    expect(((await missing.json()) as { error: string }).error).toMatch(/needs a bearer token/);
    const wrong = await fetch(h.url, { method: 'POST', headers: { ...MCP_POST_HEADERS, Authorization: 'Bearer not-a-real-token-at-all' }, body: JSON.stringify(INITIALIZE) });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    const metrics = await fetch(`${h.base}/metrics`);
    expect(metrics.status).toBe(401);
    await expectServing(h, TOKEN_A);
  });

  it('does not let one token use another agent\'s session', async () => {
    h = await startHttpHarness({ configure: withAgents });
    const init = await fetch(h.url, { method: 'POST', headers: { ...MCP_POST_HEADERS, Authorization: `Bearer ${TOKEN_A}` }, body: JSON.stringify(INITIALIZE) });
    const id = init.headers.get('mcp-session-id')!;
    await init.body?.cancel();
    const hijack = await fetch(h.url, {
      method: 'POST',
      headers: { ...MCP_POST_HEADERS, Authorization: `Bearer ${TOKEN_B}`, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(hijack.status).toBe(404);
  });

  it('answers 413 for a body over maxBodyBytes', async () => {
    h = await startHttpHarness({ configure: (c) => (c.maxBodyBytes = 2048) });
    const big = { ...INITIALIZE, params: { ...INITIALIZE.params, padding: 'x'.repeat(10_000) } };
    const res = await fetch(h.url, { method: 'POST', headers: MCP_POST_HEADERS, body: JSON.stringify(big) });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/larger than 2048 bytes \(maxBodyBytes\)/);
    await expectServing(h);
  });

  it('answers malformed JSON, malformed JSON-RPC and missing sessions with JSON-RPC errors', async () => {
    h = await startHttpHarness();
    const badJson = await fetch(h.url, { method: 'POST', headers: MCP_POST_HEADERS, body: '{"jsonrpc": "2.0", ' });
    expect(badJson.status).toBe(400);
    expect(await badJson.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
    const notRpc = await fetch(h.url, { method: 'POST', headers: MCP_POST_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: 'nope' }) });
    expect(notRpc.status).toBeGreaterThanOrEqual(400);
    const noSession = await fetch(h.url, { method: 'POST', headers: MCP_POST_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    expect(noSession.status).toBe(400);
    expect(((await noSession.json()) as { error: { message: string } }).error.message).toMatch(/starts with an initialize request/);
    const unknown = await fetch(h.url, { method: 'POST', headers: { ...MCP_POST_HEADERS, 'mcp-session-id': 'no-such-session' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    expect(unknown.status).toBe(404);
    const notFound = await fetch(`${h.base}/other`);
    expect(notFound.status).toBe(404);
    await expectServing(h);
  });

  it('refuses to start on a non-loopback address without a token', async () => {
    const { services } = await buildServices({ configure: (c) => (c.host = '0.0.0.0') });
    const daemon = new HttpDaemon(services);
    await expect(daemon.listen()).rejects.toThrow(StartupError);
    await expect(daemon.listen()).rejects.toThrow(/non-loopback address needs a bearer token.*CODE_EXEC_TOKEN/);
    await daemon.shutdown(0);
  });
});

describe('agents', () => {
  it('20+ concurrent sessions each see only their own workspace namespace', async () => {
    const agents = Array.from({ length: 24 }, (_, i) => ({
      name: `agent${i}`,
      token: `token-for-agent-${i}-0123456789`,
      permissions: { workspace: 'read-write' as const, skills: 'read-write' as const, tools: ['*'], net: [] },
    }));
    h = await startHttpHarness({ configure: (c) => (c.agents = agents.map((a) => ({ ...a, workspace: a.name }))) });
    const harness = h;
    const results = await Promise.all(
      agents.map(async (agent) => {
        const client = await harness.connect(agent.token);
        await client.callTool({ name: 'write_workspace_file', arguments: { filename: 'mine.txt', content: agent.name } });
        const [listed, read, run] = await Promise.all([
          client.callTool({ name: 'list_workspace_files', arguments: {} }),
          client.callTool({ name: 'read_workspace_file', arguments: { filename: 'mine.txt' } }),
          client.callTool({ name: 'execute_code', arguments: { code: 'return identity.workspaceNamespace' } }),
        ]);
        return { agent: agent.name, listed: listed.structuredContent, read: read.structuredContent, run: run.structuredContent };
      }),
    );
    for (const r of results) {
      expect(r.listed).toMatchObject({ files: ['mine.txt'], count: 1 });
      expect(r.read).toMatchObject({ content: r.agent });
      expect(r.run).toMatchObject({ result: r.agent });
    }
  });

  it('a refused action names the missing permission', async () => {
    h = await startHttpHarness({ configure: withAgents });
    const bob = await h.connect(TOKEN_B);
    const result = await bob.callTool({ name: 'write_workspace_file', arguments: { filename: 'x.txt', content: 'x' } });
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0]?.text).toMatch(/needs the "workspace" permission "read-write", and agent "bob" has "read"/);
  });
});

describe('calls in flight', () => {
  it('a client whose connection drops mid-call does not cancel it: the call finishes, its answer kept for a resume', async () => {
    h = await startHttpHarness();
    const client = await h.connect();
    const started = h.executor.nextStart();
    const ended = h.executor.nextEnd();
    const pending = client.callTool({ name: 'execute_code', arguments: { code: 'await sleep(300); return "done"' } });
    pending.catch(() => undefined);
    await started;
    await client.close();
    expect(await ended).toMatchObject({ success: true, result: 'done' });
    await expectServing(h);
  });

  it('notifications/cancelled still cancels a call', async () => {
    h = await startHttpHarness();
    const client = await h.connect();
    const started = h.executor.nextStart();
    const ended = h.executor.nextEnd();
    const controller = new AbortController();
    const pending = client.callTool({ name: 'execute_code', arguments: { code: 'await sleep(60000)' } }, undefined, { signal: controller.signal });
    pending.catch(() => undefined);
    await started;
    controller.abort('changed my mind');
    expect(await ended).toMatchObject({ success: false, error_type: 'CancelledError' });
    await expectServing(h);
  });

  it('shutdown lets calls in flight finish, then refuses new requests', async () => {
    h = await startHttpHarness();
    const client = await h.connect();
    const started = h.executor.nextStart();
    const pending = client.callTool({ name: 'execute_code', arguments: { code: 'await sleep(300); return "finished"' } });
    await started;
    const stopped = h.daemon.shutdown(10_000);
    expect((await pending).structuredContent).toMatchObject({ success: true, result: 'finished' });
    await stopped;
    await expect(fetch(`${h.base}/healthz`)).rejects.toThrow();
  });

  it('shutdown cancels calls still running when the drain time is over', async () => {
    h = await startHttpHarness();
    const client = await h.connect();
    const started = h.executor.nextStart();
    const ended = h.executor.nextEnd();
    const pending = client.callTool({ name: 'execute_code', arguments: { code: 'await sleep(60000)' } });
    pending.catch(() => undefined);
    await started;
    await h.daemon.shutdown(50);
    expect(await ended).toMatchObject({ error_type: 'CancelledError' });
  });
});
