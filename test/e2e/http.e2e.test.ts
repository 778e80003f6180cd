// The real daemon (`serve --port 0`) over Streamable HTTP with the SDK client: many agents at
// once in their own namespaces, one agent's runaway code not failing another's call, bad input
// answered clearly while serving on, progress, cancellation, and the stdio bridge.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { scratch, startDaemon, startStdioClient } from '../fixtures/mcp/cli.js';
import type { Daemon, Scratch } from '../fixtures/mcp/cli.js';
import { INITIALIZE, MCP_POST_HEADERS, rawRequest } from '../fixtures/mcp/http-harness.js';

// agent0 is the operator: it reads /metrics.
const AGENTS = Array.from({ length: 24 }, (_, i) => ({ name: `agent${i}`, token: `e2e-token-agent-${i}-0123456789abcdef`, ...(i === 0 ? { permissions: { operator: true } } : {}) }));
const READER = { name: 'reader', token: 'e2e-token-reader-0123456789abcdef', permissions: { workspace: 'read', skills: 'read' } };
const TOKEN = AGENTS[0]!.token;

let home: Scratch;
let daemon: Daemon;

beforeAll(async () => {
  home = scratch();
  const config = home.writeConfig({ maxBodyBytes: 65_536, agents: [...AGENTS, READER] });
  daemon = await startDaemon({ ...home.env, CODE_EXEC_CONFIG: config, CODE_EXEC_SANDBOX_PROCESSES: '3' });
}, 60_000);

afterAll(async () => {
  await daemon?.stop();
  home?.remove();
});

async function expectHealthy(): Promise<void> {
  const health = (await (await fetch(`${daemon.base}/healthz`)).json()) as { status: string };
  expect(health.status).toBe('ok');
  const client = await daemon.connect(TOKEN);
  const result = await client.callTool({ name: 'execute_code', arguments: { code: 'return "still serving"' } });
  expect(result.structuredContent).toMatchObject({ success: true, result: 'still serving' });
  await client.close();
}

describe('serve over Streamable HTTP', () => {
  it('serves health, metrics and tools', async () => {
    // The figures are the operator's (agent0); anyone else learns only the status.
    expect(await (await fetch(`${daemon.base}/healthz`)).json()).toEqual({ status: 'ok', details: expect.any(String) });
    const health = await fetch(`${daemon.base}/healthz`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(await health.json()).toMatchObject({ status: 'ok', version: expect.any(String), uptime_s: expect.any(Number), pool: { processes: 3 } });
    const client = await daemon.connect(TOKEN);
    expect((await client.listTools()).tools.length).toBe(15);
    const result = await client.callTool({ name: 'execute_code', arguments: { code: 'return 2 ** 10' } });
    expect(result.structuredContent).toMatchObject({ success: true, result: 1024 });
    const metrics = await (await fetch(`${daemon.base}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } })).text();
    expect(metrics).toMatch(/code_exec_tool_calls_total\{tool="execute_code",outcome="ok"\} \d+/);
    expect(metrics).toMatch(/code_exec_pool_workers 3/);
    await client.close();
  });

  it('24 agents at once each see only their own workspace namespace', async () => {
    const results = await Promise.all(
      AGENTS.map(async (agent) => {
        const client = await daemon.connect(agent.token);
        const run = await client.callTool({
          name: 'execute_code',
          arguments: { code: `await write_file("who.txt", ${JSON.stringify(agent.name)}); await sleep(100); return { files: await list_files(), who: await read_file("who.txt"), ns: workspace }` },
        });
        const listed = await client.callTool({ name: 'list_workspace_files', arguments: {} });
        await client.close();
        return { agent: agent.name, run: run.structuredContent, listed: listed.structuredContent };
      }),
    );
    for (const r of results) {
      expect(r.run, r.agent).toMatchObject({ success: true, result: { files: ['who.txt'], who: r.agent } });
      expect(r.listed, r.agent).toMatchObject({ files: ['who.txt'], count: 1 });
    }
  }, 120_000);

  it("one agent's infinite loop, memory bomb and process-killing allocation do not fail others' calls", async () => {
    const [looper, hog, killer, ...others] = await Promise.all(AGENTS.slice(0, 9).map((a) => daemon.connect(a.token)));
    const bad = Promise.all([
      looper!.callTool({ name: 'execute_code', arguments: { code: 'for (;;) {}', timeout_seconds: 3 } }),
      hog!.callTool({ name: 'execute_code', arguments: { code: 'const a = []; for (;;) a.push(new Array(1e5).fill(1))', memory_mb: 64 } }),
      killer!.callTool({ name: 'execute_code', arguments: { code: 'new Array(1e9).fill(0); return 1', memory_mb: 64 } }),
    ]);
    const good = Promise.all(
      others.map((client, i) => client.callTool({ name: 'execute_code', arguments: { code: `await sleep(200); return ${i}`, timeout_seconds: 60 } })),
    );
    const [[loop, memory, fatal], fine] = await Promise.all([bad, good]);
    expect(loop!.structuredContent).toMatchObject({ success: false, error_type: 'TimeoutError' });
    expect(memory!.structuredContent).toMatchObject({ success: false, error_type: 'MemoryLimitError' });
    expect(fatal!.structuredContent).toMatchObject({ success: false });
    fine.forEach((result, i) => expect(result.structuredContent).toMatchObject({ success: true, result: i }));
    await Promise.all([looper, hog, killer, ...others].map((c) => c!.close()));
    await expectHealthy();
  }, 120_000);
});

describe('bad input gets a clear error and the daemon keeps serving', () => {
  it('malformed JSON and JSON-RPC', async () => {
    const headers = { ...MCP_POST_HEADERS, Authorization: `Bearer ${TOKEN}` };
    const notJson = await fetch(daemon.url, { method: 'POST', headers, body: '{"jsonrpc":' });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({ error: { code: -32700, message: expect.stringMatching(/not valid JSON/) } });
    const notRpc = await fetch(daemon.url, { method: 'POST', headers, body: JSON.stringify({ hello: 'world', method: 'initialize' }) });
    expect(notRpc.status).toBe(400);
    await expectHealthy();
  });

  it('unknown tools and wrong argument types', async () => {
    const client = await daemon.connect(TOKEN);
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(/Unknown tool: no_such_tool\. This server.s tools are: .*execute_code/),
    });
    const wrong = await client.callTool({ name: 'execute_code', arguments: { code: 'return 1', timeout_seconds: '30' } });
    expect(wrong.isError).toBe(true);
    expect((wrong.content as { text: string }[])[0]?.text).toMatch(/timeout_seconds must be a number/);
    await client.close();
    await expectHealthy();
  });

  it('oversized bodies', async () => {
    const body = JSON.stringify({ ...INITIALIZE, params: { ...INITIALIZE.params, pad: 'x'.repeat(100_000) } });
    const res = await fetch(daemon.url, { method: 'POST', headers: { ...MCP_POST_HEADERS, Authorization: `Bearer ${TOKEN}` }, body });
    expect(res.status).toBe(413);
    await expectHealthy();
  });

  it('missing and wrong tokens', async () => {
    const missing = await fetch(daemon.url, { method: 'POST', headers: MCP_POST_HEADERS, body: JSON.stringify(INITIALIZE) });
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const wrong = await fetch(daemon.url, { method: 'POST', headers: { ...MCP_POST_HEADERS, Authorization: 'Bearer wrong-token-wrong-token' }, body: JSON.stringify(INITIALIZE) });
    expect(wrong.status).toBe(401);
    await expectHealthy();
  });

  it('forbidden Host and Origin', async () => {
    const host = await rawRequest(`${daemon.base}/healthz`, { headers: { Host: 'attacker.example' } });
    expect(host.status).toBe(403);
    expect(JSON.parse(host.body)).toMatchObject({ error: expect.stringMatching(/DNS rebinding/) });
    const origin = await fetch(`${daemon.base}/healthz`, { headers: { Origin: 'https://attacker.example' } });
    expect(origin.status).toBe(403);
    await expectHealthy();
  });

  it('permission denials name the missing permission, in tools and in code', async () => {
    const reader = await daemon.connect(READER.token);
    const tool = await reader.callTool({ name: 'write_workspace_file', arguments: { filename: 'x.txt', content: 'x' } });
    expect((tool.content as { text: string }[])[0]?.text).toMatch(/needs the "workspace" permission "read-write", and agent "reader" has "read"/);
    const skill = await reader.callTool({ name: 'save_skill', arguments: { name: 'nope', code: 'export const x = 1' } });
    expect((skill.content as { text: string }[])[0]?.text).toMatch(/needs the "skills" permission "read-write"/);
    const code = await reader.callTool({ name: 'execute_code', arguments: { code: 'await write_file("x.txt", "x")' } });
    expect(code.structuredContent).toMatchObject({ success: false, error_type: 'PermissionError' });
    expect((code.structuredContent as { error: string }).error).toMatch(/read-write/);
    await reader.close();
    await expectHealthy();
  });
});

describe('long calls', () => {
  it('reports progress with output lines as they are printed', async () => {
    const client = await daemon.connect(TOKEN);
    const seen: Progress[] = [];
    const result = await client.callTool(
      { name: 'execute_code', arguments: { code: 'for (let i = 0; i < 3; i++) { console.log(`step ${i}`); await sleep(400); } return "done"' } },
      undefined,
      { onprogress: (p) => seen.push(p) },
    );
    expect(result.structuredContent).toMatchObject({ success: true, result: 'done' });
    const messages = seen.map((p) => p.message);
    expect(messages).toEqual(expect.arrayContaining(['step 0', 'step 1', 'step 2']));
    await client.close();
  });

  it('notifications/cancelled stops a runaway call and frees its worker', async () => {
    const client = await daemon.connect(TOKEN);
    const abort = new AbortController();
    const pending = client.callTool(
      { name: 'execute_code', arguments: { code: 'console.log("started"); await sleep(50); for (;;) {}', timeout_seconds: 120 } },
      undefined,
      {
        signal: abort.signal,
        onprogress: (p) => {
          if (p.message === 'started') abort.abort('stop');
        },
      },
    );
    await expect(pending).rejects.toThrow();
    await vi.waitFor(async () => {
      const stats = await client.callTool({ name: 'get_execution_stats', arguments: {} });
      expect((stats.structuredContent as { calls: { by_outcome: Record<string, number> } }).calls.by_outcome['cancelled']).toBeGreaterThanOrEqual(1);
    });
    const next = await client.callTool({ name: 'execute_code', arguments: { code: 'return "next"' } });
    expect(next.structuredContent).toMatchObject({ result: 'next' });
    await client.close();
  }, 60_000);

  it('a client whose connection drops mid-call does not cancel it: the call runs to its end', async () => {
    const client = await daemon.connect(AGENTS[5]!.token);
    const before = await metricValue('code_exec_tool_calls_total{tool="execute_code",outcome="ok"}');
    let started: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (started = resolve));
    const pending = client.callTool({ name: 'execute_code', arguments: { code: 'console.log("started"); await sleep(1500)', timeout_seconds: 120 } }, undefined, {
      onprogress: (p) => p.message === 'started' && started(),
    });
    pending.catch(() => undefined);
    await running;
    await client.close();
    await vi.waitFor(async () => expect(await metricValue('code_exec_tool_calls_total{tool="execute_code",outcome="ok"}')).toBe(before + 1), { timeout: 20_000 });
  }, 60_000);
});

describe('stdio --connect bridge', () => {
  it('lets a stdio client use the daemon as its agent', async () => {
    const bridge = await startStdioClient({ ...home.env, CODE_EXEC_TOKEN: AGENTS[7]!.token }, ['--connect', daemon.url]);
    expect((await bridge.client.listTools()).tools.map((t) => t.name)).toContain('execute_code');
    const run = await bridge.client.callTool({ name: 'execute_code', arguments: { code: 'await write_file("via-bridge.txt", "hi"); return workspace' } });
    expect(run.structuredContent).toMatchObject({ success: true });
    const seen: Progress[] = [];
    await bridge.client.callTool({ name: 'execute_code', arguments: { code: 'console.log("bridged line"); await sleep(100)' } }, undefined, { onprogress: (p) => seen.push(p) });
    expect(seen.map((p) => p.message)).toContain('bridged line');
    // the same agent over HTTP sees the file: one daemon, one namespace
    const direct = await daemon.connect(AGENTS[7]!.token);
    const read = await direct.callTool({ name: 'read_workspace_file', arguments: { filename: 'via-bridge.txt' } });
    expect(read.structuredContent).toMatchObject({ content: 'hi' });
    await direct.close();
    await bridge.close();
    expect(bridge.errors).toEqual([]);
  }, 60_000);

  it('answers requests with a clear error when the daemon cannot be reached', async () => {
    const bridge = startStdioClient({ ...home.env, CODE_EXEC_TOKEN: TOKEN }, ['--connect', 'http://127.0.0.1:9/mcp']);
    await expect(bridge).rejects.toThrow(/did not answer.*code-execution-mcp serve/);
  }, 60_000);
});

async function metricValue(series: string): Promise<number> {
  const text = await (await fetch(`${daemon.base}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}
