// The shared-store primitives (src/store/shared-store.ts) in Redis, for daemons behind a load
// balancer. Every value and stream entry is sealed (AES-256-GCM under the cluster's redisKey) and
// bound to its key, so Redis alone never reveals one and a value copied under another key does
// not open; counters are plain numbers. A counter is a hash of parts ("n:expiresAt"); changes of
// several counters run as one Lua script that drops lapsed parts, sums the rest, checks every
// condition and then writes all or none, on Redis's own clock (daemons' clocks may differ). A
// stream is a sorted set scored by entry id.

import type { Logger } from '../../util/logger.js';
import { SHARED_STORE } from '../../store/shared-store.js';
import type { CountResult, CountStep, SetEntry, SharedStore, Stored, StreamEntry } from '../../store/shared-store.js';
import type { RedisConnection } from './redis-connection.js';

const WHAT = SHARED_STORE;

/**
 * KEYS: one counter per step (distinct). ARGV: 7 per step: part, 'add'|'set', n, limit|'',
 * ifTotal|'', partTtlMs|'', ttlMs|''. Checks every step, then writes all or none. Returns
 * {ok 0|1, total per step}.
 */
const COUNT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local plans, ok = {}, true
for s = 1, #KEYS do
  local a = (s - 1) * 7
  local part = ARGV[a + 1]
  local all = redis.call('HGETALL', KEYS[s])
  local others, mine, mineExp = 0, 0, 0
  for i = 1, #all, 2 do
    local c, e = string.match(all[i + 1], '^(%d+):(%d+)$')
    c = tonumber(c) or 0
    e = tonumber(e) or 0
    if e ~= 0 and e <= now then redis.call('HDEL', KEYS[s], all[i])
    elseif all[i] == part then mine, mineExp = c, e
    else others = others + c end
  end
  local nextN = tonumber(ARGV[a + 3])
  if ARGV[a + 2] == 'add' then nextN = mine + nextN end
  if nextN < 0 then nextN = 0 end
  if ARGV[a + 4] ~= '' and nextN > mine and others + nextN > tonumber(ARGV[a + 4]) then ok = false end
  if ARGV[a + 5] ~= '' and others + mine ~= tonumber(ARGV[a + 5]) then ok = false end
  plans[s] = {part, others, mine, mineExp, nextN}
end
local out = {ok and 1 or 0}
for s = 1, #KEYS do
  local a = (s - 1) * 7
  local p = plans[s]
  if ok then
    local exp = p[4]
    if ARGV[a + 6] ~= '' then exp = now + tonumber(ARGV[a + 6]) end
    if p[5] == 0 then redis.call('HDEL', KEYS[s], p[1]) else redis.call('HSET', KEYS[s], p[1], p[5] .. ':' .. exp) end
    if ARGV[a + 7] ~= '' then redis.call('PEXPIRE', KEYS[s], ARGV[a + 7]) end
    out[s + 1] = p[2] + p[5]
  else
    out[s + 1] = p[2] + p[3]
  end
end
return out
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

  async count(steps: readonly CountStep[]): Promise<CountResult> {
    if (steps.length === 0) return { ok: true, totals: [] };
    const args = steps.flatMap((step) => {
      const [mode, n] = 'add' in step.change ? ['add', step.change.add] : ['set', step.change.set];
      return [step.part, mode, String(Math.trunc(n)), whole(step.limit), whole(step.ifTotal), ms(step.partTtlMs), ms(step.ttlMs)];
    });
    const keys = steps.map((step) => this.#key(step.key));
    const reply = (await this.#redis.run(WHAT, (client) => client.eval(COUNT, { keys, arguments: args }))) as unknown[];
    return { ok: Number(reply[0]) === 1, totals: steps.map((_, i) => Number(reply[i + 1])) };
  }

  async append(stream: string, entry: StreamEntry, ttlMs: number): Promise<void> {
    const member = `${entry.id}\n${this.#redis.sealer.seal(entry.value, stream)}`;
    await this.#redis.run(WHAT, (client) => client.multi().zAdd(this.#key(stream), { score: entry.id, value: member }).pExpire(this.#key(stream), Number(ms(ttlMs))).exec());
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

function ms(n: number | undefined): string {
  return n === undefined ? '' : String(Math.max(1, Math.ceil(n)));
}

function whole(n: number | undefined): string {
  return n === undefined ? '' : String(Math.floor(n));
}
