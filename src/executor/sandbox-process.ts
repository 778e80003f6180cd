// The coordinator's handle on one sandbox process (workers/kit/pool-host.ts): starts it, sends it
// calls, relays its host calls, and turns its death into a clear failure of exactly the calls it
// was running. Every way a process can fail (exit, a fork that fails with 'error' and no 'exit',
// a fork that throws, a kill nobody confirms) ends in one place, #die, so the pool above always
// hears of it and starts a replacement. It also remembers whose code the process ran.
// Calls go to the process's threads over their own links (thread-links.ts), and the process's main
// thread never sees them: it only relays synchronous host calls, stops calls and answers for a call
// whose thread it ended.

import type { AbortReason, FromSandbox, HostReply, RunRequest, SandboxProcessOptions, ToSandbox } from '../../workers/kit/protocol.js';
import type { Logger } from '../util/logger.js';
import type { HostLinkServer } from './host-link-server.js';
import { ThreadLinks } from './thread-links.js';
import { diedWith, launchSandbox, launchWithFork, sendToSandbox } from './sandbox-launch.js';
import type { Finished, LaunchSandbox, SandboxChild } from './sandbox-launch.js';

export { launchWithFork, workerScript } from './sandbox-launch.js';
export type { Finished, LaunchSandbox, SandboxChild } from './sandbox-launch.js';

/** After SIGKILL, how long to wait for 'exit' before the process is counted dead anyway, ms. */
export const KILL_CONFIRM_MS = 5_000;


export interface SandboxProcessEvents {
  /** `reply` is given when the call came over the host link (an awaited call): its answer goes back there. */
  onHostCall(id: number, callId: number, method: string, args: unknown[], reply?: (r: HostReply) => void): void;
  onOutput(id: number, lines: string[]): void;
  /** The process is gone (exited, never started, or killed and unconfirmed); `spawnError` when the fork failed. */
  onExit(proc: SandboxProcess, code: number | null, signal: NodeJS.Signals | null, spawnError?: Error): void;
  /** A thread is free to take a call. */
  onWorkerReady(proc: SandboxProcess): void;
}

/** `key`: its secret (RunRequest.callKey), which its host calls carry. */
type Inflight = { resolve: (f: Finished) => void; agent: string; key: string | undefined; timeoutMs: number };

export class SandboxProcess {
  readonly #child: SandboxChild;
  readonly #inflight = new Map<number, Inflight>();
  readonly #events: SandboxProcessEvents;
  readonly #log: Logger;
  readonly ready: Promise<void>;
  readonly threads: number;
  /** The runtime's short name (its row's `process.kind`). */
  readonly kind: string;
  #state: 'starting' | 'ready' | 'dead' = 'starting';
  #killTimer: NodeJS.Timeout | undefined;
  #recycled: ((ok: boolean) => void) | undefined;
  startupMs = 0;
  /** The agent whose code this process ran last (for Python: the agent it is bound to). */
  lastAgent: string | undefined;
  /** No agent's code has run here since the process started or its interpreter was recycled. */
  pristine = true;
  /** The signal the process died of, once dead. */
  exitSignal: NodeJS.Signals | null = null;
  /** How long the last recycle took in the process, ms. */
  lastRecycleMs = 0;
  /** performance.now() of the last call sent here, for least-recently-used choices. */
  lastUsedAt = 0;

  constructor(options: SandboxProcessOptions, events: SandboxProcessEvents, log: Logger, link: HostLinkServer, launch: LaunchSandbox = launchWithFork) {
    this.threads = options.threads;
    const links = new ThreadLinks({
      done: (id, outcome) => this.#settle(id, { outcome, workerReplaced: false }),
      output: (id, lines) => this.#inflight.has(id) && events.onOutput(id, lines),
      lost: (id) =>
        this.#settle(id, {
          outcome: { ok: false, output: [], error: { type: 'SandboxCrashError', message: 'the sandbox thread running the call ended before answering (its link closed); it was replaced' } },
          workerReplaced: true,
        }),
      free: () => {
        if (this.#whenServing && links.started >= this.threads) {
          const warm = this.#whenServing;
          this.#whenServing = undefined;
          warm();
        }
        events.onWorkerReady(this);
      },
    });
    this.#links = links;
    // Its threads' links carry calls for what runs here, and nothing else: a call's host calls only
    // from the link the call went out on. One connection per thread and per standby thread, and as
    // many again for replaced threads whose sockets still close.
    const place = link.register(
      (call, reply, conn) => {
        if (!this.#callsFor(call.id, call.key) || !links.carries(conn, call.id)) return;
        events.onHostCall(call.id, call.callId, call.method, call.args, (r) => this.#inflight.has(call.id) && reply(r));
      },
      4 * options.threads + 2,
      { frame: (conn, frame) => links.frame(conn, frame), closed: (conn) => links.closed(conn) },
    );
    this.#dropLink = place?.drop;
    this.kind = options.kind;
    this.#events = events;
    this.#log = log;
    this.#child = launchSandbox(launch, options, place.info);
    const { startupTimeoutMs } = options;
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`sandbox process did not start within ${startupTimeoutMs} ms`));
        this.kill();
      }, startupTimeoutMs);
      this.#child.on('message', (msg: FromSandbox) => {
        if (msg.type === 'ready') {
          // Ready once every thread also said it serves on its link, so the first calls are
          // spread over the processes as dispatch wants, not all sent to the first.
          const warm = (): void => {
            clearTimeout(timer);
            this.#state = 'ready';
            this.startupMs = msg.startupMs;
            resolve();
          };
          if (links.started >= this.threads) warm();
          else this.#whenServing = warm;
        } else if (msg.type === 'fatal') {
          this.#log.error({ code: 'SANDBOX_FATAL', pid: this.pid }, msg.message);
          clearTimeout(timer);
          reject(new Error(msg.message));
        } else {
          this.#onMessage(msg);
        }
      });
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
  /** Its threads, as their links reach them. */
  readonly #links: ThreadLinks;
  /** Says the process is ready once its threads serve (set while they do not yet). */
  #whenServing: (() => void) | undefined;

  /** Resolves call `id` once, whoever answers first (its thread, or its process for it). */
  #settle(id: number, finished: Finished): void {
    const entry = this.#inflight.get(id);
    if (!entry) return;
    this.#inflight.delete(id);
    entry.resolve(finished);
  }

  /** Whether a host call names a call running here with that call's own key. */
  #callsFor(id: number, key: unknown): boolean {
    const entry = this.#inflight.get(id);
    return entry !== undefined && typeof entry.key === 'string' && entry.key.length > 0 && key === entry.key;
  }
  readonly #dropLink: () => void;

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

  get busy(): number {
    return this.#inflight.size;
  }

  /** Threads free to take a call now. */
  get free(): number {
    if (this.#state !== 'ready' || this.#killTimer || this.#recycled) return 0;
    return this.#links.free;
  }

  /** Whether a free thread may take a call with this memory_mb (false: a bound interpreter grew past it and must be recycled first). */
  fits(memoryMb: number): boolean {
    return this.#links.fits(memoryMb);
  }

  /**
   * Sends a call to a free thread (the pool chose this process because one is). A call no thread
   * could take (its thread was ending as it was chosen) comes back to be sent again elsewhere.
   */
  run(id: number, request: RunRequest): Promise<Finished> {
    this.lastAgent = request.agent;
    this.pristine = false;
    this.lastUsedAt = performance.now();
    return new Promise<Finished>((resolve) => {
      this.#inflight.set(id, { resolve, agent: request.agent, key: request.callKey, timeoutMs: request.timeoutMs });
      if (!this.#links.send(id, request)) this.#settle(id, diedWith(false, null, null));
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
      // Its threads take nothing until their pristine successors say they serve.
      this.#links.retireAll();
      this.#send({ type: 'recycle' });
    });
  }

  /** Stops a call a thread runs: its process interrupts it or ends its thread, and answers for it. */
  abort(id: number, reason: AbortReason): void {
    const entry = this.#inflight.get(id);
    if (entry) this.#send({ type: 'abort', id, reason, timeoutMs: entry.timeoutMs });
  }

  reply(id: number, reply: HostReply): void {
    if (this.#inflight.has(id)) this.#send({ type: 'host-reply', id, reply });
  }

  /** Ask for a clean stop; calls in flight are aborted. */
  shutdown(): void {
    this.#send({ type: 'shutdown' });
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

  /** The control channel: calls never take it (they go over their thread's link). */
  #send(msg: ToSandbox): void {
    if (this.#state === 'dead' || !this.#child.connected) return;
    sendToSandbox(this.#child, msg, (err) => this.#log.warn({ code: 'SANDBOX_SEND_FAILED', pid: this.pid, err: err.message }, 'could not reach sandbox process'));
  }

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
      case 'done':
        // Its thread was ended: a replacement counts once its link says 'serving'.
        this.#links.release(msg.id);
        this.#settle(msg.id, { outcome: msg.outcome, workerReplaced: msg.workerReplaced });
        return;
      case 'recycled':
        this.lastRecycleMs = msg.ms;
        this.#recycled?.(true);
        return;
      case 'unstoppable':
        // Its memory or time limit already answered the call; what is left must not outlive it.
        this.#log.warn({ code: 'SANDBOX_UNSTOPPABLE', pid: this.pid }, msg.message);
        this.kill();
        return;
      case 'host-call':
        if (this.#callsFor(msg.id, msg.key)) this.#events.onHostCall(msg.id, msg.callId, msg.method, msg.args);
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
    this.exitSignal = signal;
    this.#dropLink();
    this.#links.clear();
    if (this.#killTimer) clearTimeout(this.#killTimer);
    this.#recycled?.(false);
    if (wasStarting) {
      this.#rejectStart(
        spawnError
          ? `sandbox process could not be started: ${spawnError.message}`
          : `sandbox process exited during start-up (code ${code}, signal ${signal})`,
      );
    }
    // Every call in flight was sent to a thread: it may have run some of it.
    for (const [id, entry] of this.#inflight) {
      this.#inflight.delete(id);
      entry.resolve(diedWith(true, code, signal));
    }
    this.#events.onExit(this, code, signal, spawnError);
  }
}
