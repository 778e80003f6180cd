// One FIFO per agent, served round robin: the agent served last goes to the back of the line, so
// one agent's flood waits behind its own calls, never in front of another agent's.

export class FairQueue<T> {
  /** Map iteration order is the round-robin order: served agents are re-inserted at the end. */
  readonly #byAgent = new Map<string, T[]>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  sizeOf(agent: string): number {
    return this.#byAgent.get(agent)?.length ?? 0;
  }

  /** Agents with queued items, in the order they are to be served. */
  agents(): string[] {
    return [...this.#byAgent.keys()];
  }

  /** Queued items per agent (figures for health and stats). */
  counts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [agent, items] of this.#byAgent) out[agent] = items.length;
    return out;
  }

  push(agent: string, item: T): void {
    let items = this.#byAgent.get(agent);
    if (!items) {
      items = [];
      this.#byAgent.set(agent, items);
    }
    items.push(item);
    this.#size++;
  }

  /** The agent's oldest item, left in place. */
  peek(agent: string): T | undefined {
    return this.#byAgent.get(agent)?.[0];
  }

  /** The agent's oldest item; the agent moves to the back of the round. */
  take(agent: string): T | undefined {
    const items = this.#byAgent.get(agent);
    const item = items?.shift();
    if (item === undefined || !items) return undefined;
    this.#size--;
    this.#byAgent.delete(agent);
    if (items.length > 0) this.#byAgent.set(agent, items);
    return item;
  }

  /** Removes an item wherever it is (a call that timed out or was cancelled while waiting). */
  remove(agent: string, item: T): boolean {
    const items = this.#byAgent.get(agent);
    const i = items ? items.indexOf(item) : -1;
    if (!items || i < 0) return false;
    items.splice(i, 1);
    this.#size--;
    if (items.length === 0) this.#byAgent.delete(agent);
    return true;
  }

  /** Empties the queue, returning every item. */
  clear(): T[] {
    const all = [...this.#byAgent.values()].flat();
    this.#byAgent.clear();
    this.#size = 0;
    return all;
  }
}
