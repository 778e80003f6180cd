// A workspace namespace's quota counted in Redis, so daemons writing to the shared workspace folder
// admit writes against one count: each admission is one Lua script that refuses when the change
// would pass a limit and adds it otherwise, so two daemons can never both pass the last free byte.
// The count is seeded from a walk of the folder when Redis has none (first use, idle expiry, a
// Redis restart), and measured again (when a write would be refused, and every USAGE_TTL_MS) to
// take in files changed by hand. A measure replaces the count only when no write was admitted
// or under way anywhere in the cluster while it walked (`pending` and `seq` in the hash), so it
// never forgets a write it did not see. Frees and settlements that fail in an outage are kept
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
import { isStoreError, StoreError } from '../../util/store-error.js';

/** A namespace's count is forgotten (and measured again on next use) after this long unused, ms. */
export const QUOTA_IDLE_TTL_MS = 3_600_000;
const WHAT = 'the shared workspace quota';

/** ARGV: bytes, files, byte limit, file limit, ttl. Returns {-1} unseeded, {1|2, bytes, files} refused (files|bytes), {0, bytes, files} admitted. */
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
redis.call('HINCRBY', KEYS[1], 'pending', 1)
redis.call('HINCRBY', KEYS[1], 'seq', 1)
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return {0, bytes, files}
`;

/** ARGV: bytes, files, settled writes (pending to subtract). A count Redis lost stays lost (seeded again). */
const CHANGE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local bytes = math.max(0, (tonumber(redis.call('HGET', KEYS[1], 'bytes')) or 0) + tonumber(ARGV[1]))
local files = math.max(0, (tonumber(redis.call('HGET', KEYS[1], 'files')) or 0) + tonumber(ARGV[2]))
local pending = math.max(0, (tonumber(redis.call('HGET', KEYS[1], 'pending')) or 0) - tonumber(ARGV[3]))
redis.call('HSET', KEYS[1], 'bytes', bytes, 'files', files, 'pending', pending)
redis.call('HINCRBY', KEYS[1], 'seq', 1)
return 1
`;

/** ARGV: measured bytes, files, seq read before the walk (or '' when seeding), ttl. Returns 1 when stored. */
const MEASURED = `
if ARGV[3] == '' then
  if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
  redis.call('HSET', KEYS[1], 'bytes', ARGV[1], 'files', ARGV[2], 'pending', 0, 'seq', 0)
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  return 1
end
local state = redis.call('HMGET', KEYS[1], 'pending', 'seq')
if tonumber(state[1] or '0') ~= 0 or state[2] ~= ARGV[3] then return 0 end
redis.call('HSET', KEYS[1], 'bytes', ARGV[1], 'files', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'seq', 1)
return 1
`;

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
      const args = [String(bytes), String(files), String(this.limits.bytes), String(this.limits.files), String(QUOTA_IDLE_TTL_MS)];
      const reply = (await this.#redis.run(WHAT, (client) => client.eval(ADMIT, { keys: [this.#key], arguments: args }))) as number[];
      const verdict = Number(reply[0]);
      if (verdict === 0) return undefined;
      // Unseeded: walk the folder once. Refused: the folder may hold less than counted (files
      // deleted by hand), so measure once before refusing.
      if (verdict > 0 && attempt >= 1) return quotaRefusal({ bytes: Number(reply[1] ?? 0), files: Number(reply[2] ?? 0) }, this.limits, bytes, files, what, namespace);
      if (attempt >= 2) throw new StoreError('STORE_UNAVAILABLE', `${WHAT} of namespace "${namespace}" could not be set up in Redis; retry`);
      await this.#measure();
    }
  }

  settle(bytes: number, files: number, written: boolean): void {
    this.#change(written ? 0 : -bytes, written ? 0 : -files, 1);
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
          if (!isStoreError(error)) throw error;
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
      await this.#redis.run(WHAT, (client) => client.eval(CHANGE, { keys: [this.#key], arguments: [String(owed.bytes), String(owed.files), String(owed.settled)] }));
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
        const [pending, seq] = await this.#redis.run(WHAT, (client) => client.hmGet(this.#key, ['pending', 'seq']));
        // Writes under way are not on disk yet: a walk now would forget them.
        if (seq !== null && seq !== undefined && Number(pending ?? 0) > 0) return;
        const measured = await measureUsage(await this.#root(), this.limits.files);
        const args = [String(measured.bytes), String(measured.files), seq ?? '', String(QUOTA_IDLE_TTL_MS)];
        await this.#redis.run(WHAT, (client) => client.eval(MEASURED, { keys: [this.#key], arguments: args }));
        this.#measuredAt = Date.now();
      } finally {
        this.#measuring = undefined;
      }
    })();
    return this.#measuring;
  }
}
