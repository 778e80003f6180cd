// Resumable-stream events over the Redis store: a reconnecting client gets what it missed, only
// from its own session; a resume from an event no longer kept (a bound, a Redis that lost it) is
// refused, never replayed with a hole; Redis down: events are sent but not kept, and resuming from
// them is refused clearly. The event contract itself runs in redis-contracts.test.ts.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { RedisConnection } from '../../src/cluster/redis/redis-connection.js';
import { RedisStore } from '../../src/cluster/redis/redis-store.js';
import { DEFAULT_EVENT_LIMITS, EventBudget, SessionEventStores } from '../../src/mcp/http/event-store.js';
import type { EventStoreLimits, SessionEvents } from '../../src/mcp/http/event-store.js';
import { createLogger } from '../../src/util/logger.js';
import { startTestRedis } from './redis-server.js';
import { captureLogger } from '../upstream/helpers.js';
import type { TestRedis } from './redis-server.js';

const logger = createLogger('silent');
let redis: TestRedis;
let connection: RedisConnection;

function message(n: number): JSONRPCMessage {
  return { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: n } };
}

function eventStores(limits: Partial<EventStoreLimits> = {}, maxBytesPerAgent?: number): SessionEventStores {
  return new SessionEventStores(new EventBudget(128 * 1024 * 1024, maxBytesPerAgent), { ...DEFAULT_EVENT_LIMITS, ...limits }, { store: new RedisStore(connection), ttlSeconds: 60 });
}

async function replay(store: SessionEvents, after: string): Promise<number[]> {
  const seen: number[] = [];
  await store.replayEventsAfter(after, { send: async (_id, m) => void seen.push((m as unknown as { params: { progress: number } }).params.progress) });
  return seen;
}

beforeAll(async () => {
  redis = await startTestRedis();
  connection = new RedisConnection({ url: redis.url, sealingKey: Buffer.alloc(32, 1), logger });
  await connection.connect();
});

afterAll(async () => {
  await connection.close();
  await redis.stop();
});

describe('SSE events over the Redis store', () => {
  it('replays the events after the last one the client saw, from its own session only', async () => {
    const stores = eventStores();
    const mine = stores.create('session-a');
    const ids: string[] = [];
    for (let i = 1; i <= 5; i++) ids.push(await mine.storeEvent('stream-1', message(i)));
    expect(await mine.getStreamIdForEventId?.(ids[1]!)).toBe('stream-1');
    expect(await replay(mine, ids[1]!)).toEqual([3, 4, 5]);
    const other = stores.create('session-b');
    await expect(replay(other, ids[1]!)).rejects.toThrow(/unknown Last-Event-ID/);
  });

  it('keeps events sealed in Redis', async () => {
    const store = eventStores().create('session-sealed');
    await store.storeEvent('s', { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'secret result 4242' } });
    const raw = await connection.client.zRange('cem:events:session-sealed:s', 0, -1);
    expect(raw).toHaveLength(1);
    expect(raw[0]).not.toContain('4242');
  });

  it('refuses a resume from an event past the per-stream bound', async () => {
    const stores = eventStores({ maxEventsPerStream: 3 });
    const store = stores.create('session-c');
    const ids: string[] = [];
    for (let i = 1; i <= 6; i++) ids.push(await store.storeEvent('s', message(i)));
    expect(await replay(store, ids[3]!)).toEqual([5, 6]);
    await expect(replay(store, ids[0]!)).rejects.toThrow(/no longer kept/);
  });

  it('bounds the bytes one agent keeps in Redis across its sessions, oldest first, and frees them on close', async () => {
    const stores = eventStores({ maxBytesPerSession: 1_000_000 }, 3_000);
    const flooder = [stores.create('flood-1', 'mallory'), stores.create('flood-2', 'mallory')];
    const big = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: `${n} ${'z'.repeat(400)}` } });
    for (let i = 0; i < 20; i++) await flooder[i % 2]!.storeEvent(`s${i % 2}`, big(i));
    const held = stores.usage('mallory').event_bytes;
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThanOrEqual(3_000);
    const lengths = await Promise.all(['flood-1:s0', 'flood-2:s1'].map((k) => connection.client.zCard(`cem:events:${k}`)));
    expect(lengths.reduce((a, b) => a + b, 0)).toBeLessThan(20);
    // Another agent is not touched by mallory's bound.
    const alice = stores.create('alice-1', 'alice');
    const id = await alice.storeEvent('s', message(1));
    await alice.storeEvent('s', message(2));
    expect(await replay(alice, id)).toEqual([2]);
    for (const f of flooder) f.close();
    expect(stores.usage('mallory').event_bytes).toBe(0);
  });

  it('warns at start when Redis may evict PII vaults (a maxmemory-policy other than noeviction)', async () => {
    await connection.client.configSet('maxmemory-policy', 'allkeys-lru');
    try {
      const capture = captureLogger();
      await new RedisStore(connection).checkEvictionPolicy(capture.logger);
      const warnings = capture.records.filter((r) => (r as { code?: string }).code === 'REDIS_EVICTION_POLICY');
      expect(warnings).toHaveLength(1);
      expect(JSON.stringify(warnings[0])).toMatch(/noeviction/);
    } finally {
      await connection.client.configSet('maxmemory-policy', 'noeviction');
    }
  });

  it('sends events while Redis is down and refuses to resume from them', async () => {
    const stores = eventStores();
    const store = stores.create('session-d');
    await redis.stop();
    try {
      const id = await store.storeEvent('s', message(1));
      expect(id).toMatch(/^s\.1$/);
      await expect(replay(store, id)).rejects.toThrow(/unavailable|no longer kept/);
    } finally {
      await redis.start();
    }
  });

});
