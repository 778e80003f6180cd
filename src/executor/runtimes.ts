// One row per runtime: everything the coordinator knows of a language lives here, and the pool,
// the executor, the pool host, detection, skills and the MCP tools consult the row instead of
// asking "is this Python?". A third language is one new row here plus its worker folder.
// The worker paths are written once, in `worker`, so laying out workers/ anew is one edit here.

import { pathToFileURL } from 'node:url';
import path from 'node:path';
import type { Config } from '../config/config-types.js';
import type { ExecutionRequest, Language } from './executor-types.js';
import type { RuntimeProcess, SandboxProcessOptions } from '../../workers/protocol.js';
import type { JsPoolTuning } from './pool-types.js';
import { jsTuning } from './pool-types.js';
import { pythonPoolOptions } from './python-pool.js';
import type { PythonPoolTuning } from './python-pool.js';
import { workerScript } from './sandbox-launch.js';

/** What tests, the bench and one-shot commands tune of the pools (ExecutorOptions.pool). */
export type RuntimeTuning = JsPoolTuning & PythonPoolTuning & { jsOnDemand?: boolean };

/** How many processes of a runtime a daemon runs, and how they start and stop (from the config). */
export interface RuntimePoolPlan {
  /** What the row's `process` part leaves to the config: threads, heap, polling, standby, tuning. */
  process: Omit<SandboxProcessOptions, keyof RuntimeProcess>;
  /** Processes at most. */
  count: number;
  /** Slots the agents' shares are cut from (processes x threads). */
  slots: number;
  /** On demand: no process at start; a call that needs one starts it. */
  lazy?: boolean;
  /** On demand: a process idle this long exits, ms (0 or absent: they stay). */
  idleExitMs?: number;
  /** How long a call may wait for a sandbox to start, ms (default on-demand.ts START_WAIT_MS). */
  startWaitMs?: number;
}

export interface RuntimeRow {
  /** execute_code's `language` values this runtime runs; the first names the runtime in messages and health. */
  readonly languages: readonly string[];
  /** The language as people write it ('JavaScript'), for messages. */
  readonly label: string;
  /** The worker thread script: relative to dist/workers/ without '.js', or an absolute path (a test build's worker). */
  readonly worker: string;
  /** What its sandbox processes must know (workers/protocol.ts RuntimeProcess): kind, stack, dispatch, preprocessing, start-up timeout. */
  readonly process: Omit<RuntimeProcess, 'workerFile'>;
  /**
   * 'direct': calls go to the worker thread over its own host link when the executor has one
   * (thread-links.ts), and awaited host calls come back on it; 'relay': calls and host calls go
   * through the sandbox process's main thread.
   */
  readonly callPath: 'direct' | 'relay';
  /** 'awaited': the executor's start waits for the pool (no cold start); 'background': started without waiting (on demand unless kept warm). */
  readonly start: 'awaited' | 'background';
  /** The call carries the agent's tool names up front (Python's prelude defines a function per tool). */
  readonly toolNamesUpFront: boolean;
  /** The pool's size and start policy, or undefined when the config disables the runtime. */
  pool(config: Config, tuning: RuntimeTuning): RuntimePoolPlan | undefined;
  /** The option that disables the runtime, for the message a call in a disabled language gets. */
  readonly disabledBy?: string;
  /** What the one-shot `exec` command sets of sandbox.*: one process of the language it runs, none of the others it can do without. */
  oneShot(used: boolean): Partial<Config['sandbox']>;
  /**
   * A program of this runtime that parses the code in its global `src` without running it and
   * returns null, or { line, message } for a syntax error (execute_code's detection, skill saves).
   */
  readonly parseCheck?: string;
  /** `exec --language` short names (js, py) beside the languages themselves. */
  readonly aliases: Readonly<Record<string, string>>;
  /** A file's extension that names its language (`exec FILE`), lower case with the dot. */
  readonly extensions: Readonly<Record<string, string>>;
  readonly skills: RuntimeSkills;
}

/** A runtime's skills (src/skills): their file, how they are read and compiled, how they are used. */
export interface RuntimeSkills {
  /** The code file of a skill folder, per language. */
  readonly codeFiles: Readonly<Record<string, string>>;
  /**
   * 'es-module': parsed and compiled at save, its imports resolved and pinned then (import_skill);
   * 'python-source': kept as written, its top-level definitions exported, checked by the runtime's
   * parse check; it loads other skills when it runs (load_skill).
   */
  readonly format: 'es-module' | 'python-source';
  /** The lines of a skill's SKILL.md that show how to use it, in a fenced block. */
  usage(name: string, language: string, exportNames: readonly string[]): string[];
  /** What an 'es-module' skill may import, said in the refusal of any other (a skill imports only skills of its own runtime). */
  readonly importsOnly: string;
}

/** JavaScript and TypeScript: SES Compartments in piscina threads, fresh per call, on the direct path. */
export const JAVASCRIPT_RUNTIME: RuntimeRow = {
  languages: ['javascript', 'typescript'],
  label: 'JavaScript',
  worker: 'sandbox-worker',
  process: { kind: 'js', stackSizeMb: 4, dispatch: 'hardened', preprocess: 'javascript', startupTimeoutMs: 30_000 },
  callPath: 'direct',
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
  oneShot: () => ({ processes: 1, threadsPerProcess: 1 }),
  aliases: { js: 'javascript', ts: 'typescript' },
  extensions: { '.js': 'javascript', '.mjs': 'javascript', '.cjs': 'javascript', '.ts': 'typescript', '.mts': 'typescript', '.cts': 'typescript' },
  skills: {
    codeFiles: { javascript: 'index.js', typescript: 'index.ts' },
    format: 'es-module',
    usage(name, language, exportNames) {
      const names = exportNames.filter((n) => /^[A-Za-z_$][\w$]*$/.test(n) && n !== 'default');
      const binding = names.length > 0 ? `{ ${names.join(', ')} }` : 'skill';
      return ['```' + language, `const ${binding} = await import_skill(${JSON.stringify(name)});`, '```'];
    },
    importsOnly: 'JavaScript and TypeScript skills can import only JavaScript or TypeScript skills',
  },
};

/**
 * Python: Pyodide, one interpreter per process bound to one agent and replaced before another's;
 * on demand unless kept warm (python-pool.ts). Pyodide loads in about 5 s idle and 10-20 s on a
 * loaded 2-core machine; CPython's recursion needs a deep native stack.
 */
export const PYTHON_RUNTIME: RuntimeRow = {
  languages: ['python'],
  label: 'Python',
  worker: 'python-worker',
  process: { kind: 'python', stackSizeMb: 64, dispatch: 'bound', preprocess: 'none', startupTimeoutMs: 120_000 },
  callPath: 'relay',
  start: 'background',
  toolNamesUpFront: true,
  pool: (config, tuning) => (config.sandbox.pythonProcesses > 0 ? pythonPoolOptions(config, tuning) : undefined),
  disabledBy: 'sandbox.pythonProcesses is 0',
  oneShot: (used) => ({ pythonProcesses: used ? 1 : 0, pythonWarm: false }),
  // CPython's own parser, in the Python pool.
  parseCheck: 'import ast\ntry:\n    ast.parse(src)\n    result = None\nexcept SyntaxError as e:\n    result = {"line": e.lineno or 1, "message": e.msg}\n',
  aliases: { py: 'python' },
  extensions: { '.py': 'python' },
  skills: {
    codeFiles: { python: 'index.py' },
    format: 'python-source',
    usage: (name) => ['```python', `exec(load_skill(${JSON.stringify(name)}))`, '```'],
    importsOnly: 'Python skills load other skills when they run (load_skill)',
  },
};

/** The runtimes of this build, in the order they start. */
export const RUNTIMES: readonly RuntimeRow[] = Object.freeze([JAVASCRIPT_RUNTIME, PYTHON_RUNTIME]);

/** The row that runs `language`, or undefined. */
export function runtimeFor(language: string, runtimes: readonly RuntimeRow[] = RUNTIMES): RuntimeRow | undefined {
  return runtimes.find((r) => r.languages.includes(language));
}

/** Every language's skill code file, over the rows (index.js, index.ts, index.py). */
export function skillCodeFiles(runtimes: readonly RuntimeRow[] = RUNTIMES): Record<string, string> {
  return Object.assign({}, ...runtimes.map((r) => r.skills.codeFiles)) as Record<string, string>;
}

/** The skill format of `language` ('es-module' for an unknown one: the strictest). */
export function skillFormat(language: string): RuntimeSkills['format'] {
  return runtimeFor(language)?.skills.format ?? 'es-module';
}

/**
 * Why a skill in `importer`'s language may not import one in `imported`'s, or undefined when it
 * may: an 'es-module' skill imports only skills of its own runtime. `what` names the imported
 * skill's runtime ("Python"), `rule` is the importer's RuntimeSkills.importsOnly.
 */
export function importRefusal(importer: string, imported: string): { what: string; rule: string } | undefined {
  const from = runtimeFor(importer);
  const to = runtimeFor(imported);
  if (!from || from.skills.format !== 'es-module' || from === to) return undefined;
  return { what: to?.label ?? imported, rule: from.skills.importsOnly };
}

/** The request that runs `row`'s parse check on `code` (see RuntimeRow.parseCheck). */
export function parseCheckRequest(row: RuntimeRow, code: string, timeoutSeconds: number): ExecutionRequest {
  return { code: row.parseCheck ?? '', language: (row.languages[0] ?? '') as Language, contextVars: { src: code }, timeoutSeconds, memoryMb: 256 };
}

/** The row's process part with its worker script resolved to a file URL. */
export function runtimeProcess(row: RuntimeRow): RuntimeProcess {
  const file = path.isAbsolute(row.worker) ? row.worker : workerScript(row.worker);
  return { ...row.process, workerFile: pathToFileURL(file).href };
}
