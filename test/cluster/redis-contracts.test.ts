// The storage contracts of test/contracts/ against the Redis implementations, on a real
// redis-server (slow suite, like every test that needs one): PII vaults, resumable events, the
// call gate and workspace quotas. Each contract is the one the embedded stores pass.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { RedisCallGate } from '../../src/cluster/redis/redis-call-gate.js';
import { RedisConnection } from '../../src/cluster/redis/redis-connection.js';
import { redisQuotas } from '../../src/cluster/redis/redis-quota.js';
import { RedisEventStores } from '../../src/cluster/redis/redis-event-store.js';
import { RedisVaultStore } from '../../src/cluster/redis/redis-vault-store.js';
import { createLogger } from '../../src/util/logger.js';
import { Workspace } from '../../src/workspace/index.js';
import { describeCallGateContract } from '../contracts/call-gate-contract.js';
import { describeEventStoreContract } from '../contracts/event-store-contract.js';
import { describeQuotaContract } from '../contracts/quota-contract.js';
import { describeVaultStoreContract } from '../contracts/vault-contract.js';
import { describeWorkspaceContract } from '../contracts/workspace-contract.js';
import { startTestRedis } from './redis-server.js';
import type { TestRedis } from './redis-server.js';

const logger = createLogger('silent');
let redis: TestRedis;
const connections: RedisConnection[] = [];
const gates: RedisCallGate[] = [];
const base = mkdtempSync(path.join(tmpdir(), 'redis-contracts-'));
let folders = 0;

async function connection(): Promise<RedisConnection> {
  const c = new RedisConnection({ url: redis.url, sealingKey: Buffer.alloc(32, 9), logger });
  await c.connect();
  connections.push(c);
  return c;
}

beforeAll(async () => {
  redis = await startTestRedis();
});

afterAll(async () => {
  for (const g of gates) await g.close();
  for (const c of connections) await c.close();
  await redis?.stop();
  rmSync(base, { recursive: true, force: true });
});

const VAULT_TTL_SECONDS = 60;
const vault = async (c: RedisConnection): Promise<RedisVaultStore> => new RedisVaultStore({ redis: c, scope: 'agent', ttlSeconds: VAULT_TTL_SECONDS, maxTokens: 10_000 });
describeVaultStoreContract('redis', {
  // Every key of the vaults carries the lifetime; Redis's own expiry is then made to happen now.
  async pastTtl() {
    const c = connections[connections.length - 1] as RedisConnection;
    const keys = await c.client.keys(`${c.prefix}pii:*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      const ttl = await c.client.ttl(key);
      expect(ttl, key).toBeGreaterThan(0);
      // The markers of issued tokens (hashes only) outlive their vault by a day on purpose: a
      // restore after the vault expired says "expired" rather than "unknown".
      if (key.startsWith(`${c.prefix}pii:issued:`)) {
        expect(ttl, key).toBeLessThanOrEqual(VAULT_TTL_SECONDS + 24 * 3600);
        continue;
      }
      expect(ttl, key).toBeLessThanOrEqual(VAULT_TTL_SECONDS);
      await c.client.pExpire(key, 1);
    }
    await new Promise((r) => setTimeout(r, 20));
  },
  async store() {
    const c = await connection();
    await c.client.flushAll();
    return vault(c);
  },
  reopen: async () => vault(await connection()),
  peer: async () => vault(await connection()),
});

describeEventStoreContract('redis', {
  factory: async ({ maxEventsPerStream }) => new RedisEventStores({ redis: await connection(), logger, ttlSeconds: 60, maxEventsPerStream }),
});

describeQuotaContract('redis', {
  counter: async (ns, root, limits) => redisQuotas(await connection(), logger)(ns, async () => root, limits),
  peer: async (ns, root, limits) => redisQuotas(await connection(), logger)(ns, async () => root, limits),
});

const gate = async (): Promise<RedisCallGate> => {
  const g = await RedisCallGate.start(await connection(), logger);
  gates.push(g);
  return g;
};
describeCallGateContract('redis', { gate, peer: gate, holdsLimit: true });

// Each test's store is a new folder under the same namespace names: a new count too.
describeWorkspaceContract('folder, quota counted in redis', {
  async store(limits) {
    const c = await connection();
    await c.client.flushAll();
    return new Workspace({ root: path.join(base, `ws-${++folders}`), ...limits, sweepIntervalMs: 0, quotaCounter: redisQuotas(c, logger) });
  },
});
