// What differs between runtimes in how a sandbox process's main thread supervises its threads,
// supplied by the runtime itself (its row names the module: RuntimeProcess.strategy), so the kit
// never asks which runtime it hosts: how a running call is stopped, what a recycle does, and how a
// thread that ended is replaced. JavaScript: workers/js/strategy.ts; Python: workers/python/strategy.ts.

import type { ThreadPool } from './thread-pool.js';

export interface RuntimeStrategy {
  /**
   * Asks the call running on the thread whose slots these are to unwind without ending the thread
   * (Pyodide's interrupt buffer); false when the runtime cannot, and the thread is ended at once.
   */
  interrupt(slots: Int32Array): boolean;
  /** What 'recycle' does to an idle process, so another agent may use it: resolves with how long it took, ms. */
  recycle(threads: ThreadPool): Promise<number>;
  /**
   * A thread ended (stopped, crashed or retired); `exited` settles once it is gone. Resolves when
   * its replacement may be given its serve task (on the pool's current generation).
   */
  replace(threads: ThreadPool, exited: Promise<void>): Promise<void>;
  /**
   * Whether an ended thread that does not exit takes its process down (exit-watch.ts): a JavaScript
   * thread stuck in a C++ builtin may go on allocating outside every limit; a WebAssembly
   * interpreter's memory stays bounded, and its old generation is destroyed anyway.
   */
  readonly watchExit: boolean;
}
