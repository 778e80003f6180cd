// Which sandbox process may run an agent's call: the isolation rule (a realm or interpreter that
// ran one agent's code never runs another's unless it is pristine), kept in this one place.
// 'bound' (Python: one interpreter per process): a process serves the agent it is bound to, or is
// pristine and becomes that agent's. 'hardened' (JavaScript: a fresh SES Compartment per call over
// hardened shared endowments, pristine by construction): any process, preferring the one whose
// last call was the same agent's. A call goes only to a process with a free thread.

import type { SandboxProcess } from './sandbox-process.js';

export type DispatchKind = 'bound' | 'hardened';

export interface DispatchPolicy {
  readonly kind: DispatchKind;
  /** A process with a free thread that may take `agent`'s call of `memoryMb` now, or undefined. */
  pick(agent: string, procs: readonly SandboxProcess[], memoryMb: number): SandboxProcess | undefined;
  /**
   * For 'bound': the idle process to recycle so that `agent` gets a pristine one (least recently
   * used); its own process too when that grew past what the call may use.
   */
  victim(agent: string, procs: readonly SandboxProcess[], memoryMb: number): SandboxProcess | undefined;
}

function usable(p: SandboxProcess): boolean {
  return p.state === 'ready' && !p.recycling;
}

export const BOUND_POLICY: DispatchPolicy = {
  kind: 'bound',
  pick(agent, procs, memoryMb) {
    let pristine: SandboxProcess | undefined;
    for (const p of procs) {
      if (!usable(p) || p.free === 0) continue;
      if (!p.pristine && p.lastAgent === agent && p.fits(memoryMb)) return p;
      if (p.pristine && p.busy === 0) pristine ??= p;
    }
    return pristine;
  },
  victim(agent, procs, memoryMb) {
    let best: SandboxProcess | undefined;
    for (const p of procs) {
      if (!usable(p) || p.pristine || p.busy > 0 || (p.lastAgent === agent && p.fits(memoryMb))) continue;
      if (!best || p.lastUsedAt < best.lastUsedAt) best = p;
    }
    return best;
  },
};

export const HARDENED_POLICY: DispatchPolicy = {
  kind: 'hardened',
  pick(agent, procs) {
    // Affinity is cheap (warm caches of that agent's code); otherwise the least loaded process,
    // and of equally loaded ones the least recently used, so agents keep apart where they can.
    let best: SandboxProcess | undefined;
    for (const p of procs) {
      if (!usable(p) || p.free === 0) continue;
      if (p.lastAgent === agent) return p;
      if (!best || p.free > best.free || (p.free === best.free && p.lastUsedAt < best.lastUsedAt)) best = p;
    }
    return best;
  },
  victim() {
    return undefined;
  },
};

/** The policy a runtime's row names (runtimes.ts `process.dispatch`). */
export function policyFor(kind: DispatchKind): DispatchPolicy {
  return kind === 'bound' ? BOUND_POLICY : HARDENED_POLICY;
}
