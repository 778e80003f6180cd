// Sandbox processes on demand (Python by default: its row in runtimes.ts): none at start; a call no process can serve
// starts one, up to the pool's count; a process idle long enough is told to exit and is not
// replaced until a call needs it. Waiting for a start is not the call's time (sandbox-pool.ts run()).
// Also the pool's health figures and the shutdown of its processes.

import type { ErrorInfo, Outcome } from '../../workers/kit/protocol.js';
import type { GuestErrorName } from '../../workers/kit/guest-errors.js';
import type { Logger } from '../util/logger.js';
import type { PoolHealth } from './executor-types.js';
import type { Finished, SandboxProcess } from './sandbox-process.js';

/** How long a call may wait for a sandbox to start (a cold or loaded machine) before it is refused, ms. */
export const START_WAIT_MS = 120_000;

/** What a call that no sandbox could be started for in time is told. */
export function noSandboxMessage(label: string, waitMs: number): string {
  return `no ${label} sandbox became ready within ${Math.round(waitMs / 1000)} s, so the code did not run: the interpreter is starting slowly (an overloaded machine) or keeps failing to start (see the daemon's log); retry in a moment`;
}

/** The pool's side of on-demand start and idle exit. */
export class OnDemand {
  /** When each process last ended a call (or became ready). */
  readonly #lastUsed = new Map<SandboxProcess, number>();
  /** Processes told to exit for idleness: not replaced. */
  readonly #idleExits = new Set<SandboxProcess>();

  used(proc: SandboxProcess): void {
    this.#lastUsed.set(proc, performance.now());
  }

  /** A process ended: true when it was told to go for idleness. */
  ended(proc: SandboxProcess): boolean {
    this.#lastUsed.delete(proc);
    return this.#idleExits.delete(proc);
  }

  /** Starts a process per waiting agent with none coming, while fewer than `count` run; `spawn` places it. */
  startFor(agents: number, procs: readonly SandboxProcess[], restartsPending: number, count: number, spawn: () => void): void {
    let coming = restartsPending + procs.filter((p) => p.state === 'starting' || p.recycling).length;
    for (let i = 0; i < agents; i++) {
      if (coming > 0) {
        coming--;
        continue;
      }
      if (procs.filter((p) => p.state !== 'dead').length >= count || restartsPending > 0) return;
      spawn();
    }
  }

  /** Every quarter of `idleMs`: a ready process with no call for `idleMs` while nothing waits is told to exit. */
  watch(idleMs: number, procs: () => readonly SandboxProcess[], waiting: () => number, closed: () => boolean, log: Logger): void {
    if (idleMs <= 0) return;
    const timer = setInterval(() => {
      if (closed()) return clearInterval(timer);
      const now = performance.now();
      for (const p of procs()) {
        if (p.state !== 'ready' || p.busy > 0 || p.recycling || this.#idleExits.has(p)) continue;
        if (waiting() > 0 || now - (this.#lastUsed.get(p) ?? now) < idleMs) continue;
        this.#idleExits.add(p);
        log.info({ code: 'SANDBOX_IDLE_EXIT', pid: p.pid, idleSeconds: Math.round(idleMs / 1000) }, 'sandbox process idle; letting it exit (the next call that needs it starts one)');
        p.shutdown();
      }
    }, Math.max(50, Math.min(idleMs / 4, 30_000)));
    timer.unref();
  }
}

/** Asks every process to shut down; kills those still alive after 2 s. */
export function stopProcesses(procs: readonly SandboxProcess[]): Promise<void> {
  const exits = procs.map(
    (p) =>
      new Promise<void>((resolve) => {
        if (p.state === 'dead') return resolve();
        const timer = setTimeout(() => {
          p.kill();
          resolve();
        }, 2_000);
        const check = setInterval(() => {
          if (p.state === 'dead') {
            clearInterval(check);
            clearTimeout(timer);
            resolve();
          }
        }, 10);
        p.shutdown();
      }),
  );
  return Promise.all(exits).then(() => undefined);
}

/** A pool's health: the figures of its processes beside what the pool counts itself. */
export function poolHealth(procs: readonly SandboxProcess[], counted: Omit<PoolHealth, 'alive' | 'ready' | 'starting' | 'recycling' | 'spares' | 'canRun'>): PoolHealth {
  const ready = procs.filter((p) => p.state === 'ready');
  return {
    ...counted,
    alive: procs.filter((p) => p.state !== 'dead').length,
    ready: ready.length,
    starting: procs.filter((p) => p.state === 'starting').length,
    recycling: ready.filter((p) => p.recycling).length,
    spares: ready.filter((p) => p.pristine && p.busy === 0 && !p.recycling).length,
    canRun: ready.length > 0,
  };
}

/** A call that ends before it runs: `type` with `message`, or a made error (`timeoutError(...)`). */
export function failed(type: GuestErrorName | ErrorInfo, message = ''): Finished {
  const outcome: Outcome = { ok: false, error: typeof type === 'string' ? { type, message } : type, output: [] };
  return { outcome, workerReplaced: false };
}
