// Where an agent's calls in flight are counted beyond this daemon: the gate a call passes before it
// goes to its sandbox pool. Embedded, there is nothing beyond this daemon, and the pool's own
// per-agent limit is the whole story: the local gate runs the call at once (no await, no
// allocation). In a cluster, src/cluster/redis/redis-call-gate.ts holds the limit across the daemons.

import type { Finished } from './sandbox-process.js';

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

/** The embedded gate: one daemon, whose pools already hold every limit. */
export const LOCAL_GATE: CallGate = Object.freeze({
  run: (_slot: GateSlot, _call: GatedCall, work: () => Promise<Finished>) => work(),
  close: () => Promise.resolve(),
});
