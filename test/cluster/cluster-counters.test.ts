// Per-agent counters that hold across real daemons sharing one Redis and one workspace folder
// (`npm run cluster`'s setup, sessions opened on each daemon directly): an agent limited to two
// calls in flight never has more than two running between the daemons, as its own calls see from
// inside the sandbox (markers in its shared workspace namespace), while another agent runs at
// once; writes from both daemons never pass one namespace's quota; a kill -9'd daemon's slots
// free themselves; with Redis stopped a limited call fails at once with the store error, calls of
// an agent without a cluster-wide limit still run, and the limit works again once Redis returns.
// (Slow suite: vitest.slow.config.ts; needs `npm run build`.)

import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalCluster } from '../../bench/cluster/local-cluster.js';
import type { LocalCluster } from '../../bench/cluster/local-cluster.js';

const TOKENS = { alice: 'alice-token-0123456789abcdef', bob: 'bob-token-0123456789abcdef', carol: 'carol-token-0123456789abcdef' };
type Agent = keyof typeof TOKENS;
const QUOTA_BYTES = 20_000;
let cluster: LocalCluster;
const clients: Client[] = [];

async function session(daemon: number, agent: Agent): Promise<Client> {
  const client = new Client({ name: 'counters-test', version: '1.0.0' });
  const url = new URL((cluster.daemons[daemon] as { url: string }).url);
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${TOKENS[agent]}` } } }));
  clients.push(client);
  return client;
}

interface Result {
  success: boolean;
  result: unknown;
  error?: string;
  error_type?: string;
}

async function run(client: Client, code: string, timeoutSeconds = 30): Promise<Result> {
  const r = await client.callTool({ name: 'execute_code', arguments: { code, language: 'javascript', timeout_seconds: timeoutSeconds } }, undefined, { timeout: (timeoutSeconds + 10) * 1000 });
  return r.structuredContent as unknown as Result;
}

/** A call that marks itself running in its namespace and returns how many calls of its agent it saw running, and when it ran. */
const SLOW_CALL = (ms: number): string => `
const me = 'running/' + crypto.randomUUID();
const start = Date.now();
write_file(me, 'x');
let seen = list_files('running').length;
await sleep(${ms});
seen = Math.max(seen, list_files('running').length);
delete_file(me);
return { seen, start, end: Date.now() };`;

/** Most intervals overlapping at one instant. */
function maxOverlap(spans: { start: number; end: number }[]): number {
  const events = spans.flatMap((s) => [[s.start, 1], [s.end, -1]] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let max = 0;
  for (const [, d] of events) max = Math.max(max, (now += d));
  return max;
}

beforeAll(async () => {
  const config = path.join(tmpdir(), `cluster-counters-${process.pid}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      agents: [
        { name: 'alice', token: TOKENS.alice, limits: { maxCallsInFlight: 2 } },
        { name: 'bob', token: TOKENS.bob, limits: { maxCallsInFlight: 2 } },
        { name: 'carol', token: TOKENS.carol },
      ],
      limits: { workspaceQuotaBytes: QUOTA_BYTES },
    }),
  );
  cluster = await startLocalCluster({ daemons: 2, configFile: config, env: { CODE_EXEC_THREADS_PER_PROCESS: '4' } });
});

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await cluster?.stop();
  if (cluster) rmSync(cluster.dir, { recursive: true, force: true });
});

describe('per-agent counters across two daemons', () => {
  it('never runs more than maxCallsInFlight of one agent across the daemons, and another agent is unaffected', async () => {
    const alice = [await session(0, 'alice'), await session(1, 'alice'), await session(0, 'alice'), await session(1, 'alice')];
    const bob = [await session(0, 'bob'), await session(1, 'bob')];
    const started = Date.now();
    const aliceCalls = alice.flatMap((c) => [run(c, SLOW_CALL(400)), run(c, SLOW_CALL(400))]);
    await new Promise((r) => setTimeout(r, 100));
    const bobStarted = Date.now();
    const bobResults = await Promise.all(bob.map((c) => run(c, SLOW_CALL(400))));
    const bobMs = Date.now() - bobStarted;
    const aliceResults = await Promise.all(aliceCalls);
    for (const r of [...aliceResults, ...bobResults]) expect(r.success, JSON.stringify(r)).toBe(true);
    const spans = aliceResults.map((r) => r.result as { seen: number; start: number; end: number });
    expect(Math.max(...spans.map((s) => s.seen))).toBeLessThanOrEqual(2);
    expect(maxOverlap(spans)).toBe(2);
    // Eight calls of 400 ms, two at a time.
    expect(Date.now() - started).toBeGreaterThanOrEqual(4 * 400);
    // Bob's two calls ran side by side at once, not behind Alice's.
    expect(maxOverlap(bobResults.map((r) => r.result as { start: number; end: number }))).toBe(2);
    expect(bobMs).toBeLessThan(1_500);
  });

  it('never lets writes through both daemons pass one namespace quota', async () => {
    const carol = [await session(0, 'carol'), await session(1, 'carol')];
    const code = `let n = 0; for (let i = 0; i < 15; i++) { try { write_file('q/' + crypto.randomUUID(), 'x'.repeat(1000)); n++; } catch (e) { if (!/quota/.test(String(e))) throw e; } } return n;`;
    const results = await Promise.all(carol.flatMap((c) => [run(c, code), run(c, code)]));
    for (const r of results) expect(r.success, JSON.stringify(r)).toBe(true);
    const written = results.reduce((sum, r) => sum + (r.result as number), 0);
    expect(written).toBe(QUOTA_BYTES / 1000);
  });

  it("frees a kill -9'd daemon's slots within its lease", async () => {
    const doomed = await session(0, 'alice');
    const survivor = await session(1, 'alice');
    const held = [run(doomed, 'await sleep(60000)', 90), run(doomed, 'await sleep(60000)', 90)];
    await new Promise((r) => setTimeout(r, 1_000));
    const victim = cluster.daemons[0] as LocalCluster['daemons'][number];
    victim.process.kill('SIGKILL');
    await victim.exited;
    const t = Date.now();
    const r = await run(survivor, 'return 1', 30);
    expect(r.success, JSON.stringify(r)).toBe(true);
    const waited = Date.now() - t;
    process.stderr.write(`cluster slots: a killed daemon's slots were free after ${waited} ms\n`);
    expect(waited).toBeGreaterThan(5_000);
    expect(waited).toBeLessThan(13_000);
    // The held calls died with their daemon; their requests end when the clients close.
    for (const h of held) h.catch(() => {});
  }, 60_000);

  it('fails a limited call at once with the store error while Redis is down, and limits again when it returns', async () => {
    const alice = await session(1, 'alice');
    const carol = await session(1, 'carol');
    await cluster.stopRedis();
    const t = Date.now();
    const down = await run(alice, 'return 1');
    expect(Date.now() - t).toBeLessThan(3_000);
    expect(down.success).toBe(false);
    expect(down.error_type).toBe('StoreError');
    expect(down.error).toMatch(/calls in flight is unavailable.*Redis.*retry/);
    // An agent without a cluster-wide limit needs no shared counter.
    expect((await run(carol, 'return 2')).result).toBe(2);
    await cluster.startRedis();
    const deadline = Date.now() + 10_000;
    let back: Result | undefined;
    while (Date.now() < deadline && !back?.success) {
      back = await run(alice, 'return 3');
      if (!back.success) await new Promise((r) => setTimeout(r, 200));
    }
    expect(back?.result).toBe(3);
    const results = await Promise.all([run(alice, SLOW_CALL(300)), run(alice, SLOW_CALL(300)), run(alice, SLOW_CALL(300)), run(alice, SLOW_CALL(300))]);
    expect(maxOverlap(results.map((r) => r.result as { start: number; end: number }))).toBeLessThanOrEqual(2);
  }, 60_000);
});
