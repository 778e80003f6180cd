// The storage contracts of test/contracts/ against the Redis implementations, on a real
// redis-server (slow suite, like every test that needs one): PII vaults, resumable events, the
// call gate and workspace quotas. Each contract is the one the embedded stores pass.

import { afterAll, beforeAll } from 'vitest';
import { RedisConnection } from '../../src/cluster/redis-connection.js';
import { RedisEventStores } from '../../src/mcp/http/redis-event-store.js';
import { RedisVaultStore } from '../../src/pii/index.js';
import { createLogger } from '../../src/util/logger.js';
import { describeEventStoreContract } from '../contracts/event-store-contract.js';
import { describeVaultStoreContract } from '../contracts/vault-contract.js';
import { startTestRedis } from './redis-server.js';
import type { TestRedis } from './redis-server.js';

const logger = createLogger('silent');
let redis: TestRedis;
const connections: RedisConnection[] = [];

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
  for (const c of connections) await c.close();
  await redis?.stop();
});

const vault = async (c: RedisConnection): Promise<RedisVaultStore> => new RedisVaultStore({ redis: c, scope: 'agent', ttlSeconds: 60, maxTokens: 10_000 });
describeVaultStoreContract('redis', {
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
