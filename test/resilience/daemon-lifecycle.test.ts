// The real daemon process under the faults that lose data: kill -9 in the middle of overwrites
// (the last acknowledged version must survive whole), SIGTERM with calls in flight (every call is
// answered, none left to the client's own timeout), and a full quota (a clear refusal, never
// "internal error").

import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Daemon, Scratch } from '../fixtures/mcp/cli.js';
import { scratch, startDaemon, startStdioClient } from '../fixtures/mcp/cli.js';
import { within } from './helpers.js';

let home: Scratch | undefined;
let daemon: Daemon | undefined;

afterEach(async () => {
  await daemon?.stop('SIGKILL');
  daemon = undefined;
  home?.remove();
  home = undefined;
});

const PAD = 'x'.repeat(256 * 1024);
const VERSION_RE = /^v(\d+)\|x{262144}\|end$/;

/** Resolves once /healthz counts `n` calls running or queued (a daemon without tokens shows its figures to everyone). */
async function callsHeld(base: string, n: number): Promise<void> {
  for (;;) {
    const health = (await (await fetch(`${base}/healthz`)).json()) as { pool?: { busy: number; queued: number } };
    if (health.pool && health.pool.busy + health.pool.queued >= n) return;
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function findFile(root: string, name: string): Promise<string | undefined> {
  const entries = await readdir(root, { recursive: true });
  const hit = entries.find((e) => path.basename(e) === name);
  return hit === undefined ? undefined : path.join(root, hit);
}

describe('kill -9 during overwrites', () => {
  it('leaves the last acknowledged version (or a later one) whole, every time', async () => {
    home = scratch();
    const rounds = 3;
    for (let round = 0; round < rounds; round++) {
      daemon = await startDaemon(home.env);
      const client = await daemon.connect();
      let acked = -1;
      let next = round * 10_000;
      let killed = false;
      const writer = (async () => {
        while (!killed) {
          const n = next++;
          try {
            const r = await client.callTool({ name: 'write_workspace_file', arguments: { filename: 'durable.txt', content: `v${n}|${PAD}|end` } });
            if (!r.isError) acked = n;
          } catch {
            return; // the daemon is gone
          }
        }
      })();
      // Let some writes be acknowledged, then kill in the middle of the next ones.
      await within(
        (async () => {
          while (acked < round * 10_000 + 3) await new Promise((r) => setTimeout(r, 10));
        })(),
        20_000,
        'first acknowledged writes',
      );
      await new Promise((r) => setTimeout(r, 50 + round * 37));
      killed = true;
      daemon.proc.kill('SIGKILL');
      await daemon.exited;
      // The write in flight has no one to answer it: closing the client ends it at once.
      await client.close();
      await within(writer, 10_000, 'the writer noticing the daemon is gone');
      daemon = undefined;
      const file = await findFile(path.join(home.dir, 'workspace'), 'durable.txt');
      expect(file).toBeDefined();
      const content = await readFile(file!, 'utf8');
      const match = VERSION_RE.exec(content);
      expect(match, `round ${round}: the file is not one whole version (${content.length} chars)`).not.toBeNull();
      expect(Number(match![1])).toBeGreaterThanOrEqual(acked);
    }
  }, 120_000);
});

describe('SIGTERM with calls in flight', () => {
  it('answers every call, the ones cancelled after the drain window included, then exits 0', async () => {
    home = scratch({ CODE_EXEC_DRAIN_SECONDS: '1' });
    daemon = await startDaemon(home.env);
    const client = await daemon.connect();
    const long = Array.from({ length: 3 }, () =>
      client
        .callTool({ name: 'execute_code', arguments: { code: 'await sleep(30000); return "late"', timeout_seconds: 60 } }, undefined, { timeout: 60_000 })
        .then((r) => ({ answered: 'result' as const, text: JSON.stringify(r) }), (e: unknown) => ({ answered: 'error' as const, text: (e as Error).message })),
    );
    // SIGTERM once the daemon holds all three calls (a fixed pause let a loaded CI send it before
    // the third POST arrived: that one then failed to connect, which says nothing about shutdown).
    await within(callsHeld(daemon.base, 3), 15_000, 'the daemon holding the three calls');
    daemon.proc.kill('SIGTERM');
    const answers = await within(Promise.all(long), 15_000, 'answers to the calls cancelled by shutdown');
    for (const a of answers) expect(a.text).toMatch(/shutting down/);
    expect(await within(daemon.exited, 15_000, 'the daemon exiting')).toBe(0);
  }, 60_000);
});

describe('SIGTERM of the stdio server with a call in flight', () => {
  it('answers the call it cancels before exiting', async () => {
    home = scratch({ CODE_EXEC_DRAIN_SECONDS: '1' });
    const stdio = await startStdioClient(home.env);
    try {
      const answer = stdio.client
        .callTool({ name: 'execute_code', arguments: { code: 'await sleep(30000); return "late"', timeout_seconds: 60 } }, undefined, { timeout: 60_000 })
        .then((r) => JSON.stringify(r), (e: unknown) => (e as Error).message);
      await new Promise((r) => setTimeout(r, 500));
      const pid = (stdio.client.transport as StdioClientTransport).pid;
      expect(pid).toBeTypeOf('number');
      process.kill(pid!, 'SIGTERM');
      expect(await within(answer, 15_000, 'an answer to the cancelled call')).toMatch(/shutting down/);
    } finally {
      await stdio.close();
    }
  }, 60_000);
});

describe('quota over MCP', () => {
  it('a write past the quota is refused with a message that says what to do', async () => {
    home = scratch({ CODE_EXEC_WORKSPACE_QUOTA_BYTES: '100000' });
    daemon = await startDaemon(home.env);
    const client = await daemon.connect();
    const ok = await client.callTool({ name: 'write_workspace_file', arguments: { filename: 'a.txt', content: 'x'.repeat(60_000) } });
    expect(ok.isError).toBeFalsy();
    const refused = await client.callTool({ name: 'write_workspace_file', arguments: { filename: 'b.txt', content: 'x'.repeat(60_000) } });
    expect(refused.isError).toBe(true);
    const text = JSON.stringify(refused.content);
    expect(text).toMatch(/workspace quota exceeded/);
    expect(text).toMatch(/limits\.workspaceQuotaBytes/);
    expect(text).not.toMatch(/internal error/);
    const fromCode = await client.callTool({ name: 'execute_code', arguments: { code: "try { write_file('c.txt', 'y'.repeat(60000)); return 'written' } catch (e) { return e.message }" } });
    expect((fromCode.structuredContent as { result: string }).result).toMatch(/workspace quota exceeded.*limits\.workspaceQuotaBytes/);
  }, 60_000);
});
