// A set of sandbox processes of one kind (JavaScript or Python) and the dispatch of calls to them,
// keyed by agent. Isolation: dispatch-policy.ts says which process may run an agent's call (a
// Python process is bound to one agent until it is recycled). Fairness: one queue per agent,
// served round robin, with per-agent limits on calls in flight and waiting. Supervision: a process
// that dies, never starts or never answers is replaced, with back-off while starts keep failing.
// The wall-clock deadline and cancellation of each call are enforced here too.
//
// Fairness bound. With S slots (processes x threads) and each agent limited to L calls in flight,
// a waiting call of an agent under its limit is served within its agent's turn of the round robin:
// every slot that frees goes to the next waiting agent in turn, and every running call ends within
// D (its timeout + HARD_DEADLINE_GRACE_MS + ABORT_ESCALATION_MS). So with k agents waiting, a call
// at the head of its agent's queue starts within ceil(k / S) x D, and with L < S a single flooding
// agent never holds every slot: another agent starts at once if no third agent holds the rest.
// For Python, add one recycle (R) per turn: ceil(k / S) x (D + R); an agent no process can serve
// gets the next idle process (#drain), so R follows at most one D. This fair queue is the only
// place a call waits: it leaves only for a free thread; cancelled while waiting, it is answered here.

import { randomUUID } from 'node:crypto';
import type { AbortReason, RunRequest } from '../../workers/kit/protocol.js';
import { timedOutText, timeoutError } from '../../workers/kit/guest-errors.js';
import type { Logger } from '../util/logger.js';
import { refusal } from './admission.js';
import { policyFor } from './dispatch-policy.js';
import type { DispatchPolicy } from './dispatch-policy.js';
import { FairQueue } from '../util/fair-queue.js';
import { failed, noSandboxMessage, OnDemand, poolHealth, START_WAIT_MS, stopProcesses } from './on-demand.js';
import { SandboxProcess } from './sandbox-process.js';
import type { Finished } from './sandbox-process.js';
import type { PoolCall, SandboxPoolOptions } from './pool-types.js';
import type { PoolCounters, PoolHealth } from './executor-types.js';

/** After the worker's own deadline, how long before the process is told to terminate it, ms. */
export const HARD_DEADLINE_GRACE_MS = 250;
/** If an abort is not answered this long, the whole process is killed, ms. */
export const ABORT_ESCALATION_MS = 3_000;
/** How long a process may take to answer 'recycle' before it is killed and respawned instead, ms. */
export const RECYCLE_TIMEOUT_MS = 30_000;

/** Signals a person or a supervisor sends (not a crash): a sandbox stopped by one did not fail. */
const OUTSIDE_SIGNALS = new Set<string>(['SIGINT', 'SIGTERM', 'SIGHUP']);

const RESTART_BACKOFF_BASE_MS = 100;
const RESTART_BACKOFF_MAX_MS = 10_000;

export type { AgentLimits, PoolCall, SandboxPoolOptions } from './pool-types.js';

interface Queued {
  call: PoolCall;
  agent: string;
  /** performance.now() when it began waiting for a sandbox to start (none could serve it), else undefined. */
  startWaitFrom?: number;
  /** Handed to a process by #drain. */
  taken?: boolean;
  resolve: (f: Finished) => void;
  cleanup: () => void;
}

export class SandboxPool {
  readonly #o: SandboxPoolOptions;
  readonly #policy: DispatchPolicy;
  readonly #log: Logger;
  readonly #procs: SandboxProcess[] = [];
  readonly #queue = new FairQueue<Queued>();
  readonly #calls = new Map<number, { call: PoolCall; proc: SandboxProcess }>();
  readonly #inFlight = new Map<string, number>();
  #nextId = 1;
  #closed = false;
  #failedStarts = 0;
  #restartsPending = 0;
  /** Moving average of call durations, ms: the retry hint of OverloadedError. */
  #avgCallMs = 1_000;
  readonly counters: PoolCounters = { processRestarts: 0, directCalls: 0, workerReplacements: 0, recycles: 0 };
  readonly #onDemand = new OnDemand();

  constructor(options: SandboxPoolOptions) {
    this.#o = options;
    this.#policy = policyFor(options.process.dispatch);
    this.#log = options.log;
  }

  /** Starts every process and resolves when all are warm; on demand, starts none (the first call does). */
  async start(): Promise<void> {
    if (this.#o.lazy) {
      this.#onDemand.watch(this.#o.idleExitMs ?? 0, () => this.#procs, () => this.#queue.size, () => this.#closed, this.#log);
      return;
    }
    for (let i = 0; i < this.#o.count; i++) this.#procs.push(this.#spawn());
    await Promise.all(this.#procs.map((p) => p.ready));
  }

  /** On demand with none alive: starts one now, so the next call finds it warm; resolves when one is ready (false: none became). */
  warm(): Promise<boolean> {
    if (this.idle && !this.#closed) this.#place(this.#spawn());
    return Promise.any(this.#procs.map((p) => p.ready)).then(() => true, () => false);
  }

  /** On demand, with none running: nothing to report as missing (idle by design). */
  get idle(): boolean {
    return this.#o.lazy === true && this.#restartsPending === 0 && this.#procs.every((p) => p.state === 'dead');
  }

  get threads(): number {
    return this.#o.count * this.#o.process.threads;
  }

  get busy(): number {
    return this.#calls.size;
  }

  get queued(): number {
    return this.#queue.size;
  }

  processes(): { pid: number | undefined; state: string; busy: number; startupMs: number; agent: string | undefined; pristine: boolean }[] {
    return this.#procs.map((p) => ({ pid: p.pid, state: p.recycling ? 'recycling' : p.state, busy: p.busy, startupMs: p.startupMs, agent: p.lastAgent, pristine: p.pristine }));
  }

  health(): PoolHealth {
    return poolHealth(this.#procs, {
      processes: this.#o.count,
      busy: this.busy,
      queued: this.queued,
      queuedByAgent: this.#queue.counts(),
      inFlightByAgent: Object.fromEntries(this.#inFlight),
      restarts: this.counters.processRestarts,
      recycles: this.counters.recycles,
      failedStartsInARow: this.#failedStarts,
      ...(this.#o.lazy ? { onDemand: true, idle: this.idle } : {}),
    });
  }

  run(call: PoolCall): Promise<Finished> {
    if (this.#closed) return Promise.resolve(failed('CancelledError', 'the sandbox pool is shut down'));
    if (call.signal?.aborted) return Promise.resolve(failed('CancelledError', 'the call was cancelled before it started'));
    const agent = call.request.agent;
    return new Promise<Finished>((resolve) => {
      const entry: Queued = { call, agent, resolve, cleanup: () => {} };
      const leave = (f: Finished): void => {
        this.#queue.remove(agent, entry);
        entry.cleanup();
        resolve(f);
      };
      let timer: NodeJS.Timeout | undefined;
      const onAbort = (): void => leave(failed('CancelledError', 'the call was cancelled while waiting for a sandbox'));
      call.signal?.addEventListener('abort', onAbort, { once: true });
      entry.cleanup = () => {
        clearTimeout(timer);
        call.signal?.removeEventListener('abort', onAbort);
      };
      this.#queue.push(agent, entry);
      this.#drain();
      // Waiting for a sandbox to start is not the call's time: its clock starts when one is ready.
      if (!entry.taken && !this.#canServe(agent) && !this.#ownComing(agent)) entry.startWaitFrom ??= performance.now();
      const startWaitMs = this.#o.startWaitMs ?? START_WAIT_MS;
      if (!entry.taken) timer = setTimeout(
        () => leave(entry.startWaitFrom !== undefined ? failed('SandboxCrashError', noSandboxMessage(this.#o.label, startWaitMs)) : failed(timeoutError(timedOutText(undefined, ' while waiting for a free sandbox (the daemon is busy)')))),
        entry.startWaitFrom !== undefined ? startWaitMs : Math.max(0, call.deadline - performance.now()),
      );
      // Still waiting: the agent may wait only within its share.
      if (!call.requeued && this.#queue.remove(agent, entry)) {
        const waiting = this.#queue.sizeOf(agent);
        const refused = refusal({
          agent,
          limits: this.#o.limits(agent),
          waiting,
          running: this.#inFlight.get(agent) ?? 0,
          totalWaiting: this.#queue.size,
          agentsWaiting: this.#queue.agents().length + (waiting === 0 ? 1 : 0),
          maxQueued: this.#o.maxQueued,
          language: this.#o.language,
          avgCallMs: this.#avgCallMs,
        });
        if (refused) {
          entry.cleanup();
          resolve(failed('OverloadedError', refused));
        } else {
          this.#queue.push(agent, entry);
        }
      }
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const q of this.#queue.clear()) {
      q.cleanup();
      q.resolve(failed('CancelledError', 'the daemon is shutting down'));
    }
    await stopProcesses(this.#procs);
  }

  /** The memory_mb of the agent's next call (a bound interpreter that grew past it must be recycled for it). */
  #memoryOf(agent: string): number {
    return this.#queue.peek(agent)?.call.request.memoryMb ?? 0;
  }

  #canServe(agent: string): boolean {
    return !!this.#policy.pick(agent, this.#procs, this.#memoryOf(agent));
  }

  /** Bound: the agent's own process will free (its call waits for it, takes no other agent's). */
  #ownComing(agent: string): boolean {
    return this.#policy.kind === 'bound' && this.#procs.some((p) => p.state === 'ready' && !p.recycling && !p.pristine && p.lastAgent === agent && p.free === 0 && p.fits(this.#memoryOf(agent)));
  }

  /** Puts a new process in the slot of `old` (a dead one), or of any dead one, or at the end. */
  #place(proc: SandboxProcess, old?: SandboxProcess): void {
    const at = old ? this.#procs.indexOf(old) : this.#procs.findIndex((p) => p.state === 'dead');
    if (at >= 0) this.#procs[at] = proc;
    else this.#procs.push(proc);
  }

  #underLimit(agent: string): boolean {
    return (this.#inFlight.get(agent) ?? 0) < this.#o.limits(agent).maxInFlight;
  }

  /** Matches waiting calls to free threads, agents in round robin; bound: recycles idle processes for agents still waiting. */
  #drain(): void {
    if (this.#closed) return;
    if (this.#o.lazy) {
      const needing = this.#queue.agents().filter((a) => this.#underLimit(a) && !this.#canServe(a) && !this.#ownComing(a)).length;
      this.#onDemand.startFor(needing, this.#procs, this.#restartsPending, this.#o.count, () => this.#place(this.#spawn()));
    }
    let served = true;
    while (served && this.#queue.size > 0) {
      served = false;
      for (const agent of this.#queue.agents()) {
        if (!this.#underLimit(agent)) continue;
        const proc = this.#policy.pick(agent, this.#procs, this.#memoryOf(agent));
        if (!proc) continue;
        const entry = this.#queue.take(agent) as Queued;
        entry.taken = true;
        entry.cleanup();
        if (entry.startWaitFrom !== undefined) {
          const waited = performance.now() - entry.startWaitFrom;
          entry.call.startupWaitMs = (entry.call.startupWaitMs ?? 0) + waited;
          entry.call.deadline += waited;
        }
        void this.#dispatch(proc, entry.call).then(entry.resolve);
        served = true;
        break;
      }
    }
    if (this.#policy.kind === 'bound') this.#recycleForWaiting();
  }

  /** One pristine process per waiting agent that has none coming: recycle the least recently used idle one. */
  #recycleForWaiting(): void {
    const waiting = this.#queue.agents().filter((a) => this.#underLimit(a) && !this.#canServe(a) && !this.#ownComing(a));
    let coming = this.#restartsPending + this.#procs.filter((p) => p.state === 'starting' || p.recycling).length;
    for (const agent of waiting) {
      if (coming > 0) {
        coming--;
        continue;
      }
      const victim = this.#policy.victim(agent, this.#procs, this.#memoryOf(agent));
      if (!victim) return;
      this.#recycle(victim, agent);
    }
  }

  #recycle(proc: SandboxProcess, forAgent: string): void {
    this.counters.recycles++;
    this.#log.debug({ code: 'SANDBOX_RECYCLE', pid: proc.pid, from: proc.lastAgent, for: forAgent }, 'recycling a sandbox process for another agent');
    void proc.recycle(this.#o.recycleTimeoutMs ?? RECYCLE_TIMEOUT_MS).then((ok) => {
      if (!ok && proc.state !== 'dead') {
        // A fresh process is pristine too.
        this.#log.warn({ code: 'SANDBOX_RECYCLE_UNANSWERED', pid: proc.pid }, 'sandbox process did not answer a recycle; replacing it');
        proc.kill();
      }
      this.#drain();
    });
  }

  #dispatch(proc: SandboxProcess, call: PoolCall): Promise<Finished> {
    const id = this.#nextId++;
    const agent = call.request.agent;
    const startedAt = performance.now();
    const remaining = Math.max(1, Math.floor(call.deadline - startedAt));
    // A fresh secret per dispatch: only the thread that runs the call learns it (protocol.ts).
    const request: RunRequest = { ...call.request, timeoutMs: remaining, callKey: randomUUID() };
    this.#calls.set(id, { call, proc });
    this.counters.directCalls++;
    this.#inFlight.set(agent, (this.#inFlight.get(agent) ?? 0) + 1);
    let escalation: NodeJS.Timeout | undefined;
    const abort = (reason: AbortReason): void => {
      proc.abort(id, reason);
      // A process whose main thread cannot even answer an abort is beyond saving.
      escalation ??= setTimeout(() => {
        this.#log.error({ code: 'SANDBOX_UNRESPONSIVE', pid: proc.pid }, 'sandbox process did not answer an abort; killing it');
        proc.kill();
      }, ABORT_ESCALATION_MS);
    };
    const hard = setTimeout(() => abort('timeout'), remaining + HARD_DEADLINE_GRACE_MS);
    const onAbort = (): void => abort('cancelled');
    call.signal?.addEventListener('abort', onAbort, { once: true });
    return proc.run(id, request).then((finished) => {
      clearTimeout(hard);
      if (escalation) clearTimeout(escalation);
      call.signal?.removeEventListener('abort', onAbort);
      this.#calls.delete(id);
      const left = (this.#inFlight.get(agent) ?? 1) - 1;
      if (left > 0) this.#inFlight.set(agent, left);
      else this.#inFlight.delete(agent);
      this.#avgCallMs = 0.9 * this.#avgCallMs + 0.1 * (performance.now() - startedAt);
      this.#onDemand.used(proc);
      if (finished.workerReplaced && !finished.processDied) this.counters.workerReplacements++;
      // A call that never started is sent again, once: another call killed its process.
      if (finished.requeue && !call.requeued && !this.#closed && performance.now() < call.deadline) {
        call.requeued = true;
        return this.run(call);
      }
      this.#drain();
      return finished;
    });
  }

  /** Host calls and output from a process, routed to the call they belong to. */
  #spawn(): SandboxProcess {
    const proc = new SandboxProcess(
      this.#o.process,
      {
        onHostCall: (id, callId, method, args, viaLink) => {
          const entry = this.#calls.get(id);
          entry?.call.onHostCall(callId, method, args, viaLink ?? ((reply) => entry.proc.reply(id, reply)));
        },
        onOutput: (id, lines) => this.#calls.get(id)?.call.onOutput(lines),
        onExit: (p, code, signal, spawnError) => this.#onExit(p, code, signal, spawnError),
        onWorkerReady: () => this.#drain(),
      },
      this.#log,
      this.#o.hostLink,
      this.#o.launch,
    );
    proc.ready.then(
      () => {
        this.#failedStarts = 0;
        this.#onDemand.used(proc);
        this.#drain();
      },
      (err: unknown) => {
        // Stopped while starting by the daemon (shutdown) or from outside (a terminal's Ctrl-C that
        // reached it before it left the daemon's process group): not a failure of the sandbox.
        if (this.#closed) this.#log.debug({ code: 'SANDBOX_START_ABANDONED', err: (err as Error).message }, 'sandbox process stopped while starting');
        else if (OUTSIDE_SIGNALS.has(proc.exitSignal ?? '')) this.#log.warn({ code: 'SANDBOX_START_INTERRUPTED', signal: proc.exitSignal }, 'sandbox process was stopped by a signal while starting; starting another');
        else this.#log.error({ code: 'SANDBOX_START_FAILED', err: (err as Error).message }, 'sandbox process failed to start');
      },
    );
    return proc;
  }

  /** Every death ends here (sandbox-process.ts #die): the slot is refilled, after a back-off while starts keep failing. */
  #onExit(proc: SandboxProcess, code: number | null, signal: NodeJS.Signals | null, spawnError?: Error): void {
    const i = this.#procs.indexOf(proc);
    if (i < 0 || this.#closed) return;
    // On demand, a process that exited for idleness (or died with nothing waiting) is not replaced.
    if (this.#onDemand.ended(proc) || (this.#o.lazy && this.#queue.size === 0)) {
      this.#procs.splice(i, 1);
      this.#log.info({ code: 'SANDBOX_PROCESS_STOPPED', pid: proc.pid, exitCode: code, signal }, 'sandbox process ended; the next call that needs one starts one');
      this.#drain();
      return;
    }
    const duringStart = proc.startupMs === 0;
    this.#log.warn(
      { code: 'SANDBOX_PROCESS_EXIT', pid: proc.pid, exitCode: code, signal, spawnError: spawnError?.message },
      'sandbox process ended; starting a replacement',
    );
    this.counters.processRestarts++;
    if (duringStart) this.#failedStarts++;
    const delay = duringStart ? Math.min(RESTART_BACKOFF_MAX_MS, RESTART_BACKOFF_BASE_MS * 2 ** this.#failedStarts) : 0;
    this.#restartsPending++;
    const replace = (): void => {
      this.#restartsPending--;
      if (this.#closed) return;
      // Found again: on demand, other processes may have left the list meanwhile.
      this.#place(this.#spawn(), proc);
    };
    if (delay === 0) replace();
    else setTimeout(replace, delay).unref();
  }
}
