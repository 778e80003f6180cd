// The vault contract (vault-contract.ts) against the embedded stores: memory only, and journaled
// to a folder (restarts restore; a second process on the folder agrees). The Redis store runs it in test/cluster/redis-contracts.test.ts.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PiiVaultStore } from '../../src/pii/vault-store.js';
import { describeVaultStoreContract } from './vault-contract.js';

/** The stores' epoch clock, moved on by pastTtl. */
let now = Date.now();
const TTL_SECONDS = 60;
const pastTtl = async (): Promise<void> => {
  now += (TTL_SECONDS + 1) * 1000;
};

describeVaultStoreContract('memory', { store: async () => new PiiVaultStore({ tokenTtlSeconds: TTL_SECONDS, now: () => now }), pastTtl });

let dir: string | undefined;
describeVaultStoreContract('memory, journaled to a folder', {
  async store() {
    dir = mkdtempSync(path.join(tmpdir(), 'vault-contract-'));
    return new PiiVaultStore({ dir, tokenTtlSeconds: TTL_SECONDS, now: () => now });
  },
  pastTtl,
  async reopen() {
    if (dir === undefined) throw new Error('reopen before store');
    return new PiiVaultStore({ dir });
  },
  // Another process on the same folder: two stdio coordinators of one user share the data folder.
  async peer() {
    if (dir === undefined) throw new Error('peer before store');
    return new PiiVaultStore({ dir });
  },
  async cleanup() {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  },
});
