// How the executor's Python pool is made: on demand unless kept warm (sandbox.pythonWarm), idle
// processes exit after sandbox.pythonIdleSeconds, interpreters start from the memory snapshot in
// the data directory (workers/python/snapshot.ts), and a standby exists once swaps happen.

import path from 'node:path';
import type { Config } from '../config/config-types.js';
import { packageRoot } from '../config/defaults.js';
import type { RuntimePoolPlan } from './pool-types.js';

/** Default sandbox.pythonIdleSeconds: an idle Python process exits after this long. */
export const DEFAULT_PYTHON_IDLE_SECONDS = 300;

/** Where the Python interpreters' memory snapshot is kept: the data directory's cache (the package root from a clone). */
export function pythonSnapshotDir(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir ?? packageRoot(), '.cache', 'python');
}

/** What tests and the exec command change: the standby policy and how long a call may wait for a start. */
export interface PythonPoolTuning {
  pythonStandby?: 'always' | 'on-swap' | 'never';
  startWaitMs?: number;
}

/** The Python pool's own plan (its row in runtimes.ts; the executor adds what every pool shares). */
export function pythonPoolOptions(config: Config, tuning: PythonPoolTuning = {}): RuntimePoolPlan {
  const { sandbox, limits } = config;
  const warm = sandbox.pythonWarm === true;
  return {
    process: {
      threads: 1,
      maxMemoryMb: limits.maxMemoryMb,
      memoryPollMs: 20,
      pythonSnapshotDir: pythonSnapshotDir(config),
      standby: tuning.pythonStandby ?? (warm ? 'always' : 'on-swap'),
    },
    count: sandbox.pythonProcesses,
    slots: sandbox.pythonProcesses,
    lazy: !warm,
    idleExitMs: (sandbox.pythonIdleSeconds ?? DEFAULT_PYTHON_IDLE_SECONDS) * 1000,
    ...(tuning.startWaitMs ? { startWaitMs: tuning.startWaitMs } : {}),
  };
}
