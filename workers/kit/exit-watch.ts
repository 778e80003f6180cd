// Whether an aborted worker thread really exits. A thread inside a C++ builtin
// (`new Array(1e9).fill(0)`) does not see V8's termination request until the builtin returns, and
// would go on allocating until a fatal OOM takes the process down with whatever call ran there
// next. One that has not exited STOP_GRACE_MS after its abort is stuck: the sandbox process stops
// taking calls and asks the coordinator to kill it (and kills itself if nobody does).

import type { Worker } from 'node:worker_threads';
import type { AbortReason, FromSandbox } from './protocol.js';

/** How long a terminated worker thread may take to exit, ms. */
const STOP_GRACE_MS = 1_500;
/** If the coordinator does not kill a process that asked to be (it is gone or stuck), it kills itself. */
export const SELF_KILL_MS = 5_000;

export class ExitWatch {
  #unstoppable = false;

  constructor(
    private readonly workers: () => readonly Worker[],
    private readonly send: (msg: FromSandbox) => void,
  ) {}

  /** Set once a worker thread would not stop: nothing more starts in this process. */
  get unstoppable(): boolean {
    return this.#unstoppable;
  }

  /** Settles when the thread running `entry` (its threadId in interrupt[1]) exits after its abort. */
  watch(entry: { interrupt: Int32Array; reason?: AbortReason }): Promise<void> {
    const threadId = Atomics.load(entry.interrupt, 1);
    const worker = threadId === 0 ? undefined : this.workers().find((w) => w.threadId === threadId);
    if (!worker) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        if (this.#unstoppable) return;
        this.#unstoppable = true;
        this.send({ type: 'unstoppable', message: `a terminated worker thread (${entry.reason ?? 'aborted'} call) did not exit within ${STOP_GRACE_MS} ms` });
        setTimeout(() => process.kill(process.pid, 'SIGKILL'), SELF_KILL_MS).unref();
      }, STOP_GRACE_MS);
      timer.unref();
      worker.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
