// Cluster membership in a real Redis: daemons see each other within a heartbeat, mint session ids
// that the shared ring assigns to themselves, publish per-agent session counts, and never shrink
// their ring when a peer vanishes from the registry (a Redis restart empties it), since minting
// against a ring missing a live daemon would send sessions to the wrong daemon.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterMembership, HEARTBEAT_MS } from '../../src/cluster/cluster-membership.js';
import { buildRing, serverFor } from '../../src/cluster/nginx-chash.js';
import { RedisConnection } from '../../src/cluster/redis/redis-connection.js';
import { createLogger } from '../../src/util/logger.js';
import { startTestRedis } from './redis-server.js';
import type { TestRedis } from './redis-server.js';

const logger = createLogger('silent');
let redis: TestRedis;
const connections: RedisConnection[] = [];
const members: ClusterMembership[] = [];

async function member(address: string, counts: Record<string, number> = {}): Promise<ClusterMembership> {
  const c = new RedisConnection({ url: redis.url, sealingKey: Buffer.alloc(32, 3), logger });
  await c.connect();
  connections.push(c);
  const m = new ClusterMembership(c, logger);
  m.reportSessions(() => new Map(Object.entries(counts)));
  await m.join(address);
  members.push(m);
  return m;
}

const beat = (): Promise<void> => new Promise((r) => setTimeout(r, HEARTBEAT_MS + 300));

beforeAll(async () => {
  redis = await startTestRedis();
});

afterAll(async () => {
  for (const m of members) await m.leave();
  for (const c of connections) await c.close();
  await redis.stop();
});

describe('ClusterMembership', () => {
  it('sees its peers, mints ids the ring gives to itself, and sums session counts across daemons', async () => {
    const a = await member('127.0.0.1:9001', { alice: 2 });
    const b = await member('127.0.0.1:9002', { alice: 3 });
    await beat();
    expect(a.peers).toEqual(['127.0.0.1:9001', '127.0.0.1:9002']);
    const ring = buildRing(a.peers);
    for (let i = 0; i < 50; i++) expect(serverFor(ring, a.mintSessionId())).toBe('127.0.0.1:9001');
    for (let i = 0; i < 50; i++) expect(serverFor(ring, b.mintSessionId())).toBe('127.0.0.1:9002');
    expect(await a.sessionsOf('alice', 2)).toBe(5);
    expect(await a.sessionsOf('bob', 0)).toBe(0);
  });

  it('keeps a peer in its ring after it vanished from the registry', async () => {
    const c = await member('127.0.0.1:9003');
    const d = await member('127.0.0.1:9004');
    await beat();
    expect(c.peers).toContain('127.0.0.1:9004');
    await d.leave();
    await beat();
    expect(c.peers).toContain('127.0.0.1:9004');
  });
});
