// PII vaults over the Redis store: a token minted through one daemon's connection restores through
// another's; agents never see each other's tokens; what Redis holds is sealed, and a value copied
// under another key does not open; change notices reach the other daemons; an outage fails with
// STORE_UNAVAILABLE and the store recovers when Redis returns.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from 'redis';
import { RedisConnection } from '../../src/cluster/redis/redis-connection.js';
import { RedisStore } from '../../src/cluster/redis/redis-store.js';
import { StoreChangeBus } from '../../src/cluster/change-bus.js';
import { PiiVaultStore } from '../../src/pii/index.js';
import { vaultFileId } from '../../src/pii/vault-journal.js';
import { createLogger } from '../../src/util/logger.js';
import { startTestRedis } from './redis-server.js';
import type { TestRedis } from './redis-server.js';

const KEY = Buffer.alloc(32, 7);
const logger = createLogger('silent');
let redis: TestRedis;
const connections: RedisConnection[] = [];

async function connection(key: Uint8Array = KEY): Promise<RedisConnection> {
  const c = new RedisConnection({ url: redis.url, sealingKey: key, logger });
  await c.connect();
  connections.push(c);
  return c;
}

function store(c: RedisConnection): PiiVaultStore {
  return new PiiVaultStore({ store: new RedisStore(c), tokenTtlSeconds: 60 });
}

beforeAll(async () => {
  redis = await startTestRedis();
});

afterAll(async () => {
  for (const c of connections) await c.close();
  await redis.stop();
});

describe('PII vaults over the Redis store', () => {
  it('restores through another daemon a token minted through one, and gives the same token again', async () => {
    const a = store(await connection());
    const b = store(await connection());
    const owner = { sessionId: 's-1', agent: 'alice' };
    const out = await a.tokenize(owner, 'mail ann@example.com or call +1 415 555 0100');
    expect(out.found).toBe(2);
    expect(out.text).not.toContain('ann@example.com');
    expect((await b.detokenize(owner, out.text)).text).toBe('mail ann@example.com or call +1 415 555 0100');
    expect((await b.tokenize(owner, 'ann@example.com')).text).toBe(out.text.match(/\[EMAIL_[0-9a-f]{8}\]/)?.[0]);
  });

  it('keeps agents apart across sessions and daemons', async () => {
    const agents = store(await connection());
    const u = (await agents.tokenize({ sessionId: 'one', agent: 'alice' }, 'bob@example.com')).text;
    expect((await store(await connection()).detokenize({ sessionId: 'two', agent: 'alice' }, u)).text).toBe('bob@example.com');
    expect((await agents.detokenize({ sessionId: 'one', agent: 'mallory' }, u)).unknown).toEqual([u]);
  });

  it('tokenizes and restores values deeply, keys included', async () => {
    const s = store(await connection());
    const owner = { sessionId: 's-deep', agent: 'a' };
    const value = { 'carol@example.org': [{ ip: '10.1.2.3', n: 1 }], note: null };
    const tokenized = await s.tokenizeValue(owner, value);
    expect(JSON.stringify(tokenized)).not.toMatch(/carol|10\.1\.2\.3/);
    expect((await s.detokenizeValue(owner, tokenized)).value).toEqual(value);
  });

  it('holds only sealed values in Redis, which another key cannot open', async () => {
    const c = await connection();
    await store(c).tokenize({ sessionId: 's-sealed', agent: 'a' }, 'dave@example.net');
    const raw = createClient({ url: redis.url });
    await raw.connect();
    try {
      const keys = await raw.keys('cem:pii:*');
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        const type = await raw.type(key);
        const dump = type === 'hash' ? JSON.stringify(await raw.hGetAll(key)) : type === 'set' ? JSON.stringify(await raw.sMembers(key)) : String(await raw.get(key));
        expect(dump).not.toContain('dave@example.net');
      }
    } finally {
      await raw.close();
    }
    const other = store(await connection(Buffer.alloc(32, 9)));
    await expect(other.tokenize({ sessionId: 's-sealed', agent: 'a' }, 'x@example.com')).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
  });

  it('does not open a value copied under another vault', async () => {
    const c = await connection();
    const s = store(c);
    const token = (await s.tokenize({ sessionId: 's', agent: 'alice' }, 'gina@example.com')).text;
    await s.tokenize({ sessionId: 's', agent: 'mallory' }, 'm@example.com');
    const [from, to] = [`cem:pii:${vaultFileId('alice')}:t:${token}`, `cem:pii:${vaultFileId('mallory')}:t:${token}`];
    await c.client.set(to, (await c.client.get(from)) as string);
    await expect(s.detokenize({ sessionId: 's', agent: 'mallory' }, token)).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
  });
});

describe('change notices over the Redis store', () => {
  it('delivers a notice to the other daemons, not back to the sender', async () => {
    const a = await StoreChangeBus.start(new RedisStore(await connection()), logger);
    const b = await StoreChangeBus.start(new RedisStore(await connection()), logger);
    const toA: string[][] = [];
    a.subscribe('skills', (names) => toA.push(names));
    const received = new Promise<string[]>((resolve) => b.subscribe('skills', resolve));
    a.publish({ topic: 'skills', names: ['my_skill'] });
    expect(await received).toEqual(['my_skill']);
    expect(toA).toEqual([]);
  });
});

describe('a Redis outage', () => {
  it('fails with STORE_UNAVAILABLE while Redis is down and recovers when it returns', async () => {
    const c = await connection();
    const s = store(c);
    const owner = { sessionId: 's-outage', agent: 'a' };
    await s.tokenize(owner, 'frank@example.com');
    await redis.stop();
    await expect(s.tokenize(owner, 'frank@example.com')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', message: expect.stringContaining('retry') });
    expect(c.health()).toMatchObject({ kind: 'redis', up: false });
    await redis.start();
    const deadline = Date.now() + 10_000;
    while (!c.up && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(c.health().up).toBe(true);
    expect((await s.tokenize(owner, 'frank@example.com')).found).toBe(1);
  }, 20_000);
});
