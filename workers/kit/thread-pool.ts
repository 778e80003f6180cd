// The piscina pool of a sandbox process, and for Python its warm standby. A Python interpreter
// holds more state than any sweep can list, so it is never cleaned for another agent: it is
// replaced. Replacing means promoting a standby pool whose interpreter is pristine (warmed, never
// ran a call) and starting the next standby in the background; only when no standby is ready
// does a replacement wait for a start (from the memory snapshot: workers/python/snapshot.ts).
// A standby exists from the first swap on (`standby: 'on-swap'`), from the start ('always') or never.

import type { MessagePort } from 'node:worker_threads';
import { isChannelOffer } from './thread-channel.js';
import { Piscina } from 'piscina';
import type { SandboxProcessOptions, WorkerTask } from './protocol.js';
import { MAX_CACHE_BYTES } from './read-cache.js';

/** One piscina pool: its threads, started together and ended together. */
export interface Generation {
  readonly pool: Piscina;
}

/** What the pool host hears from every generation's threads. */
export interface PoolEvents {
  onError(err: unknown): void;
  /** A thread started and offers its channel (workers/kit/thread-channel.ts). */
  onChannel(threadId: number, port: MessagePort): void;
}

/** A task that only makes a thread load (SES lockdown, Pyodide boot), open its link and answer. */
export function runWarmTask(pool: Piscina): Promise<unknown> {
  return pool.run({ source: '' } satisfies Pick<WorkerTask, 'source'>);
}

function createGeneration(options: SandboxProcessOptions, events: PoolEvents): Generation {
  const pool = new Piscina({
    // The runtime's row names the script (src/executor/runtimes.ts).
    filename: options.workerFile,
    minThreads: options.threads,
    maxThreads: options.threads,
    idleTimeout: 2 ** 31 - 1,
    concurrentTasksPerWorker: 1,
    // 'sync' parks idle workers in Atomics.wait (fast pick-up). Guest work cannot outlive its
    // task anyway: each task ends with a macrotask turn after its scope is closed.
    atomics: 'sync',
    // The row's stack (CPython's recursion needs a deep native stack; 4 MB lets a deeply nested repr kill Pyodide).
    // The read cache's strings (read-cache.ts) live in this heap but are no call's: without room
    // for them, what one agent's reads left cached took up to 32 MB of the heap limit from the
    // next agent's call on the thread, which then died of V8's out-of-memory within its memory_mb.
    resourceLimits: { maxOldGenerationSizeMb: options.maxMemoryMb + MAX_CACHE_BYTES / (1024 * 1024), stackSizeMb: options.stackSizeMb },
    recordTiming: false,
    workerData: { hostLink: options.hostLink, pythonSnapshotDir: options.pythonSnapshotDir },
  });
  pool.on('error', events.onError);
  pool.on('message', (m: unknown) => {
    if (isChannelOffer(m)) events.onChannel(m.threadId, m.port);
  });
  return { pool };
}

/** Warms every thread of a new generation; rejects when a thread fails to start. */
async function warmGeneration(options: SandboxProcessOptions, events: PoolEvents): Promise<Generation> {
  const generation = createGeneration(options, events);
  try {
    await Promise.all(Array.from({ length: options.threads }, () => runWarmTask(generation.pool)));
  } catch (err) {
    void generation.pool.destroy().catch(() => {});
    throw err;
  }
  return generation;
}

export class ThreadPool {
  readonly #options: SandboxProcessOptions;
  readonly #events: PoolEvents;
  #current: Generation;
  /** Python only: a pristine generation warming or warm, promoted by the next replace(). */
  #standby: Promise<Generation> | undefined;
  #replacing: Promise<number> | undefined;
  #closed = false;

  constructor(options: SandboxProcessOptions, events: PoolEvents) {
    this.#options = options;
    this.#events = events;
    this.#current = createGeneration(options, events);
  }

  get current(): Generation {
    return this.#current;
  }

  /** True while a replacement is under way: no call may start until it is over. */
  get replacing(): boolean {
    return this.#replacing !== undefined;
  }

  /** Warms the first generation, then starts warming the standby if one is kept from the start. */
  async start(): Promise<void> {
    await Promise.all(Array.from({ length: this.#options.threads }, () => runWarmTask(this.#current.pool)));
    if (this.#options.standby === 'always') this.#standby = this.#spare();
  }

  /**
   * Puts a pristine generation in place of the current one: its threads are terminated at once
   * (destroy, not close: a thread's serve task never settles, and a clean-up under way is cut short). Resolves with how long the swap took, ms (about 1 ms with a warm standby).
   */
  replace(): Promise<number> {
    if (this.#replacing) return this.#replacing;
    const startedAt = performance.now();
    const old = this.#current;
    this.#replacing = (async () => {
      const standby = this.#standby;
      this.#standby = undefined;
      let next: Generation | undefined;
      if (standby) next = await standby.catch(() => undefined);
      next ??= await warmGeneration(this.#options, this.#events);
      this.#current = next;
      void old.pool.destroy().catch(() => {});
      if (this.#closed) void next.pool.destroy().catch(() => {});
      else if (this.#options.standby !== undefined && this.#options.standby !== 'never') this.#standby = this.#spare();
      return Math.round((performance.now() - startedAt) * 100) / 100;
    })().finally(() => {
      this.#replacing = undefined;
    });
    return this.#replacing;
  }

  #spare(): Promise<Generation> {
    const spare = warmGeneration(this.#options, this.#events);
    // A standby that failed to start is noticed by the replace() that needs it.
    spare.catch(() => {});
    return spare;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const standby = this.#standby;
    this.#standby = undefined;
    await Promise.allSettled([
      this.#current.pool.destroy(),
      standby?.then((g) => g.pool.destroy()),
    ]);
  }
}
