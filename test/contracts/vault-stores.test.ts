// The vault contract (vault-contract.ts) against the embedded stores: memory only, and journaled
// to a folder (restarts restore; a second process on the folder agrees). The Redis store runs it in test/cluster/redis-contracts.test.ts.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MemoryVaultStore } from '../../src/pii/vault-store.js';
import { describeVaultStoreContract } from './vault-contract.js';

describeVaultStoreContract('memory', { store: async () => new MemoryVaultStore() });

let dir: string | undefined;
describeVaultStoreContract('memory, journaled to a folder', {
  async store() {
    dir = mkdtempSync(path.join(tmpdir(), 'vault-contract-'));
    return new MemoryVaultStore({ dir });
  },
  async reopen() {
    if (dir === undefined) throw new Error('reopen before store');
    return new MemoryVaultStore({ dir });
  },
  // Another process on the same folder: two stdio coordinators of one user share the data folder.
  async peer() {
    if (dir === undefined) throw new Error('peer before store');
    return new MemoryVaultStore({ dir });
  },
  async cleanup() {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  },
});
