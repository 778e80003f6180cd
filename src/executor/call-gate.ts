// Where an agent's calls in flight are counted: the gate a call passes before it goes to its
// sandbox pool. On one daemon the pool's own per-agent limit is the whole story, and the local gate
// runs the call at once (no await, no allocation). Daemons of a cluster hold the limit
// (limits.maxCallsInFlightPerAgent or the agent's maxCallsInFlight, per language) together, over
// the shared store: per agent and pool one counter with a part per daemon, each daemon's part
// lapsing SLOT_LEASE_MS after its last sign of life, so a start is decided by the store alone
// against every live daemon's count, and a killed daemon's slots lapse with it.
//
// A daemon takes a slot by adding one to its part within the limit (one take at a time per agent),
// frees it by subtracting one, and on a heartbeat while it holds anything rewrites its part with
// its exact count, which repairs a free lost in an outage or a store that forgot everything. Calls
// past the limit wait here, in order, within the agent's queue bound, their deadline and
// cancellation, and try again when a daemon announces a release and at least every SLOT_RETRY_MS
// (a dead daemon's lapse is not announced). With the store down a call that needs a slot fails at
// once with the store's clear error.

import { randomUUID } from 'node:crypto';
import type { ErrorInfo, Outcome } from '../../workers/kit/protocol.js';
import { timeoutError } from '../../workers/kit/guest-errors.js';
import type { GuestErrorName } from '../../workers/kit/guest-errors.js';
import { storeWork } from '../store/shared-store.js';
import type { SharedStore } from '../store/shared-store.js';
import type { Logger } from '../util/logger.js';
import { isStoreError } from '../util/store-error.js';
import { refusal } from './admission.js';
import type { Finished } from './sandbox-process.js';
import { languageOfKind } from './runtimes.js';

/** The cluster-wide share a call needs: one slot of `agent` in the pool of `pool`. */
export interface GateSlot {
  /** The runtime's short name (runtimes.ts `process.kind`: js, python). */
  pool: string;
  agent: string;
  /** Calls of the agent running at once in that pool across the cluster. */
  limit: number;
  /** Calls of the agent that may wait for a slot on this daemon; past it the call is refused. */
  maxQueued: number;
}

export interface GatedCall {
  /** performance.now() deadline of the whole call. */
  deadline: number;
  signal?: AbortSignal;
}

export interface CallGate {
  /**
   * Runs `work` once `slot` is free and holds it until `work` settles. A call that cannot get one
   * (queue bound, deadline, cancellation, shared store down) ends without running, as a Finished
   * failure like the pool's own refusals; never throws.
   */
  run(slot: GateSlot, call: GatedCall, work: () => Promise<Finished>): Promise<Finished>;
  close(): Promise<void>;
}

/** The gate of one daemon, whose pools already hold every limit. */
export const LOCAL_GATE: CallGate = Object.freeze({
  run: (_slot: GateSlot, _call: GatedCall, work: () => Promise<Finished>) => work(),
  close: () => Promise.resolve(),
});

/** A daemon's slots count for the others this long after its last sign of life, ms. */
export const SLOT_LEASE_MS = 10_000;
/** How often a daemon holding slots renews its part and rewrites its counts, ms. */
export const SLOT_HEARTBEAT_MS = 1_000;
/** A call waiting for a slot asks again at least this often, ms. */
export const SLOT_RETRY_MS = 250;
const WHAT = 'the cluster-wide limit of calls in flight';
const RELEASED = 'inflight-released';

interface Waiter {
  start(): void;
  fail(finished: Finished): void;
}

/** One agent's slots in one pool, as this daemon sees them. */
interface Line {
  key: string;
  slot: GateSlot;
  /** Slots this daemon holds (granted by the store, not yet released). */
  held: number;
  waiters: Waiter[];
  /** An acquire is on its way to the store. */
  acquiring: boolean;
  /** The last acquire was refused: new calls wait, within the queue bound. */
  blocked: boolean;
  /** The store may hold another count than `held` (a release failed): the heartbeat rewrites it. */
  dirty: boolean;
  retry: NodeJS.Timeout | undefined;
}

export class StoreCallGate implements CallGate {
  readonly #store: SharedStore;
  readonly #logger: Logger;
  readonly #id = randomUUID();
  readonly #lines = new Map<string, Line>();
  readonly #heartbeat: NodeJS.Timeout;
  #closed = false;

  #unsubscribe: () => void = () => {};

  private constructor(store: SharedStore, logger: Logger) {
    this.#store = store;
    this.#logger = logger;
    this.#heartbeat = setInterval(() => void this.#beat(), SLOT_HEARTBEAT_MS);
    this.#heartbeat.unref();
  }

  /** Subscribes to release notices before resolving. */
  static async start(store: SharedStore, logger: Logger): Promise<StoreCallGate> {
    const gate = new StoreCallGate(store, logger);
    gate.#unsubscribe = await store.subscribe(RELEASED, (key) => {
      const line = gate.#lines.get(key);
      if (line?.blocked) gate.#pump(line);
    });
    return gate;
  }

  /** Slots this daemon holds per "pool:agent" (tests, health). */
  held(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const line of this.#lines.values()) if (line.held > 0) out[`${line.slot.pool}:${line.slot.agent}`] = line.held;
    return out;
  }

  run(slot: GateSlot, call: GatedCall, work: () => Promise<Finished>): Promise<Finished> {
    if (this.#closed) return Promise.resolve(failed('CancelledError', 'the daemon is shutting down'));
    if (call.signal?.aborted) return Promise.resolve(failed('CancelledError', 'the call was cancelled before it started'));
    const line = this.#line(slot);
    if (line.blocked && line.waiters.length >= slot.maxQueued) return Promise.resolve(failed('OverloadedError', this.#overloaded(line)));
    return new Promise<Finished>((resolve) => {
      const leave = (finished: Finished): void => {
        const i = line.waiters.indexOf(waiter);
        if (i >= 0) line.waiters.splice(i, 1);
        cleanup();
        resolve(finished);
      };
      const timer = setTimeout(
        () => leave(failed(timeoutError(`execution timed out while waiting for a slot: agent "${slot.agent}" may run ${slot.limit} calls at once across the daemons of the cluster`))),
        Math.max(0, call.deadline - performance.now()),
      );
      const onAbort = (): void => leave(failed('CancelledError', 'the call was cancelled while waiting for a sandbox'));
      call.signal?.addEventListener('abort', onAbort, { once: true });
      const cleanup = (): void => {
        clearTimeout(timer);
        call.signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        start: () => {
          cleanup();
          // A slot is released exactly once, however work ends.
          work().then(
            (finished) => {
              this.#release(line);
              resolve(finished);
            },
            (error: unknown) => {
              this.#release(line);
              resolve(failed('SandboxCrashError', error instanceof Error ? error.message : String(error)));
            },
          );
        },
        fail: leave,
      };
      line.waiters.push(waiter);
      this.#pump(line);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#heartbeat);
    for (const line of this.#lines.values()) {
      clearTimeout(line.retry);
      for (const w of line.waiters.splice(0)) w.fail(failed('CancelledError', 'the daemon is shutting down'));
    }
    this.#unsubscribe();
    // The others stop counting this daemon's slots at once.
    for (const line of this.#lines.values()) if (line.held > 0) await this.#store.count([{ key: line.key, part: this.#id, change: { set: 0 } }]).catch(() => {});
  }

  #line(slot: GateSlot): Line {
    const key = `inflight:${slot.pool}:${slot.agent}`;
    let line = this.#lines.get(key);
    if (!line) this.#lines.set(key, (line = { key, slot, held: 0, waiters: [], acquiring: false, blocked: false, dirty: false, retry: undefined }));
    line.slot = slot;
    return line;
  }

  /** Asks the store for a slot for the first waiter; one request at a time per line, so waiters start in order. */
  #pump(line: Line): void {
    if (this.#closed || line.acquiring || line.waiters.length === 0) return;
    clearTimeout(line.retry);
    line.retry = undefined;
    line.acquiring = true;
    storeWork(WHAT, this.#store.count([{ key: line.key, part: this.#id, change: { add: 1 }, limit: line.slot.limit, partTtlMs: SLOT_LEASE_MS, ttlMs: SLOT_LEASE_MS * 6 }])).then(
      (reply) => {
        line.acquiring = false;
        if (reply.ok) {
          line.held++;
          line.blocked = false;
          const next = line.waiters.shift();
          // The waiter left (deadline, cancelled) while the store answered: the slot goes back.
          if (next) next.start();
          else this.#release(line);
          this.#pump(line);
          return;
        }
        line.blocked = true;
        // Calls that arrived while the slot seemed free may wait only within the agent's bound.
        while (line.waiters.length > line.slot.maxQueued) line.waiters.pop()?.fail(failed('OverloadedError', this.#overloaded(line)));
        if (line.waiters.length > 0 && !this.#closed) line.retry = setTimeout(() => this.#pump(line), SLOT_RETRY_MS);
      },
      (error: unknown) => {
        line.acquiring = false;
        line.blocked = false;
        const message = isStoreError(error) ? error.message : `${WHAT} is unavailable: ${String(error)}`;
        // Fail fast: waiting would only hold the calls until their deadline.
        for (const w of line.waiters.splice(0)) w.fail(failed('StoreError', message));
      },
    );
  }

  #release(line: Line): void {
    line.held = Math.max(0, line.held - 1);
    this.#store
      .count([{ key: line.key, part: this.#id, change: { add: -1 } }])
      .then(() => this.#store.publish(RELEASED, line.key))
      .catch(() => {
        line.dirty = true;
      });
    this.#pump(line);
  }

  /** Renews this daemon's parts and rewrites every count it holds (or lost track of in the store). */
  async #beat(): Promise<void> {
    const lines = [...this.#lines.values()].filter((l) => l.held > 0 || l.acquiring || l.dirty);
    for (const [key, line] of this.#lines) {
      if (line.held === 0 && !line.acquiring && !line.dirty && line.waiters.length === 0) this.#lines.delete(key);
    }
    if (lines.length === 0) return;
    // Counted with a take under way: if the store refuses it, the next heartbeat writes the exact count.
    const guessed = new Set(lines.filter((l) => l.acquiring));
    try {
      for (const line of lines) {
        // An acquire under way may add one more; counting it keeps the sum on the safe side.
        const count = line.held + (line.acquiring ? 1 : 0);
        await this.#store.count([{ key: line.key, part: this.#id, change: { set: count }, partTtlMs: SLOT_LEASE_MS, ttlMs: SLOT_LEASE_MS * 6 }]);
        if (count === 0) await this.#store.publish(RELEASED, line.key);
        line.dirty = guessed.has(line);
      }
    } catch (error) {
      this.#logger.debug({ err: error }, 'could not renew the cluster-wide slots of this daemon');
    }
  }

  #overloaded(line: Line): string {
    const limits = { maxInFlight: line.slot.limit, maxQueued: line.slot.maxQueued };
    const message = refusal({
      agent: line.slot.agent,
      limits,
      waiting: line.waiters.length,
      running: line.held,
      totalWaiting: 0,
      agentsWaiting: 1,
      maxQueued: Number.POSITIVE_INFINITY,
      language: languageOfKind(line.slot.pool) ?? line.slot.pool,
      avgCallMs: 1_000,
    });
    return `${message ?? `agent "${line.slot.agent}" has too many calls waiting`} (it may run ${line.slot.limit} at once across the cluster)`;
  }
}

/** A call that ends before it runs: `type` with `message`, or a made error (`timeoutError(...)`). */
function failed(type: GuestErrorName | ErrorInfo, message = ''): Finished {
  const outcome: Outcome = { ok: false, error: typeof type === 'string' ? { type, message } : type, output: [] };
  return { outcome, workerReplaced: false };
}
