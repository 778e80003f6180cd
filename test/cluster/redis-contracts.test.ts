// The storage contracts of test/contracts/ over the Redis store, on a real redis-server (slow
// suite, like every test that needs one): the shared-store primitives themselves, then the domains
// written once above them (PII vaults and their rules, resumable events, the call gate) and the
// workspace quota. Each contract is the one the embedded stores pass.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { RedisConnection } from '../../src/cluster/redis/redis-connection.js';
import { RedisStore } from '../../src/cluster/redis/redis-store.js';
import { StoreCallGate } from '../../src/executor/call-gate.js';
import { DEFAULT_EVENT_LIMITS, EventBudget, SessionEventStores } from '../../src/mcp/http/event-store.js';
import { PiiVaultStore } from '../../src/pii/index.js';
import { createLogger } from '../../src/util/logger.js';
import { Workspace } from '../../src/workspace/index.js';
import { storeQuotas } from '../../src/workspace/store-quota.js';
import { describeCallGateContract } from '../contracts/call-gate-contract.js';
import { describeEventStoreContract } from '../contracts/event-store-contract.js';
import { describeQuotaContract } from '../contracts/quota-contract.js';
import { describeSharedStoreContract } from '../contracts/shared-store-contract.js';
import { describeVaultStoreContract } from '../contracts/vault-contract.js';
import { describeWorkspaceContract } from '../contracts/workspace-contract.js';
import { describeVaultRules } from '../pii/vault-rules.js';
import { startTestRedis } from './redis-server.js';
import type { TestRedis } from './redis-server.js';

const logger = createLogger('silent');
let redis: TestRedis;
const connections: RedisConnection[] = [];
const gates: StoreCallGate[] = [];
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

describeSharedStoreContract('redis', {
  store: async () => new RedisStore(await connection()),
  peer: async () => new RedisStore(await connection()),
});

describeVaultRules('redis', async () => {
  const c = await connection();
  await c.client.flushAll();
  return new RedisStore(c);
});

const VAULT_TTL_SECONDS = 60;
const vault = (c: RedisConnection): PiiVaultStore => new PiiVaultStore({ store: new RedisStore(c), tokenTtlSeconds: VAULT_TTL_SECONDS });
describeVaultStoreContract('redis', {
  // Every key of the vaults carries the lifetime; Redis's own expiry is then made to happen now.
  async pastTtl() {
    const c = connections[connections.length - 1] as RedisConnection;
    const keys = await c.client.keys(`${c.prefix}pii:*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      const ttl = await c.client.ttl(key);
      expect(ttl, key).toBeGreaterThan(0);
      // The secret and the markers of issued tokens (no value) outlive the tokens by a day on
      // purpose: a restore after expiry says "expired", and a value issued again gets its token back.
      if (/:(x:\[|secret$)/.test(key)) {
        expect(ttl, key).toBeLessThanOrEqual(VAULT_TTL_SECONDS + 24 * 3600);
        continue;
      }
      // Charges live a lifetime past the end of their time bucket (1/24 of it).
      expect(ttl, key).toBeLessThanOrEqual(VAULT_TTL_SECONDS + VAULT_TTL_SECONDS / 24 + 1);
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
  factory: async ({ maxEventsPerStream }) =>
    new SessionEventStores(new EventBudget(64 * 1024 * 1024), { ...DEFAULT_EVENT_LIMITS, maxEventsPerStream }, { store: new RedisStore(await connection()), ttlSeconds: 60 }),
});

describeQuotaContract('redis', {
  counter: async (ns, root, limits) => storeQuotas(new RedisStore(await connection()), logger)(ns, async () => root, limits),
  peer: async (ns, root, limits) => storeQuotas(new RedisStore(await connection()), logger)(ns, async () => root, limits),
});

const gate = async (): Promise<StoreCallGate> => {
  const g = await StoreCallGate.start(new RedisStore(await connection()), logger);
  gates.push(g);
  return g;
};
describeCallGateContract('redis', { gate, peer: gate, holdsLimit: true });

// Each test's store is a new folder under the same namespace names: a new count too.
describeWorkspaceContract('folder, quota counted in redis', {
  async store(limits) {
    const c = await connection();
    await c.client.flushAll();
    return new Workspace({ root: path.join(base, `ws-${++folders}`), ...limits, sweepIntervalMs: 0, quotaCounter: storeQuotas(new RedisStore(c), logger) });
  },
});
