// The contract of the shared-store primitives (src/store/shared-store.ts), written once and run
// against every backend: memory (shared-stores.test.ts) and Redis (test/cluster/redis-contracts.test.ts).
// Every domain above (PII vaults, SSE events, the call gate, change notices) relies on exactly
// these: values with a TTL and set-if-absent that one of two racing writers wins; counters made of
// parts, refused atomically past a limit by any number of writers at once, whose parts lapse,
// changed several at once all or none (with a compare on their totals), and leases built of them;
// streams read after an id and trimmed; publish reaching every subscriber, peers included.

import { afterEach, describe, expect, it } from 'vitest';
import type { CountResult, CountStep, SharedStore } from '../../src/store/shared-store.js';

export interface SharedStoreHarness {
  /** A fresh, empty store. */
  store(): Promise<SharedStore>;
  /** A second store on the same backing (another daemon); absent when the backing is this process. */
  peer?(): Promise<SharedStore>;
  /** Frees what the harness made (after each test). */
  cleanup?(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
let n = 0;
const fresh = (what: string): string => `contract:${what}:${process.pid}:${++n}`;

export function describeSharedStoreContract(name: string, harness: SharedStoreHarness): void {
  describe(`SharedStore contract: ${name}`, () => {
    const opened: SharedStore[] = [];
    const open = async (peer = false): Promise<SharedStore> => {
      const s = peer && harness.peer ? await harness.peer() : await harness.store();
      opened.push(s);
      return s;
    };
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
      await harness.cleanup?.();
    });

    it('gets what was set, with its expiry; a missing key reads undefined', async () => {
      const s = await open();
      const [a, b] = [fresh('a'), fresh('b')];
      expect(await s.set([{ key: a, value: 'one\0two é' }, { key: b, value: 'x', ttlMs: 60_000 }])).toEqual([true, true]);
      const [ga, gb, gc] = await s.get([a, b, fresh('none')]);
      expect(ga).toEqual({ value: 'one\0two é', expiresAt: Infinity });
      expect(gb?.value).toBe('x');
      expect(gb?.expiresAt).toBeGreaterThan(Date.now() + 50_000);
      expect(gb?.expiresAt).toBeLessThanOrEqual(Date.now() + 61_000);
      expect(gc).toBeUndefined();
      await s.delete([a, b]);
      expect(await s.get([a, b])).toEqual([undefined, undefined]);
    });

    it('expires a value after its TTL', async () => {
      const s = await open();
      const k = fresh('ttl');
      await s.set([{ key: k, value: 'v', ttlMs: 50 }]);
      await sleep(120);
      expect(await s.get([k])).toEqual([undefined]);
      // an expired key counts as absent for set-if-absent
      expect(await s.set([{ key: k, value: 'w', ifAbsent: true }])).toEqual([true]);
    });

    it('set-if-absent: of two writers racing, exactly one wins, and both read the winner', async () => {
      const s = await open();
      const p = await open(true);
      const k = fresh('nx');
      const [x, y] = await Promise.all([s.set([{ key: k, value: 'x', ifAbsent: true }]), p.set([{ key: k, value: 'y', ifAbsent: true }])]);
      expect([x[0], y[0]].filter(Boolean)).toHaveLength(1);
      const winner = x[0] ? 'x' : 'y';
      expect((await s.get([k]))[0]?.value).toBe(winner);
      expect((await p.get([k]))[0]?.value).toBe(winner);
    });

    const add = (key: string, part: string, n: number, more: Partial<CountStep> = {}): CountStep => ({ key, part, change: { add: n }, ...more });
    const total = async (s: SharedStore, key: string): Promise<number> => (await s.count([add(key, '-', 0)])).totals[0] as number;

    it('counts within a limit across writers: never past it, and frees are never refused', async () => {
      const s = await open();
      const p = await open(true);
      const k = fresh('count');
      const tries = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? s : p).count([add(k, `part-${i % 4}`, 3, { limit: 50 })]));
      const results = await Promise.all(tries);
      expect(results.filter((r) => r.ok)).toHaveLength(16);
      expect(results.find((r) => !r.ok)?.totals[0]).toBeGreaterThan(47);
      expect(await total(s, k)).toBe(48);
      // Frees pass a limit the counter is over; a part never goes below zero; `set` replaces a part.
      const own = fresh('free');
      await s.count([add(own, 'a', 30)]);
      await s.count([add(own, 'b', 20)]);
      expect(await p.count([add(own, 'a', -5, { limit: 1 })])).toEqual({ ok: true, totals: [45] });
      expect(await p.count([add(own, 'b', -100)])).toEqual({ ok: true, totals: [25] });
      expect(await s.count([{ key: own, part: 'b', change: { set: 7 }, limit: 40 }])).toEqual({ ok: true, totals: [32] });
      expect(await s.count([{ key: own, part: 'b', change: { set: 20 }, limit: 40 }])).toEqual({ ok: false, totals: [32] });
    });

    it('changes several counters all or none, under limits and ifTotal conditions', async () => {
      const s = await open();
      const [x, y] = [fresh('x'), fresh('y')];
      expect(await s.count([add(x, 'n', 5), add(y, 'n', 1)])).toEqual({ ok: true, totals: [5, 1] });
      // y refuses (limit): x is not written either
      expect(await s.count([add(x, 'n', 5), add(y, 'n', 5, { limit: 3 })])).toEqual({ ok: false, totals: [5, 1] });
      // ifTotal: a compare-and-set of counters
      expect(await s.count([add(x, 'n', 1, { ifTotal: 4 }), add(y, 'n', 1)])).toEqual({ ok: false, totals: [5, 1] });
      expect(await s.count([{ key: x, part: 'n', change: { set: 9 }, ifTotal: 5 }, add(y, 'n', 1)])).toEqual({ ok: true, totals: [9, 2] });
      // an absent counter stands at 0
      expect((await s.count([add(fresh('none'), 'n', 0, { ifTotal: 0 })])).ok).toBe(true);
    });

    it('a lease from a counter: one holder at a time, renewed by its holder, lapsing when it stops', async () => {
      const s = await open();
      const p = await open(true);
      const lock = fresh('lock');
      const take = (store: SharedStore, who: string, ttl = 60_000): Promise<CountResult> => store.count([{ key: lock, part: who, change: { set: 1 }, limit: 1, partTtlMs: ttl }]);
      expect((await take(s, 'me', 80)).ok).toBe(true);
      expect((await take(p, 'you')).ok).toBe(false);
      expect((await take(s, 'me', 80)).ok).toBe(true);
      await sleep(150);
      expect((await take(p, 'you')).ok).toBe(true);
      await p.count([{ key: lock, part: 'you', change: { set: 0 } }]);
      expect((await take(s, 'me')).ok).toBe(true);
    });

    it("a counter's part lapses after its TTL, and the whole counter after its own", async () => {
      const s = await open();
      const k = fresh('lapse');
      await s.count([add(k, 'dead-daemon', 5, { partTtlMs: 60 })]);
      await s.count([add(k, 'live-daemon', 2, { partTtlMs: 60_000 })]);
      expect(await total(s, k)).toBe(7);
      await sleep(150);
      expect(await s.count([add(k, 'x', 4, { limit: 6 })])).toEqual({ ok: true, totals: [6] });
      const whole = fresh('whole');
      await s.count([add(whole, 'a', 9, { ttlMs: 60 })]);
      await sleep(150);
      expect(await total(s, whole)).toBe(0);
    });

    it('reads a stream after an id, trims it, and lets it lapse', async () => {
      const s = await open();
      const k = fresh('stream');
      for (let id = 1; id <= 5; id++) await s.append(k, { id, value: `e${id}` }, 60_000);
      expect((await s.readAfter(k, 2)).map((e) => e.value)).toEqual(['e3', 'e4', 'e5']);
      await s.trim(k, 3);
      expect(await s.readAfter(k, 0)).toEqual([
        { id: 4, value: 'e4' },
        { id: 5, value: 'e5' },
      ]);
      const short = fresh('short');
      await s.append(short, { id: 1, value: 'gone' }, 50);
      await sleep(120);
      expect(await s.readAfter(short, 0)).toEqual([]);
    });

    it('publishes to every subscriber, on a peer too, and stops after unsubscribe', async () => {
      const s = await open();
      const p = await open(true);
      const ch = fresh('channel');
      const got: string[] = [];
      const theirs: string[] = [];
      const off = await s.subscribe(ch, (m) => got.push(m));
      await p.subscribe(ch, (m) => theirs.push(`peer:${m}`));
      await s.publish(ch, 'one');
      for (let i = 0; i < 100 && (got.length < 1 || theirs.length < 1); i++) await sleep(10);
      expect(got).toEqual(['one']);
      expect(theirs).toEqual(['peer:one']);
      off();
      await p.publish(ch, 'two');
      for (let i = 0; i < 100 && theirs.length < 2; i++) await sleep(10);
      expect(theirs).toEqual(['peer:one', 'peer:two']);
      expect(got).toEqual(['one']);
    });
  });
}
