// A workspace namespace's quota counted in Redis, so daemons writing to the shared workspace folder
// admit writes against one count: each admission is one Lua script that refuses when the change
// would pass a limit and adds it otherwise, so two daemons can never both pass the last free byte.
// The count is seeded from a walk of the folder when Redis has none (first use, idle expiry, a
// Redis restart), and measured again (when a write would be refused, and every USAGE_TTL_MS) to
// take in files changed by hand. A measure replaces the count only when no write was admitted
// or under way anywhere in the cluster while it walked (`seq` in the hash, and the daemons with
// writes admitted and not settled, each under a lease it renews: KEYS[2]), so it never forgets a
// write it did not see; a daemon killed mid-write stops renewing, and once its lease is over its
// admitted writes (which never land) stop blocking measures, and the next measure drops them. Frees and settlements that fail in an outage are kept
// and sent with the next change; admissions fail with the store's clear error. A change of one
// file holds that file's lock in Redis (SET NX with a lease) from reading the size it replaces to
// settling, so overwrites of one file through different daemons are counted one after the other.

import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { KeyedLock } from '../../util/keyed-lock.js';
import type { Logger } from '../../util/logger.js';
import { USAGE_TTL_MS, measureUsage, quotaRefusal } from '../../workspace/quota.js';
import type { QuotaCounter, QuotaCounterFactory, QuotaLimits, Usage } from '../../workspace/quota.js';
import type { RedisConnection } from './redis-connection.js';
import { StoreError } from '../../util/store-error.js';

/** A namespace's count is forgotten (and measured again on next use) after this long unused, ms. */
export const QUOTA_IDLE_TTL_MS = 3_600_000;
const WHAT = 'the shared workspace quota';

/**
 * KEYS: the count, the leases of daemons with writes pending. ARGV: bytes, files, byte limit, file
 * limit, ttl, daemon id, its lease's end. Returns {-1} unseeded, {1|2, bytes, files} refused
 * (files|bytes), {0, bytes, files} admitted.
 */
const ADMIT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
local bytes = tonumber(redis.call('HGET', KEYS[1], 'bytes')) or 0
local files = tonumber(redis.call('HGET', KEYS[1], 'files')) or 0
local db, df = tonumber(ARGV[1]), tonumber(ARGV[2])
if df > 0 and files + df > tonumber(ARGV[4]) then return {1, bytes, files} end
if db > 0 and bytes + db > tonumber(ARGV[3]) then return {2, bytes, files} end
bytes = math.max(0, bytes + db)
files = math.max(0, files + df)
redis.call('HSET', KEYS[1], 'bytes', bytes, 'files', files)
redis.call('HINCRBY', KEYS[1], 'p:' .. ARGV[6], 1)
redis.call('HINCRBY', KEYS[1], 'seq', 1)
redis.call('ZADD', KEYS[2], ARGV[7], ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return {0, bytes, files}
`;

/** KEYS as ADMIT. ARGV: bytes, files, settled writes (this daemon's pending to subtract), daemon id. A count Redis lost stays lost (seeded again). */
const CHANGE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local bytes = math.max(0, (tonumber(redis.call('HGET', KEYS[1], 'bytes')) or 0) + tonumber(ARGV[1]))
local files = math.max(0, (tonumber(redis.call('HGET', KEYS[1], 'files')) or 0) + tonumber(ARGV[2]))
redis.call('HSET', KEYS[1], 'bytes', bytes, 'files', files)
if tonumber(ARGV[3]) > 0 and redis.call('HINCRBY', KEYS[1], 'p:' .. ARGV[4], -tonumber(ARGV[3])) <= 0 then
  redis.call('HDEL', KEYS[1], 'p:' .. ARGV[4])
  redis.call('ZREM', KEYS[2], ARGV[4])
end
redis.call('HINCRBY', KEYS[1], 'seq', 1)
return 1
`;

/**
 * KEYS as ADMIT. ARGV: measured bytes, files, seq read before the walk (or '' when seeding), ttl,
 * now. Returns 1 when stored. Daemons whose lease is over died with writes admitted: dropped first.
 */
const MEASURED = `
if ARGV[3] == '' then
  if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[1], 'bytes', ARGV[1], 'files', ARGV[2], 'seq', 0)
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  return 1
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[5])) do redis.call('HDEL', KEYS[1], 'p:' .. id) end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[5])
if redis.call('ZCARD', KEYS[2]) ~= 0 or redis.call('HGET', KEYS[1], 'seq') ~= ARGV[3] then return 0 end
redis.call('HSET', KEYS[1], 'bytes', ARGV[1], 'files', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'seq', 1)
return 1
`;

/** A daemon's admitted writes outlive it by this long, ms: it renews their lease while they run. */
export const PENDING_LEASE_MS = 5_000;
const PENDING_RENEW_MS = 1_500;
/** A file lock outlives a daemon that died holding it by this long, ms; its holder renews it while the change runs. */
export const FILE_LOCK_LEASE_MS = 2_000;
/** While its change runs, the holder renews its lease this often, ms (a live holder never loses it). */
const FILE_LOCK_RENEW_MS = 600;
/** How long a change waits for another daemon's change of the same file, ms. */
export const FILE_LOCK_WAIT_MS = 30_000;
const LOCK = `return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])`;
const UNLOCK = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;

/** Every namespace's counter in `redis`. */
export function redisQuotas(redis: RedisConnection, logger: Logger): QuotaCounterFactory {
  return (namespace, root, limits) => new RedisQuota(redis, logger, namespace, root, limits);
}

export class RedisQuota implements QuotaCounter {
  readonly limits: QuotaLimits;
  readonly #redis: RedisConnection;
  readonly #logger: Logger;
  readonly #key: string;
  /** The leases of daemons with writes pending (KEYS[2] of the scripts). */
  readonly #leases: string;
  /** This daemon's name in the leases. */
  readonly #id = randomBytes(8).toString('hex');
  /** Writes this daemon admitted and has not settled; while there are any, it renews its lease. */
  #admitted = 0;
  #renewing: NodeJS.Timeout | undefined;
  readonly #root: () => Promise<string>;
  /** Changes not yet counted in Redis (it was down): sent with the next one. */
  readonly #owed = { bytes: 0, files: 0, settled: 0 };
  #measuredAt = 0;
  #measuring: Promise<void> | undefined;
  /** This daemon's changes of one file queue here first, so only one of them asks Redis for its lock. */
  readonly #files = new KeyedLock();

  constructor(redis: RedisConnection, logger: Logger, namespace: string, root: () => Promise<string>, limits: QuotaLimits) {
    this.#redis = redis;
    this.#logger = logger;
    this.#root = root;
    this.limits = limits;
    const id = createHash('sha256').update(namespace).digest('hex').slice(0, 32);
    this.#key = `${redis.prefix}quota:${id}`;
    this.#leases = `${this.#key}:leases`;
  }

  async usage(): Promise<Usage> {
    await this.#flush();
    let held = await this.#read();
    if (!held || Date.now() - this.#measuredAt > USAGE_TTL_MS) {
      await this.#measure();
      held = await this.#read();
    }
    return held ?? { bytes: 0, files: 0 };
  }

  async admit(bytes: number, files: number, what: string, namespace: string): Promise<string | undefined> {
    await this.#flush();
    if (Date.now() - this.#measuredAt > USAGE_TTL_MS) void this.#measure().catch(() => {});
    for (let attempt = 0; ; attempt++) {
      const args = [String(bytes), String(files), String(this.limits.bytes), String(this.limits.files), String(QUOTA_IDLE_TTL_MS), this.#id, String(Date.now() + PENDING_LEASE_MS)];
      const reply = (await this.#redis.run(WHAT, (client) => client.eval(ADMIT, { keys: [this.#key, this.#leases], arguments: args }))) as number[];
      const verdict = Number(reply[0]);
      if (verdict === 0) {
        this.#pending(1);
        return undefined;
      }
      // Unseeded: walk the folder once. Refused: the folder may hold less than counted (files
      // deleted by hand), so measure once before refusing.
      if (verdict > 0 && attempt >= 1) return quotaRefusal({ bytes: Number(reply[1] ?? 0), files: Number(reply[2] ?? 0) }, this.limits, bytes, files, what, namespace);
      if (attempt >= 2) throw new StoreError('STORE_UNAVAILABLE', `${WHAT} of namespace "${namespace}" could not be set up in Redis; retry`);
      await this.#measure();
    }
  }

  settle(bytes: number, files: number, written: boolean): void {
    this.#pending(-1);
    this.#change(written ? 0 : -bytes, written ? 0 : -files, 1);
  }

  /** Counts this daemon's admitted writes; renews its lease while there are any. */
  #pending(delta: number): void {
    this.#admitted = Math.max(0, this.#admitted + delta);
    if (this.#admitted > 0 && !this.#renewing) {
      this.#renewing = setInterval(() => {
        const until = String(Date.now() + PENDING_LEASE_MS);
        void this.#redis.run(WHAT, (client) => client.zAdd(this.#leases, { score: Number(until), value: this.#id })).catch(() => undefined);
      }, PENDING_RENEW_MS);
      this.#renewing.unref();
    } else if (this.#admitted === 0 && this.#renewing) {
      clearInterval(this.#renewing);
      this.#renewing = undefined;
    }
  }

  apply(bytes: number, files: number): void {
    this.#change(bytes, files, 0);
  }

  exclusive<T>(file: string, fn: () => Promise<T>): Promise<T> {
    return this.#files.run(file, async () => {
      const key = `${this.#key}:file:${createHash('sha256').update(file).digest('hex').slice(0, 32)}`;
      const token = randomBytes(16).toString('hex');
      const deadline = Date.now() + FILE_LOCK_WAIT_MS;
      for (let attempt = 1; ; attempt++) {
        let taken: unknown;
        try {
          taken = await this.#redis.run(WHAT, (client) => client.eval(LOCK, { keys: [key], arguments: [token, String(FILE_LOCK_LEASE_MS)] }));
        } catch (error) {
          // Redis is down: no daemon can admit a write now (admit needs it too), so a delete may go
          // ahead unlocked (its free is owed and sent later) and a write fails at admit, clearly.
          if (!(error instanceof StoreError)) throw error;
          return fn();
        }
        if (taken === 'OK') break;
        if (Date.now() > deadline) {
          throw new StoreError('STORE_UNAVAILABLE', `${WHAT}: another daemon has been changing ${file} for over ${FILE_LOCK_WAIT_MS / 1000} s; retry`);
        }
        await delay(Math.min(2 * attempt, 50));
      }
      // A short lease, renewed while the change runs: a daemon killed mid-change holds the file for
      // FILE_LOCK_LEASE_MS at most, not long enough to stall other daemons' sandbox threads (a
      // write_file waits for the lease on a thread blocked in the guest's synchronous call).
      const renew = setInterval(() => {
        void this.#redis.run(WHAT, (client) => client.eval(RENEW, { keys: [key], arguments: [token, String(FILE_LOCK_LEASE_MS)] })).catch(() => undefined);
      }, FILE_LOCK_RENEW_MS);
      renew.unref();
      try {
        return await fn();
      } finally {
        clearInterval(renew);
        await this.#redis.run(WHAT, (client) => client.eval(UNLOCK, { keys: [key], arguments: [token] })).catch(() => undefined);
      }
    });
  }

  #change(bytes: number, files: number, settled: number): void {
    this.#owed.bytes += bytes;
    this.#owed.files += files;
    this.#owed.settled += settled;
    void this.#flush().catch(() => {});
  }

  /** Sends what is owed; on failure it stays owed (the count in Redis stays high: on the safe side). */
  async #flush(): Promise<void> {
    const owed = { ...this.#owed };
    if (owed.bytes === 0 && owed.files === 0 && owed.settled === 0) return;
    this.#owed.bytes -= owed.bytes;
    this.#owed.files -= owed.files;
    this.#owed.settled -= owed.settled;
    try {
      await this.#redis.run(WHAT, (client) => client.eval(CHANGE, { keys: [this.#key, this.#leases], arguments: [String(owed.bytes), String(owed.files), String(owed.settled), this.#id] }));
    } catch (error) {
      this.#owed.bytes += owed.bytes;
      this.#owed.files += owed.files;
      this.#owed.settled += owed.settled;
      this.#logger.debug({ err: error }, 'could not count a workspace change in Redis yet; kept for the next one');
    }
  }

  async #read(): Promise<Usage | undefined> {
    const [bytes, files] = await this.#redis.run(WHAT, (client) => client.hmGet(this.#key, ['bytes', 'files']));
    if (bytes === null || bytes === undefined) return undefined;
    return { bytes: Number(bytes), files: Number(files ?? 0) };
  }

  /** Walks the folder and stores the result if no write was admitted or under way meanwhile (or seeds a missing count). */
  #measure(): Promise<void> {
    this.#measuring ??= (async () => {
      try {
        const [seq, live] = await this.#redis.run(WHAT, (client) => Promise.all([client.hGet(this.#key, 'seq'), client.zCount(this.#leases, Date.now(), '+inf')]));
        // Writes under way (of a daemon whose lease runs) are not on disk yet: a walk now would forget them.
        if (seq !== null && seq !== undefined && live > 0) return;
        const measured = await measureUsage(await this.#root(), this.limits.files);
        const args = [String(measured.bytes), String(measured.files), seq ?? '', String(QUOTA_IDLE_TTL_MS), String(Date.now())];
        await this.#redis.run(WHAT, (client) => client.eval(MEASURED, { keys: [this.#key, this.#leases], arguments: args }));
        this.#measuredAt = Date.now();
      } finally {
        this.#measuring = undefined;
      }
    })();
    return this.#measuring;
  }
}
