// The shared-store primitives (src/store/shared-store.ts) in Redis, for daemons behind a load
// balancer. Every value and stream entry is sealed (AES-256-GCM under the cluster's redisKey) and
// bound to its key, so Redis alone never reveals one and a value copied under another key does
// not open; counters are plain numbers. A counter is a hash of parts ("n:expiresAt"), changed by
// one Lua script that drops lapsed parts, sums the rest and refuses past the limit, on Redis's own
// clock (daemons' clocks may differ). A stream is a sorted set scored by entry id.

import type { Logger } from '../../util/logger.js';
import type { CountChange, CountOptions, CountResult, SetEntry, SharedStore, Stored, StreamEntry } from '../../store/shared-store.js';
import type { RedisConnection } from './redis-connection.js';

const WHAT = 'the shared store';

/** KEYS: counter. ARGV: part, 'add'|'set', n, limit|'', partTtlMs|'', ttlMs|''. Returns {ok 0|1, total}. */
const COUNT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local all = redis.call('HGETALL', KEYS[1])
local others, mine, mineExp = 0, 0, 0
for i = 1, #all, 2 do
  local c, e = string.match(all[i + 1], '^(%d+):(%d+)$')
  c = tonumber(c) or 0
  e = tonumber(e) or 0
  if e ~= 0 and e <= now then redis.call('HDEL', KEYS[1], all[i])
  elseif all[i] == ARGV[1] then mine, mineExp = c, e
  else others = others + c end
end
local n = tonumber(ARGV[3])
local nextN = n
if ARGV[2] == 'add' then nextN = mine + n end
if nextN < 0 then nextN = 0 end
if ARGV[4] ~= '' and nextN > mine and others + nextN > tonumber(ARGV[4]) then return {0, others + mine} end
local exp = mineExp
if ARGV[5] ~= '' then exp = now + tonumber(ARGV[5]) end
if nextN == 0 then redis.call('HDEL', KEYS[1], ARGV[1]) else redis.call('HSET', KEYS[1], ARGV[1], nextN .. ':' .. exp) end
if ARGV[6] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[6]) end
return {1, others + nextN}
`;

export class RedisStore implements SharedStore {
  readonly kind = 'redis' as const;
  readonly #redis: RedisConnection;
  readonly #listeners = new Map<string, Set<(message: string) => void>>();

  constructor(redis: RedisConnection) {
    this.#redis = redis;
  }

  /** Warns once when Redis may evict what daemons keep (docs/shared-budgets.md, "Redis memory policy"). */
  async checkEvictionPolicy(logger: Logger): Promise<void> {
    try {
      const reply = await this.#redis.run(WHAT, (client) => client.configGet('maxmemory-policy'));
      const policy = String((reply as Record<string, unknown>)['maxmemory-policy'] ?? '');
      if (policy !== '' && policy !== 'noeviction') {
        logger.warn({ code: 'REDIS_EVICTION_POLICY', policy }, `Redis runs with maxmemory-policy ${policy}: under memory pressure it may evict PII vaults; set maxmemory-policy noeviction (docs/shared-budgets.md)`);
      }
    } catch {
      // CONFIG is often disabled on managed Redis: nothing to check then.
    }
  }

  #key(key: string): string {
    return `${this.#redis.prefix}${key}`;
  }

  async get(keys: readonly string[]): Promise<(Stored | undefined)[]> {
    if (keys.length === 0) return [];
    const replies = await this.#redis.run(WHAT, async (client) => {
      const multi = client.multi();
      for (const key of keys) multi.get(this.#key(key)).pTTL(this.#key(key));
      return (await multi.exec()) as unknown[];
    });
    const now = Date.now();
    return keys.map((key, i) => {
      const sealed = replies[2 * i];
      if (typeof sealed !== 'string') return undefined;
      const ttl = Number(replies[2 * i + 1]);
      return { value: this.#redis.sealer.open(sealed, key).toString('utf8'), expiresAt: ttl >= 0 ? now + ttl : Infinity };
    });
  }

  async set(entries: readonly SetEntry[]): Promise<boolean[]> {
    if (entries.length === 0) return [];
    const replies = await this.#redis.run(WHAT, async (client) => {
      const multi = client.multi();
      for (const e of entries) {
        const sealed = this.#redis.sealer.seal(e.value, e.key);
        multi.set(this.#key(e.key), sealed, {
          ...(e.ifAbsent === true ? { condition: 'NX' as const } : {}),
          ...(e.ttlMs !== undefined ? { expiration: { type: 'PX' as const, value: Math.max(1, Math.ceil(e.ttlMs)) } } : {}),
        });
      }
      return (await multi.exec()) as unknown[];
    });
    return replies.map((r) => r === 'OK');
  }

  async delete(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.#redis.run(WHAT, (client) => client.del(keys.map((k) => this.#key(k))));
  }

  async count(key: string, part: string, change: CountChange, options: CountOptions = {}): Promise<CountResult> {
    const [mode, n] = 'add' in change ? ['add', change.add] : ['set', change.set];
    const args = [part, mode, String(Math.trunc(n)), options.limit === undefined ? '' : String(Math.floor(options.limit)), opt(options.partTtlMs), opt(options.ttlMs)];
    const reply = (await this.#redis.run(WHAT, (client) => client.eval(COUNT, { keys: [this.#key(key)], arguments: args }))) as unknown[];
    return { ok: Number(reply[0]) === 1, total: Number(reply[1]) };
  }

  async append(stream: string, entry: StreamEntry, ttlMs: number): Promise<void> {
    const member = `${entry.id}\n${this.#redis.sealer.seal(entry.value, stream)}`;
    await this.#redis.run(WHAT, (client) => client.multi().zAdd(this.#key(stream), { score: entry.id, value: member }).pExpire(this.#key(stream), Math.max(1, Math.ceil(ttlMs))).exec());
  }

  async readAfter(stream: string, afterId: number): Promise<StreamEntry[]> {
    const members = await this.#redis.run(WHAT, (client) => client.zRangeByScore(this.#key(stream), `(${afterId}`, '+inf'));
    return members.map((m) => {
      const at = m.indexOf('\n');
      return { id: Number(m.slice(0, at)), value: this.#redis.sealer.open(m.slice(at + 1), stream).toString('utf8') };
    });
  }

  async trim(stream: string, throughId: number): Promise<void> {
    await this.#redis.run(WHAT, (client) => client.zRemRangeByScore(this.#key(stream), '-inf', throughId));
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.#redis.run(WHAT, (client) => client.publish(this.#key(channel), message));
  }

  async subscribe(channel: string, listener: (message: string) => void): Promise<() => void> {
    let set = this.#listeners.get(channel);
    if (set === undefined) {
      const listeners = (set = new Set());
      this.#listeners.set(channel, listeners);
      const sub = await this.#redis.subscriber();
      await sub.subscribe(this.#key(channel), (message: string) => {
        for (const l of [...listeners]) l(message);
      });
    }
    set.add(listener);
    return () => set.delete(listener);
  }

  async close(): Promise<void> {
    this.#listeners.clear();
    await this.#redis.close();
  }
}

function opt(n: number | undefined): string {
  return n === undefined ? '' : String(Math.max(1, Math.ceil(n)));
}
