// The bridge (`stdio --connect`) answers every request whatever the timing of stdin: requests
// written right behind initialize, before its answer, are answered in the client's session (which
// the bridge keeps: the daemon holds none), and input that ends right after them still gets every
// answer before the bridge exits.

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BIN, REPO, scratch, startDaemon } from '../fixtures/mcp/cli.js';
import type { Daemon, Scratch } from '../fixtures/mcp/cli.js';

let home: Scratch;
let daemon: Daemon;

beforeAll(async () => {
  home = scratch({ CODE_EXEC_SANDBOX_PROCESSES: '1' });
  daemon = await startDaemon(home.env);
}, 60_000);

afterAll(async () => {
  await daemon?.stop();
  home?.remove();
});

it('answers requests written before the initialize reply, with stdin closed right after them, and opens no daemon session', async () => {
  // A drain bound no loaded machine reaches: this is about the order of events, not the bound.
  const env = { ...home.env, CODE_EXEC_DRAIN_SECONDS: '120' };
  const proc = spawn(process.execPath, [BIN, 'stdio', '--connect', daemon.url], { cwd: REPO, env, stdio: ['pipe', 'pipe', 'pipe'] });
  const answers = new Map<unknown, Record<string, unknown>>();
  createInterface({ input: proc.stdout }).on('line', (line) => {
    const message = JSON.parse(line) as Record<string, unknown>;
    if ('id' in message) answers.set(message['id'], message);
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', resolve));
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  const burst = [
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'burst', version: '1' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'execute_code', arguments: { code: 'await sleep(300); return 6 * 7' } } },
    { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'list_workspace_files', arguments: {} } },
    { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'execute_code', arguments: { code: 'return "stateless"' }, _meta: meta } },
  ];
  proc.stdin.end(burst.map((m) => `${JSON.stringify(m)}\n`).join(''));
  expect(await exited).toBe(0);
  expect(answers.get(1)).toMatchObject({ result: { protocolVersion: '2025-11-25' } });
  expect((answers.get(2)?.['result'] as { tools: { name: string }[] }).tools.map((t) => t.name)).toContain('execute_code');
  expect(answers.get(3)).toMatchObject({ result: { structuredContent: { success: true, result: 42 } } });
  expect(answers.get(4)).toMatchObject({ result: { structuredContent: { success: true } } });
  expect(answers.get(5)).toMatchObject({ result: { resultType: 'complete', structuredContent: { result: 'stateless' } } });
  expect(daemon.logs.filter((l) => l.msg === 'session opened')).toHaveLength(0);
}, 150_000);
