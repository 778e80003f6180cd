// Why a token does not restore from the Redis vaults, as the local vault says it: expired (this
// agent's vault idled out past pii.tokenTtlSeconds), or unknown (never issued, or minted by another
// agent through another daemon: a restore is no oracle, and its value is never shown). Two agents, two daemons'
// connections, one real redis-server.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from 'redis';
import { RedisConnection } from '../../src/cluster/redis/redis-connection.js';
import { RedisVaultStore } from '../../src/cluster/redis/redis-vault-store.js';
import { describeUnrestorable } from '../../src/pii/vault-store.js';
import { createLogger } from '../../src/util/logger.js';
import { startTestRedis } from './redis-server.js';
import type { TestRedis } from './redis-server.js';

const KEY = Buffer.alloc(32, 7);
const logger = createLogger('silent');
const EMAIL = 'grace@example.com';
let redis: TestRedis;
const connections: RedisConnection[] = [];

async function daemon(ttlSeconds = 60, scope: 'agent' | 'session' = 'agent'): Promise<RedisVaultStore> {
  const c = new RedisConnection({ url: redis.url, sealingKey: KEY, logger });
  await c.connect();
  connections.push(c);
  return new RedisVaultStore({ redis: c, scope, ttlSeconds, maxTokens: 1000 });
}

beforeAll(async () => {
  redis = await startTestRedis();
});

afterAll(async () => {
  for (const c of connections) await c.close();
  await redis.stop();
});

describe('RedisVaultStore: why a restore failed', () => {
  it('says unknown (no oracle) for a token minted by another agent through another daemon, without its value', async () => {
    const first = await daemon();
    const second = await daemon();
    const token = (await first.tokenize({ sessionId: 'a-1', agent: 'alice' }, EMAIL)).text;
    const denied = await second.detokenize({ sessionId: 'm-1', agent: 'mallory' }, `send to ${token}`);
    expect(denied.text).toBe(`send to ${token}`);
    expect(denied.unknown).toEqual([token]);
    expect(denied.reasons).toEqual({ [token]: 'unknown' });
    expect(describeUnrestorable(denied.unknown, denied.reasons)).not.toMatch(/another agent/);
    expect(JSON.stringify(denied)).not.toContain(EMAIL);
    const deep = await second.detokenizeValue({ sessionId: 'm-1', agent: 'mallory' }, { to: [token] });
    expect(deep.reasons).toEqual({ [token]: 'unknown' });
    // the agent that made it restores it in another session through the other daemon
    expect((await second.detokenize({ sessionId: 'a-2', agent: 'alice' }, token)).text).toBe(EMAIL);
  });

  it('says unknown for a token no agent was given', async () => {
    const s = await daemon();
    const forged = await s.detokenize({ sessionId: 'a-1', agent: 'alice' }, '[EMAIL_00000000]');
    expect(forged.reasons).toEqual({ '[EMAIL_00000000]': 'unknown' });
  });

  it("says expired once the agent's vault idled out, while another agent asking about it hears unknown", async () => {
    const s = await daemon(1);
    const token = (await s.tokenize({ sessionId: 'h-1', agent: 'heidi' }, 'heidi@example.org')).text;
    // Redis expires the vault after its idle TTL (1 s); generous margin for a loaded machine.
    await new Promise((r) => setTimeout(r, 2500));
    const later = await s.detokenize({ sessionId: 'h-2', agent: 'heidi' }, token);
    expect(later.unknown).toEqual([token]);
    expect(later.reasons).toEqual({ [token]: 'expired' });
    expect(describeUnrestorable(later.unknown, later.reasons)).toContain('expired');
    expect((await s.detokenize({ sessionId: 'i-1', agent: 'ivan' }, token)).reasons).toEqual({ [token]: 'unknown' });
  });

  it('keeps what Redis holds about issued tokens free of values and agent names', async () => {
    const s = await daemon();
    await s.tokenize({ sessionId: 'j-1', agent: 'judy-the-agent' }, 'judy@example.net');
    const raw = createClient({ url: redis.url });
    await raw.connect();
    try {
      for (const key of await raw.keys('cem:pii:*')) {
        expect(key).not.toMatch(/judy/);
        const type = await raw.type(key);
        const dump = type === 'hash' ? JSON.stringify(await raw.hGetAll(key)) : type === 'set' ? JSON.stringify(await raw.sMembers(key)) : String(await raw.get(key));
        expect(dump).not.toMatch(/judy/);
      }
    } finally {
      await raw.close();
    }
  });
});
