// The Python snapshot is made before the first Python call needs it: `serve` starts making it in
// the background right after it listens, on a new data folder; /healthz says Python is warming and
// when it is expected to be ready; a Python call made at once waits for that one make (its result
// says so in sandbox_start_wait_ms) instead of making a second copy; then one interpreter starts
// from the snapshot, and Python is ready only once it has: the first call after that waits for none.

import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { scratch, startDaemon } from '../fixtures/mcp/cli.js';
import type { Daemon, Scratch } from '../fixtures/mcp/cli.js';

let home: Scratch | undefined;
let daemon: Daemon | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  home?.remove();
  home = undefined;
});

interface Health {
  status: string;
  warming?: string[];
  python?: { state: string; ready: boolean; eta_s?: number };
  processes?: Record<string, { alive: number; ready: number }>;
}

async function health(base: string): Promise<Health> {
  return (await (await fetch(`${base}/healthz`)).json()) as Health;
}

describe('Python warm-up after serve listens', () => {
  it('makes the snapshot in the background once; a call made at once waits for it and says so; /healthz says when Python is ready', async () => {
    home = scratch({ CODE_EXEC_PYTHON_PROCESSES: '1', CODE_EXEC_SANDBOX_PROCESSES: '1' });
    const dataDir = path.join(home.dir, 'data');
    daemon = await startDaemon({ ...home.env, CODE_EXEC_DATA_DIR: dataDir });
    const first = await health(daemon.base);
    expect(first).toMatchObject({ status: 'ok', warming: ['python'], python: { state: 'warming', ready: false, eta_s: expect.any(Number) } });
    expect(first.python?.eta_s).toBeGreaterThanOrEqual(1);

    const client = await daemon.connect();
    const result = (await client.callTool({ name: 'execute_code', arguments: { code: 'result = 6 * 7', language: 'python', timeout_seconds: 5 } }, undefined, { timeout: 180_000 })).structuredContent as Record<string, unknown>;
    expect(result).toMatchObject({ success: true, result: 42 });
    expect(result['sandbox_start_wait_ms']).toBeGreaterThan(0);

    await vi.waitFor(async () => expect(await health(daemon!.base)).toMatchObject({ status: 'ok', python: { state: 'ready', ready: true } }), { timeout: 60_000, interval: 200 });
    expect((await health(daemon.base)).warming).toBeUndefined();
    // One make: the background maker's, timed for the next estimate; no lock or mark left behind.
    expect(daemon.logs.filter((l) => l['code'] === 'PYTHON_READY')).toHaveLength(1);
    const cache = path.join(dataDir, '.cache', 'python');
    expect(readdirSync(cache).sort()).toEqual(['last-make-ms', expect.stringMatching(/^pyodide-.*\.snap$/)]);
    expect(existsSync(path.join(cache, 'last-make-ms'))).toBe(true);
  }, 240_000);

  it('starts one interpreter from the new snapshot before any call: the first Python call finds it warm', async () => {
    home = scratch({ CODE_EXEC_PYTHON_PROCESSES: '1', CODE_EXEC_SANDBOX_PROCESSES: '1' });
    daemon = await startDaemon({ ...home.env, CODE_EXEC_DATA_DIR: path.join(home.dir, 'data') });
    await vi.waitFor(async () => expect(await health(daemon!.base)).toMatchObject({ python: { state: 'ready', ready: true } }), { timeout: 120_000, interval: 200 });
    // Ready means an interpreter is: its process is up before any call was made.
    expect((await health(daemon.base)).processes?.['python']).toMatchObject({ alive: 1, ready: 1 });

    const client = await daemon.connect();
    const result = (await client.callTool({ name: 'execute_code', arguments: { code: 'result = 6 * 7', language: 'python', timeout_seconds: 5 } })).structuredContent as Record<string, unknown>;
    expect(result).toMatchObject({ success: true, result: 42 });
    expect(result['sandbox_start_wait_ms']).toBeUndefined();
    expect(daemon.logs.filter((l) => l['code'] === 'PYTHON_READY')).toHaveLength(1);
  }, 240_000);
});
