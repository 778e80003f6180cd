// Serialises async work per key inside this process (one skill name, one workspace file), so
// changes of one key never interleave; different keys proceed in parallel. Writers in other
// processes need their own protocol (skill-disk.ts; a lease in the shared store in workspace/store-quota.ts).

export class KeyedLock {
  readonly #tails = new Map<string, Promise<void>>();

  /** Runs `task` after every task queued before it for `key`; its failure is the caller's alone. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    const chained = previous.then(() => tail);
    this.#tails.set(key, chained);
    try {
      await previous;
      return await task();
    } finally {
      release();
      // The last holder forgets the key, so the map does not grow with every name ever seen.
      if (this.#tails.get(key) === chained) this.#tails.delete(key);
    }
  }

  /** Keys with work queued or running. */
  get size(): number {
    return this.#tails.size;
  }
}
