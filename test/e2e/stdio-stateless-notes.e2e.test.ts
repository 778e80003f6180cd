// Revision 2026-07-28 over embedded stdio: a stateless request's notifications follow its _meta,
// as over HTTP. Progress comes with a progressToken; a log message only when the request's
// _meta["io.modelcontextprotocol/logLevel"] asks for one at that level (none without it).

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { BIN, REPO, scratch } from '../fixtures/mcp/cli.js';
import type { Scratch } from '../fixtures/mcp/cli.js';

let home: Scratch;
beforeAll(() => {
  home = scratch();
});
afterAll(() => home?.remove());

it('sends a stateless request the log messages its logLevel asks for and none without one, progress either way', async () => {
  const proc = spawn(process.execPath, [BIN, 'stdio'], { cwd: REPO, env: { ...home.env, CODE_EXEC_SANDBOX_PROCESSES: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
  try {
    const frames: Record<string, unknown>[] = [];
    createInterface({ input: proc.stdout }).on('line', (line) => frames.push(JSON.parse(line) as Record<string, unknown>));
    const ask = async (id: string, meta: Record<string, unknown>): Promise<Record<string, unknown>[]> => {
      const from = frames.length;
      const params = { name: 'execute_code', arguments: { code: 'console.log("before"); throw new Error("boom")' }, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}, ...meta } };
      proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params })}\n`);
      await vi.waitFor(() => expect(frames.some((f) => f['id'] === id)).toBe(true), { timeout: 60_000, interval: 50 });
      return frames.slice(from);
    };
    const logs = (seen: Record<string, unknown>[]): unknown[] => seen.filter((f) => f['method'] === 'notifications/message').map((f) => (f['params'] as { level: string }).level);

    const quiet = await ask('no-level', { progressToken: 'q' });
    expect(quiet.at(-1)).toMatchObject({ id: 'no-level', result: { resultType: 'complete', isError: true } });
    expect(quiet.some((f) => f['method'] === 'notifications/progress' && (f['params'] as { message: string }).message === 'before')).toBe(true);
    expect(logs(quiet)).toEqual([]);

    const asked = await ask('warning-level', { progressToken: 'w', 'io.modelcontextprotocol/logLevel': 'warning' });
    expect(logs(asked)).toEqual(['warning']);
    const above = await ask('error-level', { 'io.modelcontextprotocol/logLevel': 'error' });
    expect(logs(above)).toEqual([]);
  } finally {
    proc.kill();
  }
}, 90_000);
