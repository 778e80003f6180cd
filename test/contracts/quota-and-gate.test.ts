// The quota contract against the one quota count (StoreQuota) over the in-memory store, as one
// daemon runs it and as two daemons sharing a store do; the call gate contract against the gate of
// one daemon (LOCAL_GATE, whose pools hold the limit) and the shared one over the in-memory store
// (the daemons of a cluster run both over Redis, where test/cluster/redis-contracts.test.ts runs
// them again).

import { LOCAL_GATE, StoreCallGate } from '../../src/executor/call-gate.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { silentLogger } from '../../src/util/logger.js';
import { storeQuotas } from '../../src/workspace/store-quota.js';
import { describeCallGateContract } from './call-gate-contract.js';
import { describeQuotaContract } from './quota-contract.js';

describeQuotaContract('this daemon', { counter: async (ns, root, limits) => storeQuotas()(ns, async () => root, limits) });

// A "peer" shares the store, as a second daemon shares Redis.
let store = new MemoryStore();
describeQuotaContract('shared, over the memory store', {
  counter: async (ns, root, limits) => storeQuotas((store = new MemoryStore()), silentLogger())(ns, async () => root, limits),
  peer: async (ns, root, limits) => storeQuotas(store, silentLogger())(ns, async () => root, limits),
});

describeCallGateContract('one daemon', { gate: async () => LOCAL_GATE, holdsLimit: false });

const gateStore = new MemoryStore();
describeCallGateContract('shared, over the memory store', { gate: () => StoreCallGate.start(gateStore, silentLogger()), peer: () => StoreCallGate.start(gateStore, silentLogger()), holdsLimit: true });
