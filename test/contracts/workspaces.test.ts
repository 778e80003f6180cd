// The workspace contract (workspace-contract.ts) against the folder workspace with its embedded
// quota count, and against the in-memory workspace, which has no folder: the interface stands on
// its own. The folder workspace with the Redis quota count runs it in test/cluster/redis-contracts.test.ts.

import { afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Workspace } from '../../src/workspace/index.js';
import { MemoryWorkspace } from './memory-workspace.js';
import { describeWorkspaceContract } from './workspace-contract.js';

const base = mkdtempSync(path.join(tmpdir(), 'workspace-contract-'));
let n = 0;
afterAll(() => rmSync(base, { recursive: true, force: true }));

describeWorkspaceContract('folder', {
  store: async (limits) => new Workspace({ root: path.join(base, `ws-${++n}`), ...limits, sweepIntervalMs: 0 }),
});

describeWorkspaceContract('memory (no folder)', {
  store: async (limits) => new MemoryWorkspace(limits),
});
