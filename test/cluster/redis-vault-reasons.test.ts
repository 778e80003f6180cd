// Why a token does not restore from vaults in Redis, as the embedded vaults say it: expired (this
// agent's token outlived pii.tokenTtlSeconds) or unknown (never issued to this agent); a token
// another agent minted through another daemon reads as unknown, exactly like a forged one, so a
// restore is no oracle for what other vaults hold. Two agents, two daemons' connections, one real
// redis-server; nothing Redis holds names an agent or a value.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from 'redis';
import { RedisConnection } from '../../src/cluster/redis/redis-connection.js';
import { RedisStore } from '../../src/cluster/redis/redis-store.js';
import { describeUnrestorable, PiiVaultStore } from '../../src/pii/index.js';
import { createLogger } from '../../src/util/logger.js';
import { startTestRedis } from './redis-server.js';
import type { TestRedis } from './redis-server.js';

const KEY = Buffer.alloc(32, 7);
const logger = createLogger('silent');
const EMAIL = 'grace@example.com';
let redis: TestRedis;
const connections: RedisConnection[] = [];

async function daemon(tokenTtlSeconds = 60): Promise<PiiVaultStore> {
  const c = new RedisConnection({ url: redis.url, sealingKey: KEY, logger });
  await c.connect();
  connections.push(c);
  return new PiiVaultStore({ store: new RedisStore(c), tokenTtlSeconds });
}

beforeAll(async () => {
  redis = await startTestRedis();
});

afterAll(async () => {
  for (const c of connections) await c.close();
  await redis.stop();
});

describe('PII vaults in Redis: why a restore failed', () => {
  it('says unknown for a token another agent minted through another daemon, as for a forged one, without its value', async () => {
    const first = await daemon();
    const second = await daemon();
    const token = (await first.tokenize({ sessionId: 'a-1', agent: 'alice' }, EMAIL)).text;
    const denied = await second.detokenize({ sessionId: 'm-1', agent: 'mallory' }, `send to ${token}`);
    expect(denied.text).toBe(`send to ${token}`);
    expect(denied.unknown).toEqual([token]);
    expect(denied.reasons).toEqual({ [token]: 'unknown' });
    const forged = await second.detokenize({ sessionId: 'm-1', agent: 'mallory' }, '[EMAIL_00000000]');
    expect(forged.reasons).toEqual({ '[EMAIL_00000000]': 'unknown' });
    expect(describeUnrestorable(denied.unknown, denied.reasons)).not.toMatch(/another agent/);
    expect(JSON.stringify(denied)).not.toContain(EMAIL);
    const deep = await second.detokenizeValue({ sessionId: 'm-1', agent: 'mallory' }, { to: [token] });
    expect(deep.reasons).toEqual({ [token]: 'unknown' });
    // the agent that made it restores it in another session through the other daemon
    expect((await second.detokenize({ sessionId: 'a-2', agent: 'alice' }, token)).text).toBe(EMAIL);
  });

  it("says expired once the agent's token outlived its lifetime, while another agent asking about it hears unknown", async () => {
    const s = await daemon(1);
    const token = (await s.tokenize({ sessionId: 'h-1', agent: 'heidi' }, 'heidi@example.org')).text;
    // Redis expires the token after its lifetime (1 s); generous margin for a loaded machine.
    await new Promise((r) => setTimeout(r, 2500));
    const later = await s.detokenize({ sessionId: 'h-2', agent: 'heidi' }, token);
    expect(later.unknown).toEqual([token]);
    expect(later.reasons).toEqual({ [token]: 'expired' });
    expect(describeUnrestorable(later.unknown, later.reasons)).toContain('expired');
    expect((await s.detokenize({ sessionId: 'i-1', agent: 'ivan' }, token)).reasons).toEqual({ [token]: 'unknown' });
    // issued again: the same token (the secret outlives its tokens), restorable again
    expect((await s.tokenize({ sessionId: 'h-3', agent: 'heidi' }, 'heidi@example.org')).text).toBe(token);
    expect((await s.detokenize({ sessionId: 'h-3', agent: 'heidi' }, token)).text).toBe('heidi@example.org');
  });

  it('keeps what Redis holds free of values and agent names', async () => {
    const s = await daemon();
    await s.tokenize({ sessionId: 'j-1', agent: 'judy-the-agent' }, 'judy@example.net');
    const raw = createClient({ url: redis.url });
    await raw.connect();
    try {
      const keys = await raw.keys('cem:pii:*');
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        expect(key).not.toMatch(/judy/);
        const type = await raw.type(key);
        const dump = type === 'hash' ? JSON.stringify(await raw.hGetAll(key)) : String(await raw.get(key));
        expect(dump).not.toMatch(/judy/);
      }
    } finally {
      await raw.close();
    }
  });
});
