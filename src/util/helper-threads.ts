// Helper threads (piscina) for pure computation the coordinator's event loop must not do inline:
// PII detection over long texts, the parsers that decide an execute_code call's language. Every
// agent's calls share the coordinator's one event loop, so work whose cost an agent chooses (size,
// nesting) runs here, where it delays only the jobs queued behind it, never the event loop.
// The pool starts with its first job and its threads exit when idle, so an idle daemon holds none.
// Jobs wait here, one FIFO per agent served in turn, and at most one job per thread is in the pool:
// an agent's flood waits behind its own jobs, never in front of another agent's.

import { existsSync } from 'node:fs';
import { Piscina } from 'piscina';
import { FairQueue } from './fair-queue.js';

export interface HelperThreadsOptions {
  /** At most this many threads. */
  threads: number;
  /** An idle thread exits after this long, ms. */
  idleMs: number;
  /** Each thread's heap bound, MiB (resourceLimits); past it the thread dies and its job fails. Default: Node's. */
  maxHeapMb?: number;
}

/** Figures for get_execution_stats. */
export interface HelperThreadsStats {
  threads: number;
  queued: number;
  completed: number;
}

interface Job {
  task: unknown;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

export class HelperThreads {
  readonly #file: URL;
  readonly #options: HelperThreadsOptions;
  #pool: Piscina | undefined;
  #missing = false;
  readonly #waiting = new FairQueue<Job>();
  /** Jobs handed to the pool and not settled: never more than its threads. */
  #inPool = 0;
  /** When each agent with jobs waiting or running was last served (a count of jobs handed out). */
  readonly #servedAt = new Map<string, number>();
  readonly #running = new Map<string, number>();
  #served = 0;

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
    const { threads, idleMs, maxHeapMb } = this.#options;
    const resourceLimits = maxHeapMb === undefined ? {} : { resourceLimits: { maxOldGenerationSizeMb: maxHeapMb } };
    this.#pool = new Piscina({ filename: this.#file.href, minThreads: 0, maxThreads: threads, idleTimeout: idleMs, ...resourceLimits });
    return this.#pool;
  }

  /** Whether jobs can run on a helper thread (false: the caller must do the work itself). */
  get available(): boolean {
    return this.#threads() !== undefined;
  }

  /**
   * Runs one job on a helper thread, in `agent`'s turn (jobs without an agent share one turn);
   * undefined when there is no worker file (see available).
   */
  run<T>(task: unknown, agent = ''): Promise<T> | undefined {
    if (!this.#threads()) return undefined;
    return new Promise<T>((resolve, reject) => {
      this.#waiting.push(agent, { task, resolve: resolve as (value: unknown) => void, reject });
      this.#pump();
    });
  }

  /** Hands waiting jobs to free threads: the agent served longest ago (or never) first. */
  #pump(): void {
    const pool = this.#threads();
    while (pool && this.#inPool < this.#options.threads && this.#waiting.size > 0) {
      let agent = '';
      let oldest = Infinity;
      for (const candidate of this.#waiting.agents()) {
        const at = this.#servedAt.get(candidate) ?? -1;
        if (at < oldest) [agent, oldest] = [candidate, at];
      }
      const job = this.#waiting.take(agent) as Job;
      this.#servedAt.set(agent, this.#served++);
      this.#running.set(agent, (this.#running.get(agent) ?? 0) + 1);
      this.#inPool++;
      pool.run(job.task).then(job.resolve, job.reject).finally(() => {
        this.#inPool--;
        const left = (this.#running.get(agent) ?? 1) - 1;
        if (left > 0) this.#running.set(agent, left);
        else this.#running.delete(agent);
        // An agent with nothing waiting or running starts afresh: the map stays as small as the queue.
        if (left <= 0 && this.#waiting.sizeOf(agent) === 0) this.#servedAt.delete(agent);
        this.#pump();
      });
    }
  }

  /** Ends the threads (daemon shutdown, tests); jobs still waiting fail; a later job starts them again. */
  async close(): Promise<void> {
    const running = this.#pool;
    this.#pool = undefined;
    for (const job of this.#waiting.clear()) job.reject(new Error('the helper threads were closed'));
    await running?.destroy();
  }

  stats(): HelperThreadsStats {
    const pool = this.#pool;
    return pool ? { threads: pool.threads.length, queued: pool.queueSize + this.#waiting.size, completed: pool.completed } : { threads: 0, queued: this.#waiting.size, completed: 0 };
  }
}
