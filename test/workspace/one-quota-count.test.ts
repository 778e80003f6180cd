// One domain, one store: the daemon that runs alone counts workspace quotas the way a cluster does,
// in its shared store (here its memory), so two counters of one namespace (two views, or two
// fronts) admit writes against one count and never both pass the last free byte.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { openSharedState } from '../../src/cluster/shared-state.js';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/util/logger.js';

const base = mkdtempSync(path.join(tmpdir(), 'one-quota-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

it('counts the embedded daemon\'s workspace quota in its shared store, one count per namespace', async () => {
  const { config } = loadConfig({ cwd: base, env: { CODE_EXEC_PII_VAULT_DIR: path.join(base, 'vaults') } });
  expect(config.redis).toBeUndefined();
  const shared = await openSharedState(config, silentLogger());
  try {
    const limits = { bytes: 1000, files: 10 };
    const one = shared.quotas('alice', async () => base, limits);
    const two = shared.quotas('alice', async () => base, limits);
    const admitted = await Promise.all([one.admit(600, 1, 'a.txt', 'alice'), two.admit(600, 1, 'b.txt', 'alice')]);
    expect(admitted.filter((refusal) => refusal === undefined)).toHaveLength(1);
    expect(admitted.find((refusal) => refusal !== undefined)).toMatch(/workspaceQuotaBytes/);
  } finally {
    await shared.close();
  }
});
