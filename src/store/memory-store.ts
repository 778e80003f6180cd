// The shared-store primitives in this process's memory: the embedded default (one daemon), and the
// reference the contract suite (test/contracts/shared-store-contract.ts) holds every other backend
// to. Expiry is lazy (a read past it sees nothing) plus a sweep once writes have doubled the map,
// so what expired is freed without a timer. Pub/sub delivers in this process only: one daemon has
// no peers.

import type { CountResult, CountStep, SetEntry, SharedStore, Stored, StreamEntry } from './shared-store.js';

interface Part {
  n: number;
  expiresAt: number;
}

interface Counter {
  parts: Map<string, Part>;
  expiresAt: number;
}

interface Stream {
  entries: StreamEntry[];
  expiresAt: number;
}

export interface MemoryStoreOptions {
  /** Epoch clock, ms (tests move it on). Default Date.now. */
  now?: () => number;
}

export class MemoryStore implements SharedStore {
  readonly kind = 'memory' as const;
  readonly #now: () => number;
  readonly #values = new Map<string, Stored>();
  readonly #counters = new Map<string, Counter>();
  readonly #streams = new Map<string, Stream>();
  readonly #channels = new Map<string, Set<(message: string) => void>>();
  /** Entries of all maps at the last sweep: the next runs once they have doubled. */
  #sweptAt = 0;

  constructor(options: MemoryStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  async get(keys: readonly string[]): Promise<(Stored | undefined)[]> {
    const now = this.#now();
    return keys.map((key) => {
      const held = this.#values.get(key);
      if (held === undefined || held.expiresAt > now) return held && { ...held };
      this.#values.delete(key);
      return undefined;
    });
  }

  async set(entries: readonly SetEntry[]): Promise<boolean[]> {
    const now = this.#now();
    const written = entries.map((e) => {
      const held = this.#values.get(e.key);
      if (e.ifAbsent === true && held !== undefined && held.expiresAt > now) return false;
      this.#values.set(e.key, { value: e.value, expiresAt: expiry(now, e.ttlMs) });
      return true;
    });
    this.#maybeSweep(now);
    return written;
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      this.#values.delete(key);
      this.#counters.delete(key);
      this.#streams.delete(key);
    }
  }

  async count(steps: readonly CountStep[]): Promise<CountResult> {
    const now = this.#now();
    // Check every step against live parts first; write only when all pass.
    const plans = steps.map((step) => {
      let counter = this.#counters.get(step.key);
      if (counter !== undefined && counter.expiresAt <= now) counter = undefined;
      counter ??= { parts: new Map(), expiresAt: Infinity };
      let others = 0;
      let mine = 0;
      for (const [name, p] of counter.parts) {
        if (p.expiresAt <= now) counter.parts.delete(name);
        else if (name === step.part) mine = p.n;
        else others += p.n;
      }
      const next = Math.max(0, 'add' in step.change ? mine + step.change.add : step.change.set);
      const refused = (step.limit !== undefined && next > mine && others + next > step.limit) || (step.ifTotal !== undefined && others + mine !== step.ifTotal);
      return { step, counter, others, mine, next, refused };
    });
    if (plans.some((p) => p.refused)) return { ok: false, totals: plans.map((p) => p.others + p.mine) };
    for (const { step, counter, next } of plans) {
      const kept = counter.parts.get(step.part);
      if (next === 0) counter.parts.delete(step.part);
      else counter.parts.set(step.part, { n: next, expiresAt: step.partTtlMs !== undefined ? now + step.partTtlMs : (kept?.expiresAt ?? Infinity) });
      if (step.ttlMs !== undefined) counter.expiresAt = now + step.ttlMs;
      if (counter.parts.size === 0) this.#counters.delete(step.key);
      else this.#counters.set(step.key, counter);
    }
    this.#maybeSweep(now);
    return { ok: true, totals: plans.map((p) => p.others + p.next) };
  }

  async append(stream: string, entry: StreamEntry, ttlMs: number): Promise<void> {
    const now = this.#now();
    let held = this.#streams.get(stream);
    if (held === undefined || held.expiresAt <= now) this.#streams.set(stream, (held = { entries: [], expiresAt: 0 }));
    held.entries.push({ id: entry.id, value: entry.value });
    held.expiresAt = now + ttlMs;
    this.#maybeSweep(now);
  }

  async readAfter(stream: string, afterId: number): Promise<StreamEntry[]> {
    const held = this.#streams.get(stream);
    if (held === undefined || held.expiresAt <= this.#now()) return [];
    return held.entries.filter((e) => e.id > afterId).map((e) => ({ ...e }));
  }

  async trim(stream: string, throughId: number): Promise<void> {
    const held = this.#streams.get(stream);
    if (held === undefined) return;
    held.entries = held.entries.filter((e) => e.id > throughId);
    if (held.entries.length === 0) this.#streams.delete(stream);
  }

  async publish(channel: string, message: string): Promise<void> {
    for (const listener of [...(this.#channels.get(channel) ?? [])]) {
      // Delivered on a later turn, as a real bus would: a listener never runs inside publish().
      queueMicrotask(() => listener(message));
    }
  }

  async subscribe(channel: string, listener: (message: string) => void): Promise<() => void> {
    let set = this.#channels.get(channel);
    if (set === undefined) this.#channels.set(channel, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  async close(): Promise<void> {
    this.#values.clear();
    this.#counters.clear();
    this.#streams.clear();
    this.#channels.clear();
  }

  /** Frees what expired once the maps have doubled since the last sweep (amortised O(1) a write). */
  #maybeSweep(now: number): void {
    const size = this.#values.size + this.#counters.size + this.#streams.size;
    if (size < 2 * this.#sweptAt + 64) return;
    for (const [key, v] of this.#values) if (v.expiresAt <= now) this.#values.delete(key);
    for (const [key, c] of this.#counters) if (c.expiresAt <= now) this.#counters.delete(key);
    for (const [key, s] of this.#streams) if (s.expiresAt <= now) this.#streams.delete(key);
    this.#sweptAt = this.#values.size + this.#counters.size + this.#streams.size;
  }
}

function expiry(now: number, ttlMs: number | undefined): number {
  return ttlMs === undefined ? Infinity : now + ttlMs;
}
