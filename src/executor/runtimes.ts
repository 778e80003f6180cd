// One row per runtime: everything the coordinator knows of a language lives here, and the pool,
// the executor, the pool host, detection, skills and the MCP tools consult the row instead of
// asking "is this Python?". A third language is one new row here plus its worker folder.
// The language's own facts (names, files, skills) are its row in src/config/languages.ts, below
// the domains that read them (skills); this row adds how the executor runs it.
// The worker paths are written once, in `worker`, so laying out workers/ anew is one edit here.

import { pathToFileURL } from 'node:url';
import path from 'node:path';
import type { Config } from '../config/config-types.js';
import type { ExecutionRequest, Language } from './executor-types.js';
import type { RuntimeProcess } from '../../workers/kit/protocol.js';
import { JAVASCRIPT_LANGUAGE, PYTHON_LANGUAGE } from '../config/languages.js';
import type { LanguageRow } from '../config/languages.js';
import type { LogCode } from '../util/errors.js';
import type { JsPoolTuning, RuntimePoolPlan } from './pool-types.js';
import { jsTuning } from './pool-types.js';
import { pythonPoolOptions } from './python-pool.js';
import type { PythonPoolTuning } from './python-pool.js';
import { workerScript } from './sandbox-launch.js';

/** What tests, the bench and the exec command tune of the pools (ExecutorOptions.pool). */
export type { RuntimePoolPlan } from './pool-types.js';

export type RuntimeTuning = JsPoolTuning & PythonPoolTuning & { jsOnDemand?: boolean };

/** A runtime's row: its language's facts (src/config/languages.ts) and how the executor runs it. */
export interface RuntimeRow extends LanguageRow {
  /** The worker thread script: relative to dist/workers/ without '.js', or an absolute path (a test build's worker). */
  readonly worker: string;
  /** What its sandbox processes must know (workers/kit/protocol.ts RuntimeProcess): kind, stack, dispatch, start-up timeout. */
  readonly process: Omit<RuntimeProcess, 'workerFile' | 'strategy'>;
  /**
   * How its sandbox process supervises its threads (workers/kit/runtime-strategy.ts: interrupt,
   * recycle, replace), a path like `worker`. Every runtime's calls take the same path: over each
   * thread's own link (thread-links.ts).
   */
  readonly strategy: string;
  /** 'awaited': the executor's start waits for the pool (no cold start); 'background': started without waiting (on demand unless kept warm). */
  readonly start: 'awaited' | 'background';
  /** The call carries the agent's tool names up front (Python's prelude defines a function per tool). */
  readonly toolNamesUpFront: boolean;
  /** The pool's size and start policy, or undefined when the config disables the runtime. */
  pool(config: Config, tuning: RuntimeTuning): RuntimePoolPlan | undefined;
  /**
   * A command that runs a single call (exec): one process of this runtime, what that sets of
   * sandbox.* and of the pools' tuning. `expected`: the call is expected in this runtime, which then
   * starts with the executor; otherwise a process starts only if the call turns out to need one.
   */
  singleCall(expected: boolean): { sandbox: Partial<Config['sandbox']>; tuning: RuntimeTuning };
  /** The log code of a pool of this runtime that failed to start (one of the closed LOG_CODES). */
  readonly poolFailedCode: LogCode;
}

/** JavaScript and TypeScript: SES Compartments in piscina threads, fresh per call. */
export const JAVASCRIPT_RUNTIME: RuntimeRow = {
  ...JAVASCRIPT_LANGUAGE,
  worker: 'js/sandbox-worker',
  strategy: 'js/strategy',
  process: { kind: 'js', stackSizeMb: 4, dispatch: 'hardened', startupTimeoutMs: 30_000 },
  start: 'awaited',
  toolNamesUpFront: false,
  pool(config, tuning) {
    const { sandbox, limits } = config;
    return {
      process: { threads: sandbox.threadsPerProcess, maxMemoryMb: limits.maxMemoryMb, memoryPollMs: 20, ...jsTuning(tuning) },
      count: sandbox.processes,
      slots: sandbox.processes * sandbox.threadsPerProcess,
      ...(tuning.jsOnDemand ? { lazy: true } : {}),
    };
  },
  singleCall: (expected) => ({ sandbox: { processes: 1, threadsPerProcess: 1 }, tuning: expected ? {} : { jsOnDemand: true } }),
  poolFailedCode: 'JS_POOL_FAILED',
};

/**
 * Python: Pyodide, one interpreter per process bound to one agent and replaced before another's;
 * on demand unless kept warm (python-pool.ts). Pyodide loads in about 5 s idle and 10-20 s on a
 * loaded 2-core machine; CPython's recursion needs a deep native stack.
 */
export const PYTHON_RUNTIME: RuntimeRow = {
  ...PYTHON_LANGUAGE,
  worker: 'python/python-worker',
  strategy: 'python/strategy',
  process: { kind: 'python', stackSizeMb: 64, dispatch: 'bound', startupTimeoutMs: 120_000, serialization: 'advanced' },
  start: 'background',
  toolNamesUpFront: true,
  pool: (config, tuning) => (config.sandbox.pythonProcesses > 0 ? pythonPoolOptions(config, tuning) : undefined),
  // One interpreter whatever sandbox.pythonProcesses says (exec ran Python so before); expected:
  // started at once, without the standby interpreter that only a second agent would need.
  singleCall: (expected) => ({ sandbox: { pythonProcesses: 1, pythonWarm: expected }, tuning: expected ? { pythonStandby: 'never' } : {} }),
  poolFailedCode: 'PYTHON_POOL_FAILED',
};

/** The runtimes of this build, in the order they start. */
export const RUNTIMES: readonly RuntimeRow[] = Object.freeze([JAVASCRIPT_RUNTIME, PYTHON_RUNTIME]);

/** The first language of the runtime whose processes are of `kind` ('js' -> 'javascript'), or undefined. */
export function languageOfKind(kind: string, runtimes: readonly RuntimeRow[] = RUNTIMES): string | undefined {
  return runtimes.find((r) => r.process.kind === kind)?.languages[0];
}

/** The row that runs `language`, or undefined. */
export function runtimeFor(language: string, runtimes: readonly RuntimeRow[] = RUNTIMES): RuntimeRow | undefined {
  return runtimes.find((r) => r.languages.includes(language));
}

/** The request that runs `row`'s parse check on `code` (see RuntimeRow.parseCheck). */
export function parseCheckRequest(row: RuntimeRow, code: string, timeoutSeconds: number): ExecutionRequest & { language: Language } {
  return { code: row.parseCheck ?? '', language: (row.languages[0] ?? '') as Language, contextVars: { src: code }, timeoutSeconds, memoryMb: 256 };
}

/** The row's process part with its worker script resolved to a file URL. */
export function runtimeProcess(row: RuntimeRow): RuntimeProcess {
  const url = (script: string): string => pathToFileURL(path.isAbsolute(script) ? script : workerScript(script)).href;
  return { ...row.process, workerFile: url(row.worker), strategy: url(row.strategy) };
}
