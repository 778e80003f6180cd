// A set of sandbox processes of one kind (JavaScript or Python) behind one queue. Calls go to the
// process with a free thread; a dead process is replaced at once (with back-off if it keeps dying
// while starting); the wall-clock deadline and cancellation of each call are enforced here, so a
// worker that never answers is still stopped.

import type { AbortReason, HostReply, Outcome, RunRequest, SandboxProcessOptions } from '../../workers/protocol.js';
import type { Logger } from '../util/logger.js';
import { SandboxProcess } from './sandbox-process.js';
import type { Finished } from './sandbox-process.js';

/** After the worker's own deadline, how long before the process is told to terminate it, ms. */
export const HARD_DEADLINE_GRACE_MS = 250;
/** If an abort is not answered this long, the whole process is killed, ms. */
export const ABORT_ESCALATION_MS = 3_000;
const RESTART_BACKOFF_MAX_MS = 10_000;

export interface PoolCall {
  request: RunRequest;
  /** Set once the call was sent again after its process died before starting it. */
  requeued?: boolean;
  /** performance.now() deadline of the whole call. */
  deadline: number;
  signal?: AbortSignal;
  onHostCall(callId: number, method: string, args: unknown[], reply: (r: HostReply) => void): void;
  onOutput(lines: string[]): void;
}

export interface PoolCounters {
  processRestarts: number;
  workerReplacements: number;
}

interface Queued {
  call: PoolCall;
  resolve: (f: Finished) => void;
  cleanup: () => void;
}

export class SandboxPool {
  readonly #options: SandboxProcessOptions;
  readonly #count: number;
  readonly #maxQueued: number;
  readonly #log: Logger;
  readonly #procs: SandboxProcess[] = [];
  readonly #queue: Queued[] = [];
  readonly #calls = new Map<number, { call: PoolCall; proc: SandboxProcess }>();
  #nextId = 1;
  #closed = false;
  #failedStarts = 0;
  readonly counters: PoolCounters = { processRestarts: 0, workerReplacements: 0 };

  constructor(options: SandboxProcessOptions, count: number, maxQueued: number, log: Logger) {
    this.#options = options;
    this.#count = count;
    this.#maxQueued = maxQueued;
    this.#log = log;
  }

  /** Starts every process and resolves when all are warm. */
  async start(): Promise<void> {
    for (let i = 0; i < this.#count; i++) this.#procs.push(this.#spawn());
    await Promise.all(this.#procs.map((p) => p.ready));
  }

  get threads(): number {
    return this.#count * this.#options.threads;
  }

  get busy(): number {
    return this.#calls.size;
  }

  get queued(): number {
    return this.#queue.length;
  }

  processes(): { pid: number | undefined; state: string; busy: number; startupMs: number }[] {
    return this.#procs.map((p) => ({ pid: p.pid, state: p.state, busy: p.busy, startupMs: p.startupMs }));
  }

  run(call: PoolCall): Promise<Finished> {
    if (this.#closed) return Promise.resolve(failed('CancelledError', 'the sandbox pool is shut down'));
    if (call.signal?.aborted) return Promise.resolve(failed('CancelledError', 'the call was cancelled before it started'));
    const proc = this.#pick();
    if (proc) return this.#dispatch(proc, call);
    if (this.#queue.length >= this.#maxQueued) {
      return Promise.resolve(failed('OverloadedError', `the daemon is overloaded: ${this.#queue.length} calls are already waiting for a sandbox; retry later`));
    }
    return new Promise<Finished>((resolve) => {
      const entry: Queued = { call, resolve, cleanup: () => {} };
      const leave = (f: Finished): void => {
        const i = this.#queue.indexOf(entry);
        if (i >= 0) this.#queue.splice(i, 1);
        entry.cleanup();
        resolve(f);
      };
      const timer = setTimeout(
        () => leave(failed('TimeoutError', 'execution timed out while waiting for a free sandbox (the daemon is busy)')),
        Math.max(0, call.deadline - performance.now()),
      );
      const onAbort = (): void => leave(failed('CancelledError', 'the call was cancelled while waiting for a sandbox'));
      call.signal?.addEventListener('abort', onAbort, { once: true });
      entry.cleanup = () => {
        clearTimeout(timer);
        call.signal?.removeEventListener('abort', onAbort);
      };
      this.#queue.push(entry);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const q of this.#queue.splice(0)) {
      q.cleanup();
      q.resolve(failed('CancelledError', 'the daemon is shutting down'));
    }
    const exits = this.#procs.map(
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
    await Promise.all(exits);
  }

  /** A process with a free thread; else one with room to queue a call ahead (the least loaded). */
  #pick(): SandboxProcess | undefined {
    let best: SandboxProcess | undefined;
    for (const p of this.#procs) if (p.free > 0 && (!best || p.free > best.free)) best = p;
    if (best) return best;
    for (const p of this.#procs) if (p.prefetchRoom > 0 && (!best || p.prefetchRoom > best.prefetchRoom)) best = p;
    return best;
  }

  #dispatch(proc: SandboxProcess, call: PoolCall): Promise<Finished> {
    const id = this.#nextId++;
    const remaining = Math.max(1, Math.floor(call.deadline - performance.now()));
    const request: RunRequest = { ...call.request, timeoutMs: remaining };
    this.#calls.set(id, { call, proc });
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
      if (finished.workerReplaced && !finished.processDied) this.counters.workerReplacements++;
      // A call that never started is sent again, once: another call killed its process.
      if (finished.requeue && !call.requeued && !this.#closed && performance.now() < call.deadline) {
        call.requeued = true;
        const again = this.run(call);
        this.#drain();
        return again;
      }
      this.#drain();
      return finished;
    });
  }

  #drain(): void {
    while (this.#queue.length > 0) {
      const proc = this.#pick();
      if (!proc) return;
      const entry = this.#queue.shift() as Queued;
      entry.cleanup();
      void this.#dispatch(proc, entry.call).then(entry.resolve);
    }
  }

  /** Host calls and output from a process, routed to the call they belong to. */
  #spawn(): SandboxProcess {
    const proc = new SandboxProcess(
      this.#options,
      {
        onHostCall: (id, callId, method, args) => {
          const entry = this.#calls.get(id);
          entry?.call.onHostCall(callId, method, args, (reply) => entry.proc.reply(id, reply));
        },
        onOutput: (id, lines) => this.#calls.get(id)?.call.onOutput(lines),
        onExit: (p, code, signal) => this.#onExit(p, code, signal),
        onWorkerReady: () => this.#drain(),
      },
      this.#log,
    );
    proc.ready.then(
      () => {
        this.#failedStarts = 0;
        this.#drain();
      },
      (err: unknown) => this.#log.error({ code: 'SANDBOX_START_FAILED', err: (err as Error).message }, 'sandbox process failed to start'),
    );
    return proc;
  }

  #onExit(proc: SandboxProcess, code: number | null, signal: NodeJS.Signals | null): void {
    const i = this.#procs.indexOf(proc);
    if (i < 0 || this.#closed) return;
    const duringStart = proc.startupMs === 0;
    this.#log.warn({ code: 'SANDBOX_PROCESS_EXIT', pid: proc.pid, exitCode: code, signal }, 'sandbox process exited; starting a replacement');
    this.counters.processRestarts++;
    if (duringStart) this.#failedStarts++;
    const delay = duringStart ? Math.min(RESTART_BACKOFF_MAX_MS, 100 * 2 ** this.#failedStarts) : 0;
    const replace = (): void => {
      if (this.#closed) return;
      this.#procs[i] = this.#spawn();
    };
    if (delay === 0) replace();
    else setTimeout(replace, delay).unref();
  }
}

function failed(type: string, message: string): Finished {
  const outcome: Outcome = { ok: false, error: { type, message }, output: [] };
  return { outcome, workerReplaced: false };
}
