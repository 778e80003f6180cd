// A counter of work in flight that can be awaited until it reaches zero, with a bound: graceful
// shutdown waits on it without polling.

export class InFlight {
  #count = 0;
  readonly #waiters = new Set<() => void>();

  get count(): number {
    return this.#count;
  }

  /** One more in flight; returns the idempotent function that ends it. */
  begin(): () => void {
    this.#count++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#count--;
      if (this.#count === 0) for (const wake of [...this.#waiters]) wake();
    };
  }

  /** Resolves true once nothing is in flight, false if `timeoutMs` passes first. */
  waitIdle(timeoutMs: number): Promise<boolean> {
    if (this.#count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (idle: boolean): void => {
        clearTimeout(timer);
        this.#waiters.delete(wake);
        resolve(idle);
      };
      const wake = (): void => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.#waiters.add(wake);
    });
  }
}
