// Where the state that daemons of a cluster must share lives, chosen once from the config: with
// `redis`, PII vaults, resumable-stream events, change notices and the cluster-wide counters (calls
// in flight, workspace quotas) go to Redis; without it, the embedded defaults (in-memory vaults and
// events, no peers to notify, per-daemon counters). The composition root wires
// whatever this returns and never asks which it got.

import type { Config } from '../config/config-types.js';
import { LOCAL_GATE } from '../executor/call-gate.js';
import type { CallGate } from '../executor/call-gate.js';
import { serverSettings } from '../config/defaults.js';
import type { SessionEventsFactory } from '../mcp/http/event-store.js';
import type { SharedStoreHealth } from '../mcp/mcp-types.js';
import { MemoryVaultStore } from '../pii/index.js';
import type { VaultStore } from '../pii/index.js';
import type { Logger } from '../util/logger.js';
import type { QuotaCounterFactory } from '../workspace/quota.js';
import { NO_PEERS_BUS } from './change-bus.js';
import { ClusterMembership } from './cluster-membership.js';
import type { ChangeBus } from './change-bus.js';
import { RedisCallGate } from './redis/redis-call-gate.js';
import { RedisChangeBus } from './redis/redis-change-bus.js';
import type { RedisConnection } from './redis/redis-connection.js';
import { RedisEventStores } from './redis/redis-event-store.js';
import { redisQuotas } from './redis/redis-quota.js';
import { RedisVaultStore } from './redis/redis-vault-store.js';
import type { VaultScope } from './redis/redis-vault-store.js';
import { parseSealingKey } from '../util/sealing.js';
import { StoreError } from '../util/store-error.js';
import { OPTIONAL_PACKAGES, isMissingPackage, missingPackageMessage } from '../util/optional-package.js';

/** The Redis client is an optional dependency, loaded only in cluster mode. */
async function loadRedisConnection(): Promise<typeof RedisConnection> {
  try {
    return (await import('./redis/redis-connection.js')).RedisConnection;
  } catch (error) {
    if (isMissingPackage(error, OPTIONAL_PACKAGES.redis.name)) throw new StoreError('STORE_UNAVAILABLE', missingPackageMessage(OPTIONAL_PACKAGES.redis));
    throw error;
  }
}

export interface SharedState {
  vaults: VaultStore;
  /** Absent: sessions keep their events in memory (the HTTP front's default). */
  eventStores?: SessionEventsFactory;
  bus: ChangeBus;
  /** Where an agent's calls in flight are counted: the daemon's own pools, or across the cluster. */
  gate: CallGate;
  /** Where workspace quotas are counted; absent: by each daemon (the workspace's default). */
  quotas?: QuotaCounterFactory;
  /** Absent when embedded. */
  store?: { health(): SharedStoreHealth };
  /** The daemon's place in its cluster (session ids the load balancer routes back); absent when embedded. */
  membership?: ClusterMembership;
  close(): Promise<void>;
}

/**
 * How PII vaults are keyed in a shared store: by agent when agents are configured (a vault then
 * follows its agent to any daemon and any new session after a failover; one agent's sessions
 * share it), by MCP session otherwise (every anonymous client is the same local agent, so keying
 * by agent would let any client restore any other's tokens).
 */
export function vaultScopeFor(_config: Readonly<Config>): VaultScope {
  // Vaults follow agents (SPEC, PII): without agents configured every client is the one local agent.
  return 'agent';
}

export async function openSharedState(config: Readonly<Config>, logger: Logger): Promise<SharedState> {
  const vaultOptions = {
    maxTokensPerSession: config.pii.maxTokensPerSession,
    tokenTtlSeconds: config.pii.tokenTtlSeconds,
    ...(config.pii.vaultDir !== undefined ? { dir: config.pii.vaultDir } : {}),
  };
  if (config.redis === undefined) {
    const vaults = new MemoryVaultStore(vaultOptions);
    return { vaults, bus: NO_PEERS_BUS, gate: LOCAL_GATE, close: () => vaults.close() };
  }
  const key = config.redisKey === undefined ? null : parseSealingKey(config.redisKey);
  if (key === null) throw new StoreError('STORE_UNAVAILABLE', 'redis needs a valid redisKey (64 hex digits, the same on every daemon): openssl rand -hex 32');
  const RedisConnectionClass = await loadRedisConnection();
  const redis = new RedisConnectionClass({ url: config.redis, sealingKey: key, logger: logger.child({ subsystem: 'redis' }) });
  await redis.connect();
  try {
    const bus = await RedisChangeBus.start(redis, logger.child({ subsystem: 'changes' }));
    const vaults = new RedisVaultStore({ redis, scope: vaultScopeFor(config), ttlSeconds: config.pii.tokenTtlSeconds, maxTokens: config.pii.maxTokensPerSession });
    const eventStores = new RedisEventStores({ redis, logger, ttlSeconds: serverSettings(config).sessionIdleSeconds });
    logger.info({ redis: redis.endpoint, vault_scope: vaultScopeFor(config) }, 'shared state in Redis');
    const membership = new ClusterMembership(redis, logger.child({ subsystem: 'cluster' }));
    const gate = await RedisCallGate.start(redis, logger.child({ subsystem: 'cluster' }));
    return {
      vaults,
      eventStores,
      bus,
      gate,
      quotas: redisQuotas(redis, logger.child({ subsystem: 'workspace' })),
      store: redis,
      membership,
      close: async () => {
        await membership.leave();
        await gate.close();
        await bus.close();
        await vaults.close();
        await redis.close();
      },
    };
  } catch (error) {
    await redis.close();
    throw error;
  }
}
