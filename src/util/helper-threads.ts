// Helper threads (piscina) for pure computation the coordinator's event loop must not do inline:
// PII detection over long texts, the parsers that decide an execute_code call's language. Every
// agent's calls share the coordinator's one event loop, so work whose cost an agent chooses (size,
// nesting) runs here, where it delays only the jobs queued behind it, never the event loop.
// The pool starts with its first job and its threads exit when idle, so an idle daemon holds none.

import { existsSync } from 'node:fs';
import { Piscina } from 'piscina';

export interface HelperThreadsOptions {
  /** At most this many threads. */
  threads: number;
  /** An idle thread exits after this long, ms. */
  idleMs: number;
}

/** Figures for get_execution_stats. */
export interface HelperThreadsStats {
  threads: number;
  queued: number;
  completed: number;
}

export class HelperThreads {
  readonly #file: URL;
  readonly #options: HelperThreadsOptions;
  #pool: Piscina | undefined;
  #missing = false;

  /**
   * `builtFile`: the worker's path under dist/ (e.g. 'src/pii/pii-worker.js'); `callerUrl`: the
   * caller's import.meta.url, two folders below the package root (src/<area>/file). From source
   * (vitest) the worker is taken from the build, as the sandbox workers are.
   */
  constructor(callerUrl: string, builtFile: string, options: HelperThreadsOptions) {
    const name = builtFile.split('/').pop() as string;
    this.#file = callerUrl.endsWith('.ts') ? new URL(`../../dist/${builtFile}`, callerUrl) : new URL(`./${name}`, callerUrl);
    this.#options = options;
  }

  /** The pool, started on first use; undefined when the worker file is missing (a partial build). */
  #threads(): Piscina | undefined {
    if (this.#pool || this.#missing) return this.#pool;
    if (!existsSync(this.#file)) {
      this.#missing = true;
      return undefined;
    }
    this.#pool = new Piscina({ filename: this.#file.href, minThreads: 0, maxThreads: this.#options.threads, idleTimeout: this.#options.idleMs });
    return this.#pool;
  }

  /** Whether jobs can run on a helper thread (false: the caller must do the work itself). */
  get available(): boolean {
    return this.#threads() !== undefined;
  }

  /** Runs one job on a helper thread; undefined when there is no worker file (see available). */
  run<T>(task: unknown): Promise<T> | undefined {
    return this.#threads()?.run(task) as Promise<T> | undefined;
  }

  /** Ends the threads (daemon shutdown, tests); a later job starts them again. */
  async close(): Promise<void> {
    const running = this.#pool;
    this.#pool = undefined;
    await running?.destroy();
  }

  stats(): HelperThreadsStats {
    const pool = this.#pool;
    return pool ? { threads: pool.threads.length, queued: pool.queueSize, completed: pool.completed } : { threads: 0, queued: 0, completed: 0 };
  }
}
