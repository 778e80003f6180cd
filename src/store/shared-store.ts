// The one storage seam below every shared domain: a few atomic operations on string keys, written
// once in memory (memory-store.ts, one daemon) and once per shared backend (Redis:
// src/cluster/redis/redis-store.ts). PII vaults, SSE events, the call gate and change notices are
// written once above it, so a domain rule (token derivation, byte budgets, TTLs, fairness) lives
// in its domain and a third backend is one file that passes test/contracts/shared-store-contract.ts
// (keyv's adapters: primitives below, the rules once above).

import { StoreError, isStoreError } from '../util/store-error.js';

/** A stored value and when it stops being one (epoch ms; Infinity: never). */
export interface Stored {
  value: string;
  expiresAt: number;
}

export interface SetEntry {
  key: string;
  value: string;
  /** Lifetime from now, ms; absent: no expiry. */
  ttlMs?: number;
  /** Written only when the key holds no live value. */
  ifAbsent?: boolean;
}

/**
 * A change of one part of a counter: add `add` (negative frees), or set the part to `set`. A
 * counter is the sum of its live parts (a part per daemon, or per time bucket), so each writer
 * owns its part and a dead writer's part lapses with its TTL.
 */
export type CountChange = { add: number } | { set: number };

/** One change of a counter, within its conditions. */
export interface CountStep {
  key: string;
  part: string;
  change: CountChange;
  /** Refused when the change would grow the counter past this (frees are never refused). */
  limit?: number;
  /** Refused unless the counter (all live parts) stands at exactly this before the change. */
  ifTotal?: number;
  /** The part lapses this long after this change, ms; absent: it keeps its expiry (none when new). */
  partTtlMs?: number;
  /** The whole counter lapses this long after this change, ms (a clean-up bound). */
  ttlMs?: number;
}

export interface CountResult {
  /** False when a condition refused a step: then nothing was written. */
  ok: boolean;
  /** Each step's counter (sum of live parts) after the changes, or as it stands when refused. */
  totals: number[];
}

export interface StreamEntry {
  /** Chosen by the one writer of the stream, increasing. */
  id: number;
  value: string;
}

export interface SharedStore {
  /** 'memory' (this process) or the shared backend's name; domains never branch on it. */
  readonly kind: 'memory' | 'redis';
  /** Live values of `keys`, in order (undefined: absent or expired). */
  get(keys: readonly string[]): Promise<(Stored | undefined)[]>;
  /** Writes each entry atomically on its own; resolves with whether each was written. */
  set(entries: readonly SetEntry[]): Promise<boolean[]>;
  delete(keys: readonly string[]): Promise<void>;
  /**
   * Changes parts of counters (distinct keys), all or none, atomically: every step's conditions
   * (limit, ifTotal) are checked against live parts before any is written. `{ add: 0 }` reads.
   */
  count(steps: readonly CountStep[]): Promise<CountResult>;
  /** Adds an entry to a stream; the stream lapses `ttlMs` after its last append. */
  append(stream: string, entry: StreamEntry, ttlMs: number): Promise<void>;
  /** Entries with an id above `afterId`, oldest first. */
  readAfter(stream: string, afterId: number): Promise<StreamEntry[]>;
  /** Drops entries with an id at or below `throughId`. */
  trim(stream: string, throughId: number): Promise<void>;
  /** At most once, to every subscriber of every process on the store (the sender's own included). */
  publish(channel: string, message: string): Promise<void>;
  /** Resolves once subscribed; returns the unsubscribe function. */
  subscribe(channel: string, listener: (message: string) => void): Promise<() => void>;
  /** Idempotent; never throws. */
  close(): Promise<void>;
}

/**
 * `work`, with a store error's message naming what was being done ("the shared workspace quota is
 * unavailable: ..." rather than "the shared store is unavailable: ..."), so a refusal names its domain.
 */
export async function storeWork<T>(what: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (!isStoreError(error)) throw error;
    const message = error.message.startsWith(SHARED_STORE) ? what + error.message.slice(SHARED_STORE.length) : `${what}: ${error.message}`;
    throw new StoreError(error.code, message, { cause: error });
  }
}

/** How a backend names itself in its errors ("the shared store is unavailable: ..."), for storeWork. */
export const SHARED_STORE = 'the shared store';
