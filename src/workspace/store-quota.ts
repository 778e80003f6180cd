// A workspace namespace's quota counted in the shared store: this daemon's memory when it runs
// alone (a count lost with the process is measured again from the folder), Redis when daemons
// write to one shared workspace folder and admit writes against one count. Counters per namespace: bytes, files, writes pending, a change
// sequence, and `seeded`. An admission is one all-or-none change of them: refused when the store
// has no count yet (then it is seeded from a walk of the folder), or when bytes or files would
// pass a limit, so two daemons can never both pass the last free byte. The count is measured
// again (when a write would be refused, and every USAGE_TTL_MS) to take in files changed by hand;
// a measure replaces the count only when no write was pending or admitted anywhere while it
// walked (a compare on `pending` and `seq`), so it never forgets a write it did not see. Frees and
// settlements that fail in an outage are kept and sent with the next change. A change of one file
// holds a lease on that file in the store (a counter part, renewed while the change runs), so
// overwrites of one file through different daemons are counted one after the other.
// `pending` has one part per daemon under a lease (PENDING_LEASE_MS, renewed while its writes run),
// so a daemon killed between admitting a write and settling it does not block every later measure
// (and keep its dead write counted) for good: its part lapses, and the next measure forgets it.

import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { MemoryStore } from '../store/memory-store.js';
import { storeWork } from '../store/shared-store.js';
import type { CountResult, CountStep, SharedStore } from '../store/shared-store.js';
import { KeyedLock } from '../util/keyed-lock.js';
import { silentLogger } from '../util/logger.js';
import type { Logger } from '../util/logger.js';
import { StoreError, isStoreError } from '../util/store-error.js';
import { USAGE_TTL_MS, measureUsage, quotaRefusal } from './quota.js';
import type { QuotaCounter, QuotaCounterFactory, QuotaLimits, Usage } from './quota.js';

/** A namespace's count is forgotten (and measured again on next use) after this long unused, ms. */
export const QUOTA_IDLE_TTL_MS = 3_600_000;
/** A file lease outlives a daemon that died holding it by this long, ms; its holder renews it while the change runs. */
export const FILE_LOCK_LEASE_MS = 2_000;
/** While its change runs, the holder renews its lease this often, ms (a live holder never loses it). */
const FILE_LOCK_RENEW_MS = 600;
/** A daemon's writes pending in the count lapse this long after it stops renewing them (killed mid-write), ms. */
export const PENDING_LEASE_MS = 5_000;
/** While writes it admitted are pending, a daemon renews their lease this often, ms. */
const PENDING_RENEW_MS = 1_500;
/** How long a change waits for another daemon's change of the same file, ms. */
export const FILE_LOCK_WAIT_MS = 30_000;
const WHAT = 'the shared workspace quota';

/** Every namespace's counter in `store` (by default a store of its own, in this process's memory). */
export function storeQuotas(store: SharedStore = new MemoryStore(), logger: Logger = silentLogger()): QuotaCounterFactory {
  return (namespace, root, limits) => new StoreQuota(store, logger, namespace, root, limits);
}

export class StoreQuota implements QuotaCounter {
  readonly limits: QuotaLimits;
  readonly #store: SharedStore;
  readonly #logger: Logger;
  readonly #key: string;
  readonly #root: () => Promise<string>;
  /** Changes not yet counted in the store (it was down): sent with the next one. */
  readonly #owed = { bytes: 0, files: 0, settled: 0 };
  #measuredAt = 0;
  #measuring: Promise<void> | undefined;
  /** This daemon's changes of one file queue here first, so only one of them asks the store for its lease. */
  readonly #files = new KeyedLock();
  /** This daemon's part of `pending`, and how many of its admitted writes are not settled yet. */
  readonly #daemonPart = randomBytes(8).toString('hex');
  #pendingHere = 0;
  #renewPending: NodeJS.Timeout | undefined;

  constructor(store: SharedStore, logger: Logger, namespace: string, root: () => Promise<string>, limits: QuotaLimits) {
    this.#store = store;
    this.#logger = logger;
    this.#root = root;
    this.limits = limits;
    this.#key = `quota:${createHash('sha256').update(namespace).digest('hex').slice(0, 32)}`;
  }

  #count(steps: readonly CountStep[]): Promise<CountResult> {
    return storeWork(WHAT, this.#store.count(steps));
  }

  /** One step on counter `name` (seeded, bytes, files, pending, seq); every step renews the idle TTL. */
  #step(name: string, change: CountStep['change'], more: Partial<CountStep> = {}): CountStep {
    return { key: `${this.#key}:${name}`, part: 'n', change, ttlMs: QUOTA_IDLE_TTL_MS, ...more };
  }

  /** A change of this daemon's part of `pending`, its lease renewed. */
  #pendingStep(add: number, more: Partial<CountStep> = {}): CountStep {
    return this.#step('pending', { add }, { part: this.#daemonPart, partTtlMs: PENDING_LEASE_MS, ...more });
  }

  /** Counts one more (or, negative, fewer) of this daemon's writes pending; renews their lease while any is. */
  #holdPending(change: number): void {
    this.#pendingHere += change;
    if (this.#pendingHere > 0 && this.#renewPending === undefined) {
      this.#renewPending = setInterval(() => void this.#count([this.#pendingStep(0)]).catch(() => undefined), PENDING_RENEW_MS);
      this.#renewPending.unref();
    } else if (this.#pendingHere <= 0 && this.#renewPending !== undefined) {
      clearInterval(this.#renewPending);
      this.#renewPending = undefined;
    }
  }

  async usage(): Promise<Usage> {
    await this.#flush();
    let held = await this.#read();
    if (held === undefined || Date.now() - this.#measuredAt > USAGE_TTL_MS) {
      await this.#measure();
      held = await this.#read();
    }
    return held ?? { bytes: 0, files: 0 };
  }

  async admit(bytes: number, files: number, what: string, namespace: string): Promise<string | undefined> {
    await this.#flush();
    if (Date.now() - this.#measuredAt > USAGE_TTL_MS) void this.#measure().catch(() => {});
    for (let attempt = 0; ; attempt++) {
      const reply = await this.#count([
        this.#step('seeded', { add: 0 }, { ifTotal: 1 }),
        this.#step('bytes', { add: bytes }, { limit: this.limits.bytes }),
        this.#step('files', { add: files }, { limit: this.limits.files }),
        this.#pendingStep(1),
        this.#step('seq', { add: 1 }),
      ]);
      if (reply.ok) {
        this.#holdPending(1);
        return undefined;
      }
      const seeded = reply.totals[0] === 1;
      // Unseeded: walk the folder once. Refused: the folder may hold less than counted (files
      // deleted by hand), so measure once before refusing.
      if (seeded && attempt >= 1) return quotaRefusal({ bytes: reply.totals[1] ?? 0, files: reply.totals[2] ?? 0 }, this.limits, bytes, files, what, namespace);
      if (attempt >= 2) throw new StoreError('STORE_UNAVAILABLE', `${WHAT} of namespace "${namespace}" could not be set up; retry`);
      await this.#measure();
    }
  }

  settle(bytes: number, files: number, written: boolean): void {
    this.#holdPending(-1);
    this.#change(written ? 0 : -bytes, written ? 0 : -files, 1);
  }

  apply(bytes: number, files: number): void {
    this.#change(bytes, files, 0);
  }

  exclusive<T>(file: string, fn: () => Promise<T>): Promise<T> {
    return this.#files.run(file, async () => {
      const lease = { key: `${this.#key}:file:${createHash('sha256').update(file).digest('hex').slice(0, 32)}`, part: randomBytes(16).toString('hex') };
      const hold = (): Promise<{ ok: boolean }> => this.#count([{ ...lease, change: { set: 1 }, limit: 1, partTtlMs: FILE_LOCK_LEASE_MS, ttlMs: FILE_LOCK_LEASE_MS }]);
      const deadline = Date.now() + FILE_LOCK_WAIT_MS;
      for (let attempt = 1; ; attempt++) {
        let taken: boolean;
        try {
          taken = (await hold()).ok;
        } catch (error) {
          // The store is down: no daemon can admit a write now (admit needs it too), so a delete may
          // go ahead unlocked (its free is owed and sent later) and a write fails at admit, clearly.
          if (!isStoreError(error)) throw error;
          return fn();
        }
        if (taken) break;
        if (Date.now() > deadline) throw new StoreError('STORE_UNAVAILABLE', `${WHAT}: another daemon has been changing ${file} for over ${FILE_LOCK_WAIT_MS / 1000} s; retry`);
        await delay(Math.min(2 * attempt, 50));
      }
      // A short lease, renewed while the change runs: a daemon killed mid-change holds the file for
      // FILE_LOCK_LEASE_MS at most, not long enough to stall other daemons' sandbox threads (a
      // write_file waits for the lease on a thread blocked in the guest's synchronous call).
      const renew = setInterval(() => void hold().catch(() => undefined), FILE_LOCK_RENEW_MS);
      renew.unref();
      try {
        return await fn();
      } finally {
        clearInterval(renew);
        await this.#count([{ ...lease, change: { set: 0 } }]).catch(() => undefined);
      }
    });
  }

  #change(bytes: number, files: number, settled: number): void {
    this.#owed.bytes += bytes;
    this.#owed.files += files;
    this.#owed.settled += settled;
    void this.#flush().catch(() => {});
  }

  /** Sends what is owed; on failure it stays owed (the count in the store stays high: on the safe side). */
  async #flush(): Promise<void> {
    const owed = { ...this.#owed };
    if (owed.bytes === 0 && owed.files === 0 && owed.settled === 0) return;
    this.#owed.bytes -= owed.bytes;
    this.#owed.files -= owed.files;
    this.#owed.settled -= owed.settled;
    try {
      // A count the store lost stays lost (it is seeded again from the folder): refused, then dropped.
      await this.#count([
        this.#step('seeded', { add: 0 }, { ifTotal: 1 }),
        this.#step('bytes', { add: owed.bytes }),
        this.#step('files', { add: owed.files }),
        this.#pendingStep(-owed.settled),
        this.#step('seq', { add: 1 }),
      ]);
    } catch (error) {
      this.#owed.bytes += owed.bytes;
      this.#owed.files += owed.files;
      this.#owed.settled += owed.settled;
      this.#logger.debug({ err: error }, 'could not count a workspace change in the shared store yet; kept for the next one');
    }
  }

  /** The count, or undefined when the store has none (unseeded). */
  async #read(): Promise<Usage | undefined> {
    const { totals } = await this.#count(['seeded', 'bytes', 'files'].map((name) => this.#step(name, { add: 0 })));
    return totals[0] === 1 ? { bytes: totals[1] ?? 0, files: totals[2] ?? 0 } : undefined;
  }

  /** Walks the folder and stores the result if no write was pending or admitted meanwhile (or seeds a missing count). */
  #measure(): Promise<void> {
    this.#measuring ??= (async () => {
      try {
        const { totals } = await this.#count(['seeded', 'pending', 'seq'].map((name) => this.#step(name, { add: 0 })));
        const [seeded, pending, seq] = [totals[0] === 1, totals[1] ?? 0, totals[2] ?? 0];
        // Writes under way are not on disk yet: a walk now would forget them.
        if (seeded && pending > 0) return;
        const measured = await measureUsage(await this.#root(), this.limits.files);
        await this.#count([
          seeded ? this.#step('seeded', { add: 0 }, { ifTotal: 1 }) : this.#step('seeded', { set: 1 }, { ifTotal: 0 }),
          this.#step('pending', { add: 0 }, { ifTotal: 0 }),
          this.#step('seq', { set: seq + 1 }, { ifTotal: seq }),
          this.#step('bytes', { set: measured.bytes }),
          this.#step('files', { set: measured.files }),
        ]);
        this.#measuredAt = Date.now();
      } finally {
        this.#measuring = undefined;
      }
    })();
    return this.#measuring;
  }
}
