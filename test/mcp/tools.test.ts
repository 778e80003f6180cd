// Every MCP tool of the front, in process over the SDK's linked in-memory transports: results as
// structuredContent plus one identical text block, failures as clear isError results.

import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SANDBOX_API } from '../../workers/kit/api-contract.js';
import { startHarness, textOf } from '../fixtures/mcp/harness.js';
import type { Harness } from '../fixtures/mcp/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A hint as a client reads it: what the tool states, else MCP's default for an unstated hint. */
const HINT_DEFAULTS = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true } as const;
function hints(annotations: Record<string, unknown> | undefined): Record<keyof typeof HINT_DEFAULTS, unknown> {
  return { ...HINT_DEFAULTS, ...(annotations ?? {}) };
}

async function call(harness: Harness, name: string, args: Record<string, unknown> = {}) {
  return harness.client.callTool({ name, arguments: args });
}

describe('tools/list', () => {
  it('lists the seed tools with input and output schemas and truthful annotations', async () => {
    h = await startHarness();
    const { tools } = await h.client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of ['execute_code', 'write_workspace_file', 'read_workspace_file', 'list_workspace_files', 'delete_workspace_file', 'get_execution_stats']) {
      expect(names).toContain(name);
    }
    for (const tool of tools) {
      expect(tool.outputSchema, tool.name).toBeDefined();
      expect(tool.description, tool.name).toBeTruthy();
      // A hint equal to MCP's default is not stated (the client assumes it), so every hint reads as a boolean.
      for (const value of Object.values(hints(tool.annotations))) expect(value, tool.name).toBeTypeOf('boolean');
    }
    const execute = tools.find((t) => t.name === 'execute_code');
    const props = execute?.inputSchema.properties as Record<string, { default?: unknown; maximum?: number }>;
    // No default: omitted, the language is detected from the code (the seed's prompts never pass it).
    expect(props['language']?.default).toBeUndefined();
    expect(props['timeout_seconds']?.default).toBe(30);
    expect(props['timeout_seconds']?.maximum).toBe(300);
    expect(props['memory_mb']?.default).toBe(500);
    expect(execute?.inputSchema.required).toEqual(['code']);
    expect(hints(execute?.annotations)).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false });
    // Only what differs from MCP's defaults is listed.
    expect(execute?.annotations).toEqual({ openWorldHint: false });
    // However short, the description names every sandbox function and how a result is made.
    for (const api of SANDBOX_API.filter((x) => x.catalog)) expect(execute?.description, api.name).toContain(api.name);
    expect(execute?.description).toContain('`return X`');
    expect(execute?.description).toContain('tools.SERVER.TOOL(args)');
    const read = tools.find((t) => t.name === 'read_workspace_file');
    // MCP gives destructive/idempotent hints a meaning only for tools that write: not listed here.
    expect(read?.annotations).toEqual({ readOnlyHint: true, openWorldHint: false });
    const del = tools.find((t) => t.name === 'delete_workspace_file');
    expect(hints(del?.annotations)).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
  });
});

describe('execute_code', () => {
  it('returns the result as structuredContent and the same JSON as one text block', async () => {
    h = await startHarness();
    const result = await call(h, 'execute_code', { code: 'console.log("hi"); return answer * 2', context_vars: { answer: 21 } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ success: true, result: 42, output: ['hi'] });
    expect(result.content).toHaveLength(1);
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
  });

  it('applies the defaults and passes the caller identity to the executor', async () => {
    h = await startHarness({ namespace: 'alice' });
    await call(h, 'execute_code', { code: 'return 1' });
    const last = h.executor.calls.at(-1);
    expect(last?.request).toMatchObject({ language: 'javascript', timeoutSeconds: 30, memoryMb: 500 });
    expect(last?.identity).toMatchObject({ agent: 'tester', sessionId: 'test-session', workspaceNamespace: 'alice' });
  });

  it('reports failing code as an isError result that still carries the execution JSON', async () => {
    h = await startHarness();
    const result = await call(h, 'execute_code', { code: 'throw new TypeError("bad input")' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ success: false, error: 'bad input', error_type: 'TypeError' });
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
  });

  it('refuses a timeout_seconds above the configured cap, naming the argument and the cap', async () => {
    h = await startHarness({ configure: (c) => (c.limits.maxTimeoutSeconds = 10) });
    const result = await call(h, 'execute_code', { code: 'return 1', timeout_seconds: 11 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/timeout_seconds must be a number more than 0 and at most 10 \(seconds\)/);
    expect(h.executor.calls).toHaveLength(0);
  });

  it('refuses memory_mb out of range and non-integer', async () => {
    h = await startHarness();
    for (const memory_mb of [0, 4096, 12.5]) {
      const result = await call(h, 'execute_code', { code: 'return 1', memory_mb });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/memory_mb must be an integer at least 16 and at most 2048/);
    }
  });

  it('refuses code larger than limits.maxCodeBytes with a hint', async () => {
    h = await startHarness({ configure: (c) => (c.limits.maxCodeBytes = 100) });
    const result = await call(h, 'execute_code', { code: `return "${'x'.repeat(200)}"` });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/limits\.maxCodeBytes.*write_workspace_file/);
  });

  it('does not offer python when the configuration disables it', async () => {
    h = await startHarness({ configure: (c) => (c.sandbox.pythonProcesses = 0) });
    const result = await call(h, 'execute_code', { code: 'print(1)', language: 'python' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/language must be one of: javascript, typescript/);
  });
});

describe('bad arguments', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['execute_code', {}, /code is required/],
    ['execute_code', { code: 42 }, /code must be a string/],
    ['execute_code', { code: 'return 1', timeout_seconds: 'soon' }, /timeout_seconds must be a number/],
    ['execute_code', { code: 'return 1', language: 'ruby' }, /language must be one of: javascript, typescript, python/],
    ['execute_code', { code: 'return 1', context_vars: [1, 2] }, /context_vars must be an object/],
    ['execute_code', { code: 'return 1', timeout: 5 }, /execute_code does not take "timeout"; its arguments are: code, language, context_vars, timeout_seconds, memory_mb/],
    ['read_workspace_file', {}, /filename is required/],
    ['write_workspace_file', { filename: 'a.txt' }, /content is required/],
    ['list_workspace_files', { subpath: 3 }, /subpath must be a string/],
  ];
  it.each(cases)('%s %j is a clear isError result', async (tool, args, message) => {
    h ??= await startHarness();
    const result = await call(h, tool, args);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(message);
    // the server keeps serving
    const ok = await call(h, 'execute_code', { code: 'return "still here"' });
    expect(ok.structuredContent).toMatchObject({ success: true, result: 'still here' });
  });

  it('logs an unknown tool under the name asked for; the metrics keep one label for all of them', async () => {
    const records: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void records.push(JSON.parse(line) as Record<string, unknown>) });
    h = await startHarness({ logger });
    await call(h, 'run_python', { code: '1' }).catch(() => undefined);
    const line = records.find((r) => r.msg === 'tool call');
    expect(line).toMatchObject({ tool: 'run_python', unknown_tool: true, outcome: 'invalid' });
    expect(h.services.recorder.calls().map((c) => c.tool)).toEqual(['(unknown)']);
  });

  it('answers an unknown tool with a JSON-RPC error (-32602) naming it and the tools there are', async () => {
    h = await startHarness();
    await expect(call(h, 'run_python', { code: '1' })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(/^MCP error -32602: Unknown tool: run_python\. This server.s tools are: execute_code, .*search_tools.*tools\.SERVER\.TOOL/),
    });
  });
});

describe('workspace tools', () => {
  it('write, list, read and delete round trip', async () => {
    h = await startHarness();
    const written = await call(h, 'write_workspace_file', { filename: 'data/a.json', content: '{"x":1}' });
    expect(written.structuredContent).toMatchObject({ success: true });
    expect((written.structuredContent as { message: string }).message).toMatch(/7 bytes/);
    const listed = await call(h, 'list_workspace_files', {});
    expect(listed.structuredContent).toMatchObject({ success: true, path: '.', count: 1 });
    expect((listed.structuredContent as { files: string[] }).files).toEqual(['data/a.json']);
    const read = await call(h, 'read_workspace_file', { filename: 'data/a.json' });
    expect(read.structuredContent).toEqual({ success: true, filename: 'data/a.json', content: '{"x":1}', size: 7 });
    const deleted = await call(h, 'delete_workspace_file', { filename: 'data/a.json' });
    expect(deleted.structuredContent).toMatchObject({ success: true });
    const missing = await call(h, 'read_workspace_file', { filename: 'data/a.json' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/list_workspace_files/);
  });

  it('read_workspace_file pages a big file by offset and length (characters), never splitting a character', async () => {
    h = await startHarness();
    const content = JSON.stringify(Array.from({ length: 400 }, (_, i) => ({ i, s: 'é😀' })));
    await call(h, 'write_workspace_file', { filename: 'outputs/big.json', content });
    let offset: number | undefined = 0;
    let joined = '';
    let pages = 0;
    while (offset !== undefined) {
      const r = await call(h, 'read_workspace_file', { filename: 'outputs/big.json', offset, length: 1001 });
      const page = r.structuredContent as { content: string; offset: number; next_offset?: number; total_chars: number; size: number };
      expect(page).toMatchObject({ success: true, offset, total_chars: content.length, size: Buffer.byteLength(content) });
      expect(page.content).not.toMatch(/^[\udc00-\udfff]|[\ud800-\udbff]$/);
      joined += page.content;
      offset = page.next_offset;
      pages++;
    }
    expect(joined).toBe(content);
    expect(pages).toBeGreaterThan(content.length / 1001);
    const tail = await call(h, 'read_workspace_file', { filename: 'outputs/big.json', offset: content.length + 5 });
    expect(tail.structuredContent).toMatchObject({ content: '', offset: content.length, total_chars: content.length });
    const bad = await call(h, 'read_workspace_file', { filename: 'outputs/big.json', length: 0 });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/length must be an integer at least 1/);
  });

  it('refuses paths that leave the workspace', async () => {
    h = await startHarness();
    for (const filename of ['../escape.txt', '/etc/passwd']) {
      const result = await call(h, 'write_workspace_file', { filename, content: 'x' });
      expect(result.isError, filename).toBe(true);
      expect(textOf(result)).toMatch(/write_workspace_file failed/);
    }
  });

  it('names the missing permission when a read-only agent writes', async () => {
    h = await startHarness({ permissions: { workspace: 'read' } });
    const result = await call(h, 'write_workspace_file', { filename: 'a.txt', content: 'x' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/needs the "workspace" permission "read-write", and agent "tester" has "read"/);
    const listed = await call(h, 'list_workspace_files', {});
    expect(listed.isError).toBeFalsy();
  });

  it('refuses reads to an agent without workspace access', async () => {
    h = await startHarness({ permissions: { workspace: 'none' } });
    const result = await call(h, 'read_workspace_file', { filename: 'a.txt' });
    expect(textOf(result)).toMatch(/needs the "workspace" permission "read", and agent "tester" has "none"/);
  });
});

describe('get_execution_stats', () => {
  it('reports workspace, pool, calls by outcome, limits and capabilities to the operator', async () => {
    h = await startHarness({ permissions: { operator: true } });
    await call(h, 'write_workspace_file', { filename: 'a.txt', content: 'hello' });
    await call(h, 'execute_code', { code: 'return 1' });
    await call(h, 'execute_code', { code: 'throw new Error("x")' });
    await call(h, 'execute_code', {});
    const result = await call(h, 'get_execution_stats');
    const stats = result.structuredContent as Record<string, Record<string, unknown>>;
    expect(stats['workspace']).toMatchObject({ file_count: 1, total_bytes: 5, access: 'read-write' });
    expect(stats['pool']).toMatchObject({ completed: 1, failed: 1, queue: 0 });
    expect(stats['pool']?.['latency']).toMatchObject({ p50_ms: expect.any(Number), p99_ms: expect.any(Number) });
    expect(stats['calls']?.['by_outcome']).toMatchObject({ ok: 2, error: 1, invalid: 1 });
    expect(stats['limits']).toMatchObject({ max_timeout_seconds: 300, default_timeout_seconds: 30 });
    expect(stats['capabilities']).toMatchObject({ languages: ['javascript', 'typescript', 'python'], progress: true, cancellation: true });
  });
});
