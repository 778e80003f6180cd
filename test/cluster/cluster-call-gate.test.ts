// The cluster-wide limit of an agent's calls in flight, on a real Redis: gates of two "daemons"
// (each its own connection and id) never let one agent run more than its limit between them while
// another agent runs at once; waiting calls keep their queue bound, deadline and cancellation; a
// daemon that vanishes without releasing frees its slots when its lease lapses; with Redis down a
// call fails at once with the store's error, and the limit works again when Redis returns.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisConnection } from '../../src/cluster/redis/redis-connection.js';
import { RedisStore } from '../../src/cluster/redis/redis-store.js';
import { SLOT_LEASE_MS, StoreCallGate } from '../../src/executor/call-gate.js';
import type { GateSlot } from '../../src/executor/call-gate.js';
import type { Finished } from '../../src/executor/sandbox-process.js';
import { createLogger } from '../../src/util/logger.js';
import { startTestRedis } from './redis-server.js';
import type { TestRedis } from './redis-server.js';

const logger = createLogger('silent');
let redis: TestRedis;
const connections: RedisConnection[] = [];
const gates: StoreCallGate[] = [];

async function daemon(): Promise<{ gate: StoreCallGate; connection: RedisConnection }> {
  const connection = new RedisConnection({ url: redis.url, sealingKey: Buffer.alloc(32, 5), logger });
  await connection.connect();
  connections.push(connection);
  const gate = await StoreCallGate.start(new RedisStore(connection), logger);
  gates.push(gate);
  return { gate, connection };
}

const ok: Finished = { outcome: { ok: true, value: null, output: [] }, workerReplaced: false };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const slot = (agent: string, limit = 2, maxQueued = 100): GateSlot => ({ pool: 'js', agent, limit, maxQueued });
const call = (ms = 30_000, signal?: AbortSignal) => ({ deadline: performance.now() + ms, ...(signal ? { signal } : {}) });

/** Work that records how many calls of its agent run at once, across every gate. */
function tracker(): { work: (ms: number) => () => Promise<Finished>; max: () => number; starts: number[] } {
  let running = 0;
  let max = 0;
  const starts: number[] = [];
  return {
    work: (ms) => async () => {
      starts.push(performance.now());
      max = Math.max(max, ++running);
      await sleep(ms);
      running--;
      return ok;
    },
    max: () => max,
    starts,
  };
}

beforeAll(async () => {
  redis = await startTestRedis();
});

afterAll(async () => {
  for (const g of gates) await g.close();
  for (const c of connections) await c.close();
  await redis?.stop();
});

describe('the call gate over Redis', () => {
  it('never lets an agent run more than its limit across two daemons, while another agent runs at once', async () => {
    const [a, b] = [await daemon(), await daemon()];
    const alice = tracker();
    const bob = tracker();
    const started = performance.now();
    const calls = Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).gate.run(slot('alice'), call(), alice.work(150)));
    await sleep(20);
    const bobCalls = [a.gate.run(slot('bob'), call(), bob.work(50)), b.gate.run(slot('bob'), call(), bob.work(50))];
    const results = await Promise.all([...calls, ...bobCalls]);
    for (const r of results) expect(r.outcome.ok).toBe(true);
    expect(alice.max()).toBe(2);
    expect(bob.max()).toBe(2);
    // Bob waited for nothing: both his calls started at once, behind none of Alice's.
    for (const t of bob.starts) expect(t - started).toBeLessThan(200);
    // Ten calls of 150 ms two at a time: at least five rounds.
    expect(performance.now() - started).toBeGreaterThanOrEqual(5 * 150);
    expect(a.gate.held()).toEqual({});
    expect(b.gate.held()).toEqual({});
  });

  it("keeps a daemon's count when it releases a slot while taking another for the same agent", async () => {
    const [a, b] = [await daemon(), await daemon()];
    let running = 0;
    let max = 0;
    const work = (done: Promise<void>) => async (): Promise<Finished> => {
      max = Math.max(max, ++running);
      await done;
      running--;
      return ok;
    };
    let endFirst: () => void = () => {};
    let endSecond: () => void = () => {};
    const first = a.gate.run(slot('frank'), call(), work(new Promise<void>((r) => (endFirst = r))));
    await sleep(100);
    // The take for the second call is sent, then the first call's release, before Redis answers.
    const second = a.gate.run(slot('frank'), call(), work(new Promise<void>((r) => (endSecond = r))));
    endFirst();
    await first;
    await sleep(100);
    expect(a.gate.held()).toEqual({ 'js:frank': 1 });
    const others = [b.gate.run(slot('frank'), call(), work(sleep(300))), b.gate.run(slot('frank'), call(), work(sleep(300)))];
    await sleep(200);
    expect(max).toBe(2);
    endSecond();
    await Promise.all([second, ...others]);
    expect(max).toBe(2);
  });

  it('keeps waiting calls within the queue bound, their deadline and cancellation', async () => {
    const [a, b] = [await daemon(), await daemon()];
    let free: () => void = () => {};
    const blocker = new Promise<Finished>((r) => (free = () => r(ok)));
    const holding = a.gate.run(slot('carol', 1, 1), call(), () => blocker);
    await sleep(50);
    const waiting = b.gate.run(slot('carol', 1, 1), call(), async () => ok);
    await sleep(50);
    const refused = await b.gate.run(slot('carol', 1, 1), call(), async () => ok);
    expect(refused.outcome.ok).toBe(false);
    expect(refused.outcome.ok === false && refused.outcome.error.type).toBe('OverloadedError');
    expect(refused.outcome.ok === false && refused.outcome.error.message).toMatch(/agent "carol".*across the cluster/);
    const late = await a.gate.run(slot('carol', 1, 5), call(100), async () => ok);
    expect(late.outcome.ok === false && late.outcome.error.type).toBe('TimeoutError');
    const cancel = new AbortController();
    const cancelled = a.gate.run(slot('carol', 1, 5), call(30_000, cancel.signal), async () => ok);
    cancel.abort();
    expect((await cancelled).outcome.ok === false && ((await cancelled).outcome as { error: { type: string } }).error.type).toBe('CancelledError');
    free();
    expect((await holding).outcome.ok).toBe(true);
    expect((await waiting).outcome.ok).toBe(true);
  });

  it("frees a vanished daemon's slots when its lease lapses", async () => {
    const [a, b] = [await daemon(), await daemon()];
    const never = new Promise<Finished>(() => {});
    void a.gate.run(slot('dave'), call(), () => never);
    void a.gate.run(slot('dave'), call(), () => never);
    await sleep(100);
    expect(a.gate.held()).toEqual({ 'js:dave': 2 });
    // As if killed: no release, no heartbeat from now on.
    a.connection.client.destroy();
    a.connection.subscriber().then((s) => s.destroy(), () => {});
    const waited = performance.now();
    const r = await b.gate.run(slot('dave'), call(30_000), async () => ok);
    const ms = performance.now() - waited;
    expect(r.outcome.ok).toBe(true);
    expect(ms).toBeGreaterThan(SLOT_LEASE_MS - 2_000);
    expect(ms).toBeLessThan(SLOT_LEASE_MS + 1_500);
  }, 30_000);

  it('fails at once with the store error while Redis is down, and limits again once it returns', async () => {
    const [a, b] = [await daemon(), await daemon()];
    await redis.stop();
    const t = performance.now();
    const down = await a.gate.run(slot('erin'), call(), async () => ok);
    expect(performance.now() - t).toBeLessThan(2_500);
    expect(down.outcome.ok).toBe(false);
    expect(down.outcome.ok === false && down.outcome.error.type).toBe('StoreError');
    expect(down.outcome.ok === false && down.outcome.error.message).toMatch(/unavailable.*Redis.*retry/);
    await redis.start();
    const deadline = Date.now() + 10_000;
    while (!(a.connection.up && b.connection.up) && Date.now() < deadline) await sleep(100);
    const erin = tracker();
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).gate.run(slot('erin'), call(), erin.work(100))));
    for (const r of results) expect(r.outcome.ok).toBe(true);
    expect(erin.max()).toBe(2);
  }, 30_000);
});
