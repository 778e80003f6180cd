// The quota and call gate contracts against the embedded implementations (the daemon's own quota
// count, NamespaceQuota, and the gate of one daemon, LOCAL_GATE, whose pools hold the limit), and
// against the shared ones over the in-memory store (StoreQuota, StoreCallGate: the code daemons
// of a cluster run over Redis, where test/cluster/redis-contracts.test.ts runs them again).

import { LOCAL_GATE, StoreCallGate } from '../../src/executor/call-gate.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { silentLogger } from '../../src/util/logger.js';
import { LOCAL_QUOTAS } from '../../src/workspace/quota.js';
import { storeQuotas } from '../../src/workspace/store-quota.js';
import { describeCallGateContract } from './call-gate-contract.js';
import { describeQuotaContract } from './quota-contract.js';

describeQuotaContract('this daemon', { counter: async (ns, root, limits) => LOCAL_QUOTAS(ns, async () => root, limits) });

// A "peer" shares the store, as a second daemon shares Redis.
let store = new MemoryStore();
describeQuotaContract('shared, over the memory store', {
  counter: async (ns, root, limits) => storeQuotas((store = new MemoryStore()), silentLogger())(ns, async () => root, limits),
  peer: async (ns, root, limits) => storeQuotas(store, silentLogger())(ns, async () => root, limits),
});

describeCallGateContract('one daemon', { gate: async () => LOCAL_GATE, holdsLimit: false });

const gateStore = new MemoryStore();
describeCallGateContract('shared, over the memory store', { gate: () => StoreCallGate.start(gateStore, silentLogger()), peer: () => StoreCallGate.start(gateStore, silentLogger()), holdsLimit: true });
