// The contract of the call gate (src/executor/call-gate.ts), written once and run against the
// embedded gate and the Redis one. Every gate: runs the call's work and hands back its result
// untouched; one agent's calls never hold another's back; close is idempotent. A gate that holds
// the limit itself (Redis: across daemons; the embedded gate leaves it to the pools) also: never
// runs more than the limit of an agent at once, across its peers; refuses past the queue bound
// with OverloadedError, at the deadline with TimeoutError, on cancellation with CancelledError,
// as a Finished failure, never by throwing, and without running the work.

import { describe, expect, it } from 'vitest';
import type { CallGate, GateSlot } from '../../src/executor/call-gate.js';
import type { Finished } from '../../src/executor/sandbox-process.js';

export interface CallGateHarness {
  gate(): Promise<CallGate>;
  /** Another daemon's gate on the same shared state; absent for a gate of one daemon. */
  peer?(): Promise<CallGate>;
  /** Whether the gate itself holds GateSlot.limit (else the pools do). */
  holdsLimit: boolean;
}

const ok: Finished = { outcome: { ok: true, value: 'done', output: ['line'] }, workerReplaced: false };
const failed: Finished = { outcome: { ok: false, error: { type: 'Error', message: 'boom' }, output: [] }, workerReplaced: true } as Finished;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
let agents = 0;
const slot = (agent: string, limit = 1, maxQueued = 100): GateSlot => ({ pool: 'js', agent, limit, maxQueued });
const call = (ms = 30_000, signal?: AbortSignal) => ({ deadline: performance.now() + ms, ...(signal ? { signal } : {}) });
const errorType = (f: Finished): string | undefined => (f.outcome.ok ? undefined : f.outcome.error.type);

export function describeCallGateContract(name: string, harness: CallGateHarness): void {
  describe(`call gate contract: ${name}`, () => {
    const agent = (): string => `agent-${process.pid}-${++agents}`;

    it("runs the work and hands back its result untouched, success or failure", async () => {
      const gate = await harness.gate();
      expect(await gate.run(slot(agent()), call(), async () => ok)).toEqual(ok);
      expect(await gate.run(slot(agent()), call(), async () => failed)).toEqual(failed);
      await gate.close();
      await gate.close();
    });

    it("never holds one agent's call back behind another's", async () => {
      const gate = await harness.gate();
      const busy = agent();
      let release: () => void = () => {};
      const held = new Promise<void>((r) => (release = r));
      const holding = gate.run(slot(busy, 1), call(), async () => (await held, ok));
      const queued = gate.run(slot(busy, 1), call(), async () => ok);
      const other = await gate.run(slot(agent(), 1), call(10_000), async () => ok);
      expect(other).toEqual(ok);
      release();
      expect(await holding).toEqual(ok);
      expect(await queued).toEqual(ok);
      await gate.close();
    });

    if (!harness.holdsLimit) return;

    it('never runs more of one agent than its limit, across daemons', async () => {
      const one = await harness.gate();
      const two = harness.peer ? await harness.peer() : one;
      const who = agent();
      let running = 0;
      let most = 0;
      const work = async (): Promise<Finished> => {
        most = Math.max(most, ++running);
        await sleep(30);
        running--;
        return ok;
      };
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? one : two).run(slot(who, 2), call(), work)));
      for (const r of results) expect(r).toEqual(ok);
      expect(most).toBe(2);
    });

    it('refuses past the queue bound, at the deadline and on cancellation, without running the work', async () => {
      const gate = await harness.gate();
      const who = agent();
      let release: () => void = () => {};
      const held = new Promise<void>((r) => (release = r));
      const holding = gate.run(slot(who, 1, 1), call(), async () => (await held, ok));
      let ran = 0;
      const never = async (): Promise<Finished> => (ran++, ok);
      const controller = new AbortController();
      const cancelled = gate.run(slot(who, 1, 1), call(30_000, controller.signal), never);
      const overloaded = await gate.run(slot(who, 1, 1), call(), never);
      expect(errorType(overloaded)).toBe('OverloadedError');
      controller.abort();
      expect(errorType(await cancelled)).toBe('CancelledError');
      expect(errorType(await gate.run(slot(who, 1, 5), call(100), never))).toBe('TimeoutError');
      expect(ran).toBe(0);
      release();
      expect(await holding).toEqual(ok);
      await gate.close();
    });
  });
}
