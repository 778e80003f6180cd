// The real binary over stdio: the SDK client can call every tool, stdout carries nothing but the
// protocol, and @modelcontextprotocol/inspector's CLI (a client nobody here wrote) can list and
// call tools.

import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { BIN, REPO, scratch, startStdioClient } from '../fixtures/mcp/cli.js';
import type { Scratch } from '../fixtures/mcp/cli.js';

const SEED_TOOLS = [
  'execute_code',
  'search_tools',
  'get_tool_definition',
  'list_tool_categories',
  'save_skill',
  'load_skill',
  'list_skills',
  'delete_skill',
  'sanitize_pii',
  'restore_pii',
  'write_workspace_file',
  'read_workspace_file',
  'list_workspace_files',
  'delete_workspace_file',
  'get_execution_stats',
];

let home: Scratch;
let session: Awaited<ReturnType<typeof startStdioClient>>;
let client: Client;

beforeAll(async () => {
  home = scratch();
  session = await startStdioClient(home.env);
  client = session.client;
});

afterAll(async () => {
  await session?.close();
  home?.remove();
});

describe('code-execution-mcp stdio', () => {
  it('lists every seed tool', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...SEED_TOOLS].sort());
  });

  it('runs code in the real sandbox', async () => {
    const result = await client.callTool({ name: 'execute_code', arguments: { code: 'console.log("from the sandbox"); return [1, 2, 3].map((x) => x * 2)' } });
    expect(result.structuredContent).toMatchObject({ success: true, result: [2, 4, 6], output: ['from the sandbox'] });
  });

  it('keeps files in the workspace for code and tools alike', async () => {
    await client.callTool({ name: 'write_workspace_file', arguments: { filename: 'in.json', content: '[{"v":1},{"v":5}]' } });
    const result = await client.callTool({
      name: 'execute_code',
      arguments: { code: 'const rows = JSON.parse(await read_file("in.json")); await write_file("out.txt", String(rows.length)); return rows.filter((r) => r.v > 2)' },
    });
    expect(result.structuredContent).toMatchObject({ success: true, result: [{ v: 5 }] });
    const read = await client.callTool({ name: 'read_workspace_file', arguments: { filename: 'out.txt' } });
    expect(read.structuredContent).toMatchObject({ content: '2', size: 1 });
  });

  it('searches the catalog and returns a definition with a TypeScript signature', async () => {
    const found = await client.callTool({ name: 'search_tools', arguments: { query: 'read a file', limit: 3 } });
    expect((found.structuredContent as { count: number }).count).toBeGreaterThan(0);
    const categories = await client.callTool({ name: 'list_tool_categories', arguments: {} });
    expect((categories.structuredContent as { total_tools: number }).total_tools).toBeGreaterThan(10);
    const unknown = await client.callTool({ name: 'get_tool_definition', arguments: { tool_name: 'raed_file' } });
    expect(unknown.isError).toBe(true);
    expect((unknown.content as { text: string }[])[0]?.text).toMatch(/Did you mean/);
  });

  it('saves, lists, loads and deletes a skill', async () => {
    const saved = await client.callTool({ name: 'save_skill', arguments: { name: 'double_all', code: 'export function double(xs) { return xs.map((x) => x * 2); }', description: 'doubles numbers' } });
    expect(saved.structuredContent).toMatchObject({ success: true, name: 'double_all' });
    expect(saved.structuredContent).not.toHaveProperty('path');
    const listed = await client.callTool({ name: 'list_skills', arguments: {} });
    expect((listed.structuredContent as { skills: { name: string }[] }).skills.map((s) => s.name)).toContain('double_all');
    const loaded = await client.callTool({ name: 'load_skill', arguments: { name: 'double_all' } });
    expect((loaded.structuredContent as { code: string }).code).toContain('export function double');
    const deleted = await client.callTool({ name: 'delete_skill', arguments: { name: 'double_all' } });
    expect(deleted.structuredContent).toMatchObject({ success: true });
  });

  it('sanitizes and restores PII in the session', async () => {
    const sanitized = await client.callTool({ name: 'sanitize_pii', arguments: { text: 'write to ann@example.org' } });
    const text = (sanitized.structuredContent as { sanitized_text: string }).sanitized_text;
    expect(text).not.toContain('ann@example.org');
    const restored = await client.callTool({ name: 'restore_pii', arguments: { text } });
    expect(restored.structuredContent).toEqual({ restored_text: 'write to ann@example.org' });
  });

  it('reports stats', async () => {
    const stats = await client.callTool({ name: 'get_execution_stats', arguments: {} });
    expect(stats.structuredContent).toMatchObject({ pool: { threads: expect.any(Number) }, server: { transport: 'stdio', agent: 'local' } });
  });

  it('answers bad arguments with isError and keeps serving', async () => {
    const bad = await client.callTool({ name: 'execute_code', arguments: { code: 1 } });
    expect(bad.isError).toBe(true);
    const ok = await client.callTool({ name: 'execute_code', arguments: { code: 'return "ok"' } });
    expect(ok.structuredContent).toMatchObject({ result: 'ok' });
  });

  it('writes nothing but protocol on stdout', () => {
    expect(session.errors).toEqual([]);
    // logs went to stderr instead
    expect(session.stderr.join('')).toMatch(/"msg":"serving MCP on stdio"/);
  });
});

describe('revision 2026-07-28 over stdio (no initialize)', () => {
  it('answers server/discover and stateless tool calls, and refuses removed methods', async () => {
    const proc = spawn(process.execPath, [BIN, 'stdio'], { cwd: REPO, env: { ...home.env, CODE_EXEC_SANDBOX_PROCESSES: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    try {
      const answers = new Map<unknown, Record<string, unknown>>();
      createInterface({ input: proc.stdout }).on('line', (line) => {
        const message = JSON.parse(line) as Record<string, unknown>;
        answers.set(message['id'], message);
      });
      const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
      const ask = async (id: number, method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> => {
        proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } })}\n`);
        await vi.waitFor(() => expect(answers.has(id)).toBe(true), { timeout: 60_000, interval: 50 });
        return answers.get(id)!;
      };
      expect(await ask(1, 'server/discover')).toMatchObject({ result: { supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, resultType: 'complete', cacheScope: 'private' } });
      expect(await ask(2, 'tools/call', { name: 'execute_code', arguments: { code: 'return 20 + 1' } })).toMatchObject({ result: { resultType: 'complete', structuredContent: { success: true, result: 21 } } });
      expect(await ask(3, 'tools/list')).toMatchObject({ result: { resultType: 'complete', ttlMs: 0 } });
      expect(await ask(4, 'ping')).toMatchObject({ error: { code: -32601 } });
    } finally {
      proc.kill();
    }
  }, 90_000);
});

describe('@modelcontextprotocol/inspector CLI', () => {
  const inspector = path.join(REPO, 'node_modules/.bin/mcp-inspector');
  const runInspector = (args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      const proc = spawn(inspector, ['--cli', process.execPath, BIN, 'stdio', ...args], { cwd: REPO, env: { ...home.env, CODE_EXEC_SANDBOX_PROCESSES: '1' } });
      let stdout = '';
      let stderr = '';
      proc.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
      proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      proc.once('close', (code) => resolve({ code, stdout, stderr }));
    });

  it('lists the tools', async () => {
    const { code, stdout, stderr } = await runInspector(['--method', 'tools/list']);
    expect(code, stderr).toBe(0);
    const listed = JSON.parse(stdout) as { tools: { name: string; inputSchema: unknown; outputSchema?: unknown }[] };
    expect(listed.tools.map((t) => t.name)).toEqual(expect.arrayContaining(SEED_TOOLS));
    expect(listed.tools.every((t) => t.outputSchema !== undefined)).toBe(true);
  }, 90_000);

  it('calls execute_code', async () => {
    const { code, stdout, stderr } = await runInspector(['--method', 'tools/call', '--tool-name', 'execute_code', '--tool-arg', 'code=return 40 + 2']);
    expect(code, stderr).toBe(0);
    const result = JSON.parse(stdout) as { structuredContent: unknown };
    expect(result.structuredContent).toMatchObject({ success: true, result: 42 });
  }, 90_000);
});
