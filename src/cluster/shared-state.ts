// Where the state that daemons of a cluster must share lives, chosen once from the config: the
// shared store (src/store/) is this process's memory, or Redis with `redis`. PII vaults,
// resumable-stream events, change notices and workspace quotas are written once above it and
// wired here the same way for both; what needs a cluster at all (membership, the call gate across
// daemons) is added with Redis. The composition root wires whatever this returns and never asks
// which it got.

import type { Config } from '../config/config-types.js';
import { serverSettings } from '../config/defaults.js';
import { LOCAL_GATE, StoreCallGate } from '../executor/call-gate.js';
import type { CallGate } from '../executor/call-gate.js';
import { DEFAULT_EVENT_LIMITS, EVENT_BUDGET_BYTES, EventBudget, SessionEventStores } from '../mcp/http/event-store.js';
import type { SessionEventsFactory } from '../mcp/http/event-store.js';
import type { SharedStoreHealth } from '../mcp/mcp-types.js';
import { PiiVaultStore } from '../pii/index.js';
import type { VaultStore } from '../pii/index.js';
import { MemoryStore } from '../store/memory-store.js';
import type { SharedStore } from '../store/shared-store.js';
import type { Logger } from '../util/logger.js';
import { OPTIONAL_PACKAGES, isMissingPackage, missingPackageMessage } from '../util/optional-package.js';
import { parseSealingKey } from '../util/sealing.js';
import { StoreError } from '../util/store-error.js';
import type { QuotaCounterFactory } from '../workspace/quota.js';
import { storeQuotas } from '../workspace/store-quota.js';
import { StoreChangeBus } from './change-bus.js';
import type { ChangeBus } from './change-bus.js';
import { ClusterMembership } from './cluster-membership.js';
import type { RedisConnection } from './redis/redis-connection.js';
import type { RedisStore } from './redis/redis-store.js';

export interface SharedState {
  vaults: VaultStore;
  eventStores: SessionEventsFactory;
  bus: ChangeBus;
  /** Where an agent's calls in flight are counted: the daemon's own pools, or across the cluster. */
  gate: CallGate;
  /** Where workspace quotas are counted. */
  quotas: QuotaCounterFactory;
  /** Absent when embedded. */
  store?: { health(): SharedStoreHealth };
  /** The daemon's place in its cluster (session ids the load balancer routes back); absent when embedded. */
  membership?: ClusterMembership;
  close(): Promise<void>;
}

/** The Redis client is an optional dependency, loaded only in cluster mode. */
async function loadRedis(): Promise<{ RedisConnection: typeof RedisConnection; RedisStore: typeof RedisStore }> {
  try {
    const [{ RedisConnection }, { RedisStore }] = await Promise.all([import('./redis/redis-connection.js'), import('./redis/redis-store.js')]);
    return { RedisConnection, RedisStore };
  } catch (error) {
    if (isMissingPackage(error, OPTIONAL_PACKAGES.redis.name)) throw new StoreError('STORE_UNAVAILABLE', missingPackageMessage(OPTIONAL_PACKAGES.redis));
    throw error;
  }
}

/** The domains every daemon has, over `store`. */
async function domains(config: Readonly<Config>, logger: Logger, store: SharedStore, dir: string | undefined): Promise<Pick<SharedState, 'vaults' | 'eventStores' | 'bus' | 'quotas'>> {
  return {
    vaults: new PiiVaultStore({ store, tokenTtlSeconds: config.pii.tokenTtlSeconds, maxBytesPerAgent: config.pii.maxVaultBytesPerAgent, ...(dir !== undefined ? { dir } : {}) }),
    eventStores: new SessionEventStores(new EventBudget(EVENT_BUDGET_BYTES, serverSettings(config).sessionBytesPerAgent), DEFAULT_EVENT_LIMITS, { store, ttlSeconds: serverSettings(config).sessionIdleSeconds }),
    bus: await StoreChangeBus.start(store, logger.child({ subsystem: 'changes' })),
    quotas: storeQuotas(store, logger.child({ subsystem: 'workspace' })),
  };
}

export async function openSharedState(config: Readonly<Config>, logger: Logger): Promise<SharedState> {
  if (config.redis === undefined) {
    const store = new MemoryStore();
    // The memory store keeps nothing past this process: vaults are journaled to their folder.
    const shared = await domains(config, logger, store, config.pii.vaultDir);
    return {
      ...shared,
      gate: LOCAL_GATE,
      close: async () => {
        await shared.bus.close();
        await shared.vaults.close();
        await store.close();
      },
    };
  }
  const key = config.redisKey === undefined ? null : parseSealingKey(config.redisKey);
  if (key === null) throw new StoreError('STORE_UNAVAILABLE', 'redis needs a valid redisKey (64 hex digits, the same on every daemon): openssl rand -hex 32');
  const { RedisConnection, RedisStore } = await loadRedis();
  const redis = new RedisConnection({ url: config.redis, sealingKey: key, logger: logger.child({ subsystem: 'redis' }) });
  await redis.connect();
  try {
    const store = new RedisStore(redis);
    void store.checkEvictionPolicy(logger);
    const shared = await domains(config, logger, store, undefined);
    const gate = await StoreCallGate.start(store, logger.child({ subsystem: 'cluster' }));
    const membership = new ClusterMembership(redis, logger.child({ subsystem: 'cluster' }));
    logger.info({ redis: redis.endpoint }, 'shared state in Redis');
    return {
      ...shared,
      gate,
      store: redis,
      membership,
      close: async () => {
        await membership.leave();
        await gate.close();
        await shared.bus.close();
        await shared.vaults.close();
        await store.close();
      },
    };
  } catch (error) {
    await redis.close();
    throw error;
  }
}
