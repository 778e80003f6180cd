// The coordinator's handle on one sandbox process (workers/pool-host.ts): starts it, sends it
// calls, relays its host calls, and turns its death into a clear failure of exactly the calls it
// was running. Every way a process can fail (exit, a fork that fails with 'error' and no 'exit',
// a fork that throws, a kill nobody confirms) ends in one place, #die, so the pool above always
// hears of it and starts a replacement. It also remembers whose code the process ran.

import { EventEmitter } from 'node:events';
import { fork } from 'node:child_process';
import type { ForkOptions } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { HOST_LINK_ENV } from '../../workers/protocol.js';
import type { AbortReason, FromSandbox, HostReply, Outcome, RunRequest, SandboxProcessOptions, ToSandbox } from '../../workers/protocol.js';
import { batchingSender, unbatch } from '../../workers/ipc-batch.js';
import type { Batch } from '../../workers/ipc-batch.js';
import type { Logger } from '../util/logger.js';
import type { HostLinkServer } from './host-link-server.js';

/** How long a sandbox process may take to warm its threads before it counts as failed, ms. */
export const STARTUP_TIMEOUT_MS = 30_000;
/** Pyodide workers load in about 5 s idle and 10-20 s on a loaded 2-core machine, ms. */
export const PYTHON_STARTUP_TIMEOUT_MS = 120_000;
/** After SIGKILL, how long to wait for 'exit' before the process is counted dead anyway, ms. */
export const KILL_CONFIRM_MS = 5_000;

/** What the pool needs of a child process; node's ChildProcess fits, and tests pass doubles. */
export interface SandboxChild extends EventEmitter {
  readonly pid?: number | undefined;
  readonly connected: boolean;
  send(message: ToSandbox | Batch<ToSandbox>, callback: (error: Error | null) => void): boolean;
  kill(signal?: NodeJS.Signals): boolean;
}

/** Starts a sandbox process: `fork` in production, a double in tests (a fork that fails, ...). */
export type LaunchSandbox = (script: string, args: readonly string[], options: ForkOptions) => SandboxChild;

export const launchWithFork: LaunchSandbox = (script, args, options) => fork(script, [...args], options);

export interface Finished {
  outcome: Outcome;
  /** The worker thread (or the whole process) was replaced after this call. */
  workerReplaced: boolean;
  processDied?: boolean;
  /** The process died before this call started: it never ran, and may be sent elsewhere. */
  requeue?: boolean;
}

export interface SandboxProcessEvents {
  /** `reply` is given when the call came over the host link: its answer goes back there. */
  onHostCall(id: number, callId: number, method: string, args: unknown[], reply?: (r: HostReply) => void): void;
  onOutput(id: number, lines: string[]): void;
  /** The process is gone (exited, never started, or killed and unconfirmed); `spawnError` when the fork failed. */
  onExit(proc: SandboxProcess, code: number | null, signal: NodeJS.Signals | null, spawnError?: Error): void;
  onWorkerReady(proc: SandboxProcess): void;
}

/** `started`: the call is running (not waiting in the process behind another). */
/** `key`: the call's secret (RunRequest.callKey); a host call without it is not the call's. */
type Inflight = { resolve: (f: Finished) => void; started: boolean; agent: string; key: string | undefined };

/** The compiled worker entry; tests run the TypeScript sources but the sandbox always runs dist/. */
export function workerScript(name: string): string {
  const here = fileURLToPath(import.meta.url);
  const fromSource = here.endsWith('.ts');
  const url = fromSource ? new URL(`../../dist/workers/${name}.js`, import.meta.url) : new URL(`../../workers/${name}.js`, import.meta.url);
  return fileURLToPath(url);
}

export class SandboxProcess {
  readonly #child: SandboxChild;
  readonly #inflight = new Map<number, Inflight>();
  readonly #events: SandboxProcessEvents;
  readonly #log: Logger;
  readonly ready: Promise<void>;
  readonly threads: number;
  readonly kind: 'js' | 'python';
  #state: 'starting' | 'ready' | 'dead' = 'starting';
  /** Threads being replaced after a terminated task: not free until the process says so. */
  #warming = 0;
  #killTimer: NodeJS.Timeout | undefined;
  #recycled: ((ok: boolean) => void) | undefined;
  #probe: ((ok: boolean) => void) | undefined;
  startupMs = 0;
  /** The agent whose code this process ran last (for Python: the agent it is bound to). */
  lastAgent: string | undefined;
  /** No agent's code has run here since the process started or its interpreter was recycled. */
  pristine = true;
  /** performance.now() of the last call sent here, for least-recently-used choices. */
  lastUsedAt = 0;

  constructor(options: SandboxProcessOptions, events: SandboxProcessEvents, log: Logger, launch: LaunchSandbox = launchWithFork, link?: HostLinkServer) {
    this.threads = options.threads;
    // Its threads' host links may carry calls for what runs here, and nothing else.
    // One connection per thread, and as many again for replaced threads whose sockets still close.
    const place = link?.register((call, reply) => {
      if (this.#callsFor(call.id, call.key)) events.onHostCall(call.id, call.callId, call.method, call.args, (r) => this.#inflight.has(call.id) && reply(r));
    }, 2 * options.threads + 2);
    this.#dropLink = place?.drop;
    this.kind = options.kind;
    this.#events = events;
    this.#log = log;
    const forkOptions: ForkOptions = {
      execArgv: ['--enable-experimental-regexp-engine-on-excessive-backtracks'],
      // Every message is plain JSON data (results and host values are made JSON-safe in the worker):
      // JSON framing costs about half the CPU of the structured-clone serializer per message.
      serialization: 'json',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      // A process group of its own: a terminal's Ctrl-C reaches the daemon only, which stops its
      // sandboxes in order (and a sandbox whose daemon is gone exits on 'disconnect').
      detached: true,
      // The link's secret goes in the environment, not in argv, where every local user sees it.
      env: { NODE_ENV: process.env.NODE_ENV ?? 'production', ...(place ? { [HOST_LINK_ENV]: JSON.stringify(place.info) } : {}) },
    };
    let child: SandboxChild;
    try {
      child = launch(workerScript('pool-host'), [JSON.stringify(options)], forkOptions);
    } catch (err) {
      // fork throws for some errors (ENOMEM) instead of emitting 'error': the same failure.
      child = new EventEmitter() as unknown as SandboxChild;
      Object.assign(child, { pid: undefined, connected: false, send: () => false, kill: () => false });
      process.nextTick(() => child.emit('error', err));
    }
    this.#child = child;
    const startupTimeoutMs = options.kind === 'python' ? PYTHON_STARTUP_TIMEOUT_MS : STARTUP_TIMEOUT_MS;
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`sandbox process did not start within ${startupTimeoutMs} ms`));
        this.kill();
      }, startupTimeoutMs);
      this.#child.on('message', (batch: FromSandbox | Batch<FromSandbox>) => unbatch(batch, (msg) => {
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
      }));
      this.#rejectStart = (why: string) => {
        clearTimeout(timer);
        reject(new Error(why));
      };
    });
    // Nobody may be left waiting on a rejected start-up promise; a process that fails to start is
    // killed, which ends in #die and a replacement.
    this.ready.catch(() => this.kill());
    this.#child.on('exit', (code: number | null, signal: NodeJS.Signals | null) => this.#die(code, signal));
    this.#child.on('error', (err: Error) => this.#onError(err));
  }

  #rejectStart: (why: string) => void = () => {};

  /** Whether a host call names a call running here with that call's own key. */
  #callsFor(id: number, key: unknown): boolean {
    const entry = this.#inflight.get(id);
    return entry !== undefined && typeof entry.key === 'string' && entry.key.length > 0 && key === entry.key;
  }
  readonly #dropLink: (() => void) | undefined;

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get state(): 'starting' | 'ready' | 'dead' {
    return this.#state;
  }

  /** A recycle was asked for and not yet answered: no call may be sent here. */
  get recycling(): boolean {
    return this.#recycled !== undefined;
  }

  /** Whether every call in flight here is `agent`'s (true when none is). */
  onlyRuns(agent: string): boolean {
    for (const e of this.#inflight.values()) if (e.agent !== agent) return false;
    return true;
  }

  get busy(): number {
    return this.#inflight.size;
  }

  /** Threads with nothing running or sent ahead. */
  get free(): number {
    return this.#state === 'ready' && !this.#killTimer ? Math.max(0, this.threads - this.#inflight.size - this.#warming) : 0;
  }

  /** Room to send a call ahead: one waiting call per thread, so no thread idles for an IPC round trip. */
  get prefetchRoom(): number {
    return this.#state === 'ready' && this.#warming === 0 && !this.#killTimer ? Math.max(0, 2 * this.threads - this.#inflight.size) : 0;
  }

  run(id: number, request: RunRequest): Promise<Finished> {
    this.lastAgent = request.agent;
    this.pristine = false;
    this.lastUsedAt = performance.now();
    return new Promise<Finished>((resolve) => {
      // With a thread free the process starts the call on receipt; otherwise it waits there until
      // a 'done' names it as started.
      let started = 0;
      for (const e of this.#inflight.values()) if (e.started) started++;
      this.#inflight.set(id, { resolve, started: started < this.threads, agent: request.agent, key: request.callKey });
      this.#send({ type: 'run', id, request });
    });
  }

  /**
   * Asks the idle process to replace its interpreter with a pristine one. Resolves true once it
   * says 'recycled' (the process is then pristine), false when it did not answer within
   * `timeoutMs` or died: the caller must then kill it (a fresh process is pristine too).
   */
  recycle(timeoutMs: number): Promise<boolean> {
    if (this.#state !== 'ready' || this.#inflight.size > 0 || this.#recycled) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => settle(false), timeoutMs);
      const settle = (ok: boolean): void => {
        clearTimeout(timer);
        this.#recycled = undefined;
        if (ok) {
          this.pristine = true;
          this.lastAgent = undefined;
        }
        resolve(ok);
      };
      this.#recycled = settle;
      this.#send({ type: 'recycle' });
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

  /**
   * Whether this build's sandbox answers 'recycle', asked of a JavaScript process (which has
   * nothing to replace and answers at once, calls or not): resolves false after `timeoutMs`.
   */
  probeRecycle(timeoutMs: number): Promise<boolean> {
    if (this.#state !== 'ready' || this.#recycled) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => settle(false), timeoutMs);
      timer.unref();
      const settle = (ok: boolean): void => {
        clearTimeout(timer);
        this.#probe = undefined;
        resolve(ok);
      };
      this.#probe = settle;
      this.#send({ type: 'recycle' });
    });
  }

  /** SIGKILL; if no 'exit' confirms it within KILL_CONFIRM_MS, the process is counted dead anyway. */
  kill(): void {
    if (this.#state === 'dead' || this.#killTimer) return;
    try {
      this.#child.kill('SIGKILL');
    } catch (err) {
      this.#log.warn({ code: 'SANDBOX_KILL_FAILED', pid: this.pid, err: (err as Error).message }, 'could not kill sandbox process');
    }
    this.#killTimer = setTimeout(() => this.#die(null, 'SIGKILL'), KILL_CONFIRM_MS);
    this.#killTimer.unref();
  }

  /** Batched: one IPC write per turn (see workers/ipc-batch.ts). */
  readonly #send = batchingSender<ToSandbox>((msg) => {
    if (this.#state === 'dead' || !this.#child.connected) return;
    this.#child.send(msg, (err) => {
      if (err) this.#log.warn({ code: 'SANDBOX_SEND_FAILED', pid: this.pid, err: err.message }, 'could not reach sandbox process');
    });
  });

  /**
   * Node emits 'error' and no 'exit' when the fork itself fails (EMFILE, EAGAIN): without a pid
   * there is no process, so it is dead now. With a pid (a failed kill or send) the process is
   * killed, which ends in 'exit' or the kill confirmation timer.
   */
  #onError(err: Error): void {
    const code = (err as { code?: unknown }).code;
    this.#log.error({ code: 'SANDBOX_SPAWN_FAILED', errno: typeof code === 'string' ? code : undefined, pid: this.pid, err: err.message }, 'sandbox process error');
    if (this.#child.pid === undefined) this.#die(null, null, err);
    else this.kill();
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
      case 'recycled':
        if (this.#probe) this.#probe(true);
        else this.#recycled?.(true);
        return;
      case 'unstoppable':
        // Its memory or time limit already answered the call; what is left must not outlive it.
        this.#log.warn({ code: 'SANDBOX_UNSTOPPABLE', pid: this.pid }, msg.message);
        this.kill();
        return;
      case 'worker-ready':
        this.#warming = Math.max(0, this.#warming - 1);
        this.#events.onWorkerReady(this);
        return;
      case 'host-call':
        if (this.#callsFor(msg.id, msg.key)) this.#events.onHostCall(msg.id, msg.callId, msg.method, msg.args);
        return;
      case 'output':
        if (this.#inflight.has(msg.id)) this.#events.onOutput(msg.id, msg.lines);
        return;
      default:
        return;
    }
  }

  /** The one way a process ends, whatever the cause; runs once. */
  #die(code: number | null, signal: NodeJS.Signals | null, spawnError?: Error): void {
    if (this.#state === 'dead') return;
    const wasStarting = this.#state === 'starting';
    this.#state = 'dead';
    this.#dropLink?.();
    if (this.#killTimer) clearTimeout(this.#killTimer);
    this.#recycled?.(false);
    this.#probe?.(false);
    if (wasStarting) {
      this.#rejectStart(
        spawnError
          ? `sandbox process could not be started: ${spawnError.message}`
          : `sandbox process exited during start-up (code ${code}, signal ${signal})`,
      );
    }
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
    this.#events.onExit(this, code, signal, spawnError);
  }
}
