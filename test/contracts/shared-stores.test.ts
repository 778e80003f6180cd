// The shared-store contract (shared-store-contract.ts) against the in-memory store; the Redis store
// runs it in test/cluster/redis-contracts.test.ts.

import { MemoryStore } from '../../src/store/memory-store.js';
import { describeSharedStoreContract } from './shared-store-contract.js';

// One process is the whole backing: a "peer" is the same store.
let shared: MemoryStore | undefined;
describeSharedStoreContract('memory', {
  store: async () => (shared = new MemoryStore()),
  peer: async () => {
    if (shared === undefined) throw new Error('peer before store');
    return shared;
  },
});
