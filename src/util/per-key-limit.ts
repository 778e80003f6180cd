// At most N tasks at once per key (one agent), the rest waiting in order, and at most M waiting:
// so one agent's burst of costly requests takes N slots of the shared machinery, never all of it,
// and a flood past M is refused at once instead of piling up.

export class PerKeyLimit {
  readonly #running = new Map<string, number>();
  readonly #waiting = new Map<string, (() => void)[]>();

  /** `concurrent`: tasks one key runs at once; `waiting`: tasks one key may queue behind them. */
  constructor(
    readonly concurrent: number,
    readonly waiting: number,
  ) {}

  /** Runs `task` in its turn; resolves `{ refused: true }` at once when the key's queue is full. */
  async run<T>(key: string, task: () => Promise<T>): Promise<{ refused: false; value: T } | { refused: true }> {
    if ((this.#running.get(key) ?? 0) >= this.concurrent) {
      const queue = this.#waiting.get(key) ?? [];
      if (queue.length >= this.waiting) return { refused: true };
      this.#waiting.set(key, queue);
      await new Promise<void>((resolve) => queue.push(resolve));
    } else {
      this.#running.set(key, (this.#running.get(key) ?? 0) + 1);
    }
    try {
      return { refused: false, value: await task() };
    } finally {
      this.#release(key);
    }
  }

  /** Hands the slot to the key's next waiter, or frees it (and forgets the key when idle). */
  #release(key: string): void {
    const queue = this.#waiting.get(key);
    const next = queue?.shift();
    if (queue?.length === 0) this.#waiting.delete(key);
    if (next !== undefined) {
      next();
      return;
    }
    const left = (this.#running.get(key) ?? 1) - 1;
    if (left > 0) this.#running.set(key, left);
    else this.#running.delete(key);
  }
}
