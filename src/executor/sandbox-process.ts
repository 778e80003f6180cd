// The coordinator's handle on one sandbox process (workers/pool-host.ts): starts it, sends it
// calls, relays its host calls, and turns its death into a clear failure of exactly the calls it
// was running. The pool above decides when to start a replacement.

import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { AbortReason, FromSandbox, HostReply, Outcome, RunRequest, SandboxProcessOptions, ToSandbox } from '../../workers/protocol.js';
import type { Logger } from '../util/logger.js';

/** How long a sandbox process may take to warm its threads before it counts as failed, ms. */
export const STARTUP_TIMEOUT_MS = 30_000;
/** Pyodide workers load in about 5 s idle and 10-20 s on a loaded 2-core machine, ms. */
export const PYTHON_STARTUP_TIMEOUT_MS = 120_000;

export interface Finished {
  outcome: Outcome;
  /** The worker thread (or the whole process) was replaced after this call. */
  workerReplaced: boolean;
  processDied?: boolean;
  /** The process died before this call started: it never ran, and may be sent elsewhere. */
  requeue?: boolean;
}

export interface SandboxProcessEvents {
  onHostCall(id: number, callId: number, method: string, args: unknown[]): void;
  onOutput(id: number, lines: string[]): void;
  onExit(proc: SandboxProcess, code: number | null, signal: NodeJS.Signals | null): void;
  onWorkerReady(proc: SandboxProcess): void;
}

/** `started`: the call is running (not waiting in the process behind another). */
type Inflight = { resolve: (f: Finished) => void; started: boolean };

/** The compiled worker entry; tests run the TypeScript sources but the sandbox always runs dist/. */
export function workerScript(name: string): string {
  const here = fileURLToPath(import.meta.url);
  const fromSource = here.endsWith('.ts');
  const url = fromSource ? new URL(`../../dist/workers/${name}.js`, import.meta.url) : new URL(`../../workers/${name}.js`, import.meta.url);
  return fileURLToPath(url);
}

export class SandboxProcess {
  readonly #child: ChildProcess;
  readonly #inflight = new Map<number, Inflight>();
  readonly #events: SandboxProcessEvents;
  readonly #log: Logger;
  readonly ready: Promise<void>;
  readonly threads: number;
  readonly kind: 'js' | 'python';
  #state: 'starting' | 'ready' | 'dead' = 'starting';
  /** Threads being replaced after a terminated task: not free until the process says so. */
  #warming = 0;
  startupMs = 0;

  constructor(options: SandboxProcessOptions, events: SandboxProcessEvents, log: Logger) {
    this.threads = options.threads;
    this.kind = options.kind;
    this.#events = events;
    this.#log = log;
    this.#child = fork(workerScript('pool-host'), [JSON.stringify(options)], {
      execArgv: ['--enable-experimental-regexp-engine-on-excessive-backtracks'],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      env: { NODE_ENV: process.env.NODE_ENV ?? 'production' },
    });
    const startupTimeoutMs = options.kind === 'python' ? PYTHON_STARTUP_TIMEOUT_MS : STARTUP_TIMEOUT_MS;
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`sandbox process did not start within ${startupTimeoutMs} ms`));
        this.kill();
      }, startupTimeoutMs);
      this.#child.on('message', (msg: FromSandbox) => {
        if (msg.type === 'ready') {
          clearTimeout(timer);
          this.#state = 'ready';
          this.startupMs = msg.startupMs;
          resolve();
        } else if (msg.type === 'fatal') {
          this.#log.error({ code: 'SANDBOX_FATAL', pid: this.pid }, msg.message);
          clearTimeout(timer);
          reject(new Error(msg.message));
        } else {
          this.#onMessage(msg);
        }
      });
      this.#child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`sandbox process exited during start-up (code ${code}, signal ${signal})`));
      });
    });
    // Nobody may be left waiting on a rejected start-up promise.
    this.ready.catch(() => {});
    this.#child.on('exit', (code, signal) => this.#onExit(code, signal));
    this.#child.on('error', (err) => this.#log.error({ code: 'SANDBOX_SPAWN_FAILED', err: err.message }, 'sandbox process error'));
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get state(): 'starting' | 'ready' | 'dead' {
    return this.#state;
  }

  get busy(): number {
    return this.#inflight.size;
  }

  /** Threads with nothing running or sent ahead. */
  get free(): number {
    return this.#state === 'ready' ? Math.max(0, this.threads - this.#inflight.size - this.#warming) : 0;
  }

  /** Room to send a call ahead: one waiting call per thread, so no thread idles for an IPC round trip. */
  get prefetchRoom(): number {
    return this.#state === 'ready' && this.#warming === 0 ? Math.max(0, 2 * this.threads - this.#inflight.size) : 0;
  }

  run(id: number, request: RunRequest): Promise<Finished> {
    return new Promise<Finished>((resolve) => {
      // With a thread free the process starts the call on receipt; otherwise it waits there until
      // a 'done' names it as started.
      let started = 0;
      for (const e of this.#inflight.values()) if (e.started) started++;
      this.#inflight.set(id, { resolve, started: started < this.threads });
      this.#send({ type: 'run', id, request });
    });
  }

  abort(id: number, reason: AbortReason): void {
    if (this.#inflight.has(id)) this.#send({ type: 'abort', id, reason });
  }

  reply(id: number, reply: HostReply): void {
    if (this.#inflight.has(id)) this.#send({ type: 'host-reply', id, reply });
  }

  /** Ask for a clean stop; calls in flight are aborted. */
  shutdown(): void {
    this.#send({ type: 'shutdown' });
  }

  kill(): void {
    if (this.#state !== 'dead') this.#child.kill('SIGKILL');
  }

  #send(msg: ToSandbox): void {
    if (this.#state === 'dead' || !this.#child.connected) return;
    this.#child.send(msg, (err) => {
      if (err) this.#log.warn({ code: 'SANDBOX_SEND_FAILED', pid: this.pid, err: err.message }, 'could not reach sandbox process');
    });
  }

  #onMessage(msg: FromSandbox): void {
    switch (msg.type) {
      case 'done': {
        const entry = this.#inflight.get(msg.id);
        if (!entry) return;
        this.#inflight.delete(msg.id);
        if (msg.workerReplaced) this.#warming++;
        for (const startedId of msg.started ?? []) {
          const next = this.#inflight.get(startedId);
          if (next) next.started = true;
        }
        entry.resolve({ outcome: msg.outcome, workerReplaced: msg.workerReplaced });
        return;
      }
      case 'worker-ready':
        this.#warming = Math.max(0, this.#warming - 1);
        this.#events.onWorkerReady(this);
        return;
      case 'host-call':
        if (this.#inflight.has(msg.id)) this.#events.onHostCall(msg.id, msg.callId, msg.method, msg.args);
        return;
      case 'output':
        if (this.#inflight.has(msg.id)) this.#events.onOutput(msg.id, msg.lines);
        return;
      default:
        return;
    }
  }

  #onExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.#state = 'dead';
    // V8's fatal out-of-memory aborts the process (SIGABRT, or exit 134): the call it was running
    // allocated past what any limit could stop in time.
    const oom = signal === 'SIGABRT' || signal === 'SIGTRAP' || signal === 'SIGILL' || code === 134;
    for (const [id, entry] of this.#inflight) {
      this.#inflight.delete(id);
      if (!entry.started) {
        // Sent ahead and still waiting: the death was another call's; this one goes elsewhere.
        entry.resolve({ outcome: { ok: false, output: [], error: { type: 'SandboxCrashError', message: 'the sandbox process died before the call started' } }, workerReplaced: false, requeue: true });
        continue;
      }
      entry.resolve({
        outcome: {
          ok: false,
          output: [],
          error: oom
            ? { type: 'MemoryLimitError', message: 'the call exhausted memory and V8 stopped its sandbox process; the process was replaced and other calls were not affected' }
            : { type: 'SandboxCrashError', message: `the sandbox process died (code ${code}, signal ${signal}); it was replaced` },
        },
        workerReplaced: true,
        processDied: true,
      });
    }
    this.#events.onExit(this, code, signal);
  }
}
