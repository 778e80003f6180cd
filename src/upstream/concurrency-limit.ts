// At most N calls in flight to one upstream instance (`max_concurrency`): the rest wait in a FIFO
// queue that is bounded (a full queue refuses at once) and abort-aware (a caller that gives up
// leaves the queue and never takes a slot).

/** Calls waiting for one instance before more are refused. */
export const DEFAULT_MAX_WAITING = 1_000;

interface Waiter {
  resolve: (release: () => void) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

export interface LimitRefusals {
  /** The error thrown when the queue is full. */
  full(waiting: number): Error;
  /** The error thrown when the caller's signal aborts while it waits. */
  aborted(signal: AbortSignal): Error;
}

export class ConcurrencyLimit {
  readonly max: number;
  readonly maxWaiting: number;
  #active = 0;
  readonly #queue: Waiter[] = [];

  constructor(max: number, maxWaiting = DEFAULT_MAX_WAITING) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`max_concurrency must be an integer of at least 1, got ${String(max)}`);
    this.max = max;
    this.maxWaiting = maxWaiting;
  }

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#queue.length;
  }

  /** Resolves with the function that frees the slot (idempotent) once a slot is the caller's. */
  acquire(signal: AbortSignal | undefined, refuse: LimitRefusals): Promise<() => void> {
    if (signal?.aborted === true) return Promise.reject(refuse.aborted(signal));
    if (this.#active < this.max) {
      this.#active++;
      return Promise.resolve(this.#releaser());
    }
    if (this.#queue.length >= this.maxWaiting) return Promise.reject(refuse.full(this.#queue.length));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const at = this.#queue.indexOf(waiter);
          if (at !== -1) this.#queue.splice(at, 1);
          if (signal) reject(refuse.aborted(signal));
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.#queue.push(waiter);
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#queue.shift();
      if (next === undefined) {
        this.#active--;
        return;
      }
      // The slot passes straight to the next waiter: `active` stays the same.
      next.signal?.removeEventListener('abort', next.onAbort);
      next.resolve(this.#releaser());
    };
  }
}
