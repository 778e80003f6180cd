// Everything one execute_code call owns inside a worker: its link to the coordinator, its timers,
// its output, its deadline. When the call ends the scope is closed: timers are cleared, the port is
// closed and every endowed function refuses to act, so work a call leaves behind has no powers.

import { receiveMessageOnPort } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { GUEST_ERROR } from './guest-errors.js';
import type { ToThread, WorkerMessage } from './protocol.js';
import { formatArgs } from './format.js';
import type { WorkerHostLink } from './host-link.js';
import { quickBytes, retainedBytes } from './memory.js';

/** Output lines kept per call; beyond it lines are counted, not kept. */
export const MAX_OUTPUT_LINES = 10_000;
/** Output characters kept per call. */
export const MAX_OUTPUT_CHARS = 2_000_000;
/** Streamed output is sent at most this often, ms. */
const OUTPUT_FLUSH_MS = 50;
/** Async host calls (tools, fetch) one execute_code call may have in flight; more wait here. */
export const MAX_ASYNC_IN_FLIGHT = 32;
/** Async host calls one execute_code call may have waiting; past it they are refused. */
export const MAX_ASYNC_WAITING = 10_000;

const INTRINSIC_ERRORS: Record<string, ErrorConstructor> = { TypeError, RangeError, SyntaxError, ReferenceError };

/**
 * An error for the guest, built from the intrinsic constructors only: a host subclass would give
 * the guest a mutable prototype shared by every later call in this worker.
 */
export function makeError(name: string, message: string): Error {
  const Ctor = INTRINSIC_ERRORS[name] ?? Error;
  const err = new Ctor(message);
  if (err.name !== name) Object.defineProperty(err, 'name', { value: name, enumerable: false, configurable: true, writable: true });
  return err;
}

type Pending = { resolve: (v: unknown) => void; reject: (e: unknown) => void };

/**
 * One listener per channel for the thread's life, handing each message to the call running now:
 * adding and removing a MessagePort listener per call cost about 5% of a trivial call's thread time.
 */
const routes = new WeakMap<MessagePort, { to: ((m: ToThread) => void) | undefined }>();

function routeOf(port: MessagePort): { to: ((m: ToThread) => void) | undefined } {
  let route = routes.get(port);
  if (!route) {
    const r: { to: ((m: ToThread) => void) | undefined } = { to: undefined };
    port.on('message', (m: ToThread) => r.to?.(m));
    routes.set(port, (route = r));
  }
  return route;
}

export class CallScope {
  readonly output: string[] = [];
  outputDropped = 0;
  #outputChars = 0;
  #active = true;
  #nextCallId = 1;
  readonly #pending = new Map<number, Pending>();
  readonly #waiting: (() => void)[] = [];
  readonly #timers = new Map<number, NodeJS.Timeout>();
  #nextTimerId = 1;
  #stream: string[] = [];
  #lastFlush = 0;
  #flushTimer: NodeJS.Timeout | undefined;
  readonly #onMessage: (m: ToThread) => void;
  /** Set by the runner: rejects the call's race (timeout, fatal guest error in a timer). */
  fail: (err: Error) => void = () => {};

  constructor(
    /** The thread's channel to its process's main thread (thread-channel.ts): synchronous host calls and memory probes. */
    readonly port: MessagePort,
    /** The thread's link to the coordinator (host-link.ts): output and awaited host calls. */
    readonly link: WorkerHostLink,
    /** This call's id: what the channel carries for another call is dropped. */
    readonly id: number,
    /** This call's secret (RunRequest.callKey), sent with each host call. */
    readonly key: string,
    readonly wake: Int32Array,
    readonly deadline: number,
    readonly streamOutput: boolean,
    readonly maxArgChars: number = Number.MAX_SAFE_INTEGER,
  ) {
    this.#onMessage = (m) => {
      if (m.id === this.id) this.#dispatch(m);
    };
    routeOf(port).to = this.#onMessage;
    link.onReply = this.#onMessage;
  }

  get active(): boolean {
    return this.#active;
  }

  /** Throws when the call is over: endowed functions call this first. */
  assertActive(what: string): void {
    if (!this.#active) throw makeError('Error', `${what} was called after its execute_code call ended`);
  }

  log(args: readonly unknown[], prefix = ''): void {
    if (!this.#active) return;
    const line = prefix + formatArgs(args);
    if (this.output.length >= MAX_OUTPUT_LINES || this.#outputChars + line.length > MAX_OUTPUT_CHARS) {
      this.outputDropped++;
      return;
    }
    this.#outputChars += line.length;
    this.output.push(line);
    if (this.streamOutput) {
      this.#stream.push(line);
      this.#maybeFlush();
    }
  }

  #maybeFlush(): void {
    const now = performance.now();
    if (now - this.#lastFlush >= OUTPUT_FLUSH_MS) {
      this.flushOutput();
    } else if (!this.#flushTimer) {
      this.#flushTimer = setTimeout(() => this.flushOutput(), OUTPUT_FLUSH_MS);
    }
  }

  flushOutput(): void {
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#stream.length === 0) return;
    this.#lastFlush = performance.now();
    const lines = this.#stream;
    this.#stream = [];
    // A link that is down loses the lines: the call is lost with it, and its process answers for it.
    this.link.send({ kind: 'output', id: this.id, key: this.key, lines });
  }

  /** A host call that blocks the guest until the coordinator answers (file, skill, PII calls). */
  callSync(method: string, args: unknown[]): unknown {
    this.assertActive(method);
    this.#checkSize(method, args);
    const callId = this.#nextCallId++;
    this.#post(callId, method, args, false);
    for (;;) {
      const remaining = this.deadline - performance.now();
      if (remaining <= 0) throw makeError(GUEST_ERROR.TimeoutError, `${method} did not answer before the call's time limit`);
      Atomics.wait(this.wake, 0, 0, remaining);
      Atomics.store(this.wake, 0, 0);
      let reply: ToThread | undefined;
      for (let m = receiveMessageOnPort(this.port); m !== undefined; m = receiveMessageOnPort(this.port)) {
        const msg = m.message as ToThread;
        if (msg.id !== this.id) continue;
        if (msg.kind === 'host-reply' && msg.callId === callId) reply = msg;
        else this.#dispatch(msg);
      }
      if (reply) return unwrap(reply);
    }
  }

  /**
   * A host call whose answer the guest awaits (upstream tools, fetch). At most
   * MAX_ASYNC_IN_FLIGHT go to the host at once; the rest wait here, so one guest loop cannot
   * flood the coordinator or an upstream server.
   */
  callAsync(method: string, args: unknown[]): Promise<unknown> {
    this.assertActive(method);
    this.#checkSize(method, args);
    if (this.#waiting.length >= MAX_ASYNC_WAITING) {
      return Promise.reject(makeError('RangeError', `${method}: more than ${MAX_ASYNC_WAITING} calls are waiting; await some before starting more`));
    }
    return new Promise((resolve, reject) => {
      const send = (): void => {
        const callId = this.#nextCallId++;
        this.#pending.set(callId, { resolve, reject });
        if (this.#post(callId, method, args, true)) return;
        this.#pending.delete(callId);
        reject(makeError('Error', `${method}: the sandbox's link to the host is closed`));
      };
      if (this.#pending.size < MAX_ASYNC_IN_FLIGHT) send();
      else this.#waiting.push(send);
    });
  }

  /** Refuses an argument past the size limit here, before it crosses two process boundaries. */
  #checkSize(method: string, args: readonly unknown[]): void {
    let chars = 0;
    for (const a of args) chars += typeof a === 'string' ? a.length : a === null || typeof a !== 'object' ? 8 : approximateSize(a, this.maxArgChars - chars);
    if (chars > this.maxArgChars) {
      throw makeError('RangeError', `${method}: the arguments are over ${this.maxArgChars} characters, the limit for one call to the host`);
    }
  }

  /**
   * Sends a host call: an awaited one over the call's link, a synchronous one through the process's
   * main thread (this thread blocks and cannot read its link). False when the link is down.
   */
  #post(callId: number, method: string, args: unknown[], awaited: boolean): boolean {
    const msg: WorkerMessage = { kind: 'host-call', id: this.id, key: this.key, callId, method, args };
    if (awaited) return this.link.send(msg);
    this.port.postMessage(msg);
    return true;
  }

  #dispatch(msg: ToThread): void {
    if (msg.kind === 'memory-probe') {
      const answer = (bytes: number): void => {
        if (this.#active) this.port.postMessage({ kind: 'memory', id: this.id, bytes } satisfies WorkerMessage);
      };
      const quick = quickBytes();
      if (quick <= msg.limit) answer(quick);
      else void retainedBytes(msg.limit).then(answer);
      return;
    }
    const p = this.#pending.get(msg.callId);
    if (!p) return;
    this.#pending.delete(msg.callId);
    this.#waiting.shift()?.();
    try {
      p.resolve(unwrap(msg));
    } catch (err) {
      p.reject(err);
    }
  }

  setTimer(fn: unknown, ms: unknown, args: unknown[], repeat: boolean): number {
    this.assertActive(repeat ? 'setInterval' : 'setTimeout');
    if (typeof fn !== 'function') throw makeError('TypeError', `${repeat ? 'setInterval' : 'setTimeout'} needs a function, got ${typeof fn}`);
    const delay = Math.max(repeat ? 1 : 0, Math.min(Number(ms) || 0, 2 ** 31 - 1));
    const id = this.#nextTimerId++;
    const run = (): void => {
      if (!this.#active) return;
      if (!repeat) this.#timers.delete(id);
      try {
        // A guest callback: an exception in it is the guest's, reported like Node's uncaught error.
        (fn as (...a: unknown[]) => unknown)(...args);
      } catch (err) {
        this.fail(err instanceof Error ? err : makeError('Error', `Uncaught exception in timer: ${String(err)}`));
      }
    };
    const handle = repeat ? setInterval(run, delay) : setTimeout(run, delay);
    this.#timers.set(id, handle);
    return id;
  }

  clearTimer(id: unknown): void {
    const handle = typeof id === 'number' ? this.#timers.get(id) : undefined;
    if (!handle) return;
    clearTimeout(handle);
    this.#timers.delete(id as number);
  }

  sleep(ms: unknown): Promise<void> {
    this.assertActive('sleep');
    return new Promise((resolve) => {
      const id = this.#nextTimerId++;
      const handle = setTimeout(() => {
        this.#timers.delete(id);
        resolve();
      }, Math.max(0, Math.min(Number(ms) || 0, 2 ** 31 - 1)));
      this.#timers.set(id, handle);
    });
  }

  /** Ends the call: nothing it left behind may act or keep the worker busy. */
  close(): void {
    if (!this.#active) return;
    this.flushOutput();
    this.#active = false;
    for (const handle of this.#timers.values()) clearTimeout(handle);
    this.#timers.clear();
    // Pending host calls are dropped, not rejected: a rejection would run guest handlers after the end.
    this.#pending.clear();
    this.#waiting.length = 0;
    // The channel and the link are the thread's and stay open for its next call.
    const route = routes.get(this.port);
    if (route?.to === this.#onMessage) route.to = undefined;
    if (this.link.onReply === this.#onMessage) this.link.onReply = undefined;
  }
}

/** Size of plain data (already converted by toJsonSafe), counted until it passes `limit`. */
function approximateSize(value: unknown, limit: number): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && total <= limit) {
    const v = stack.pop();
    if (typeof v === 'string') total += v.length + 2;
    else if (Array.isArray(v)) {
      total += 2;
      for (const x of v) stack.push(x);
    } else if (v !== null && typeof v === 'object') {
      // Its braces: counted as 0, `[{}, {}, ...]` passed the check at any length and made a
      // frame past the host link's bound, which closed the thread's link and lost the call.
      total += 2;
      for (const [k, x] of Object.entries(v)) {
        total += k.length + 4;
        stack.push(x);
      }
    } else total += 8;
  }
  return total;
}

function unwrap(reply: ToThread): unknown {
  if (reply.kind !== 'host-reply') return undefined;
  if (reply.ok) return reply.value;
  throw makeError(reply.error.name, reply.error.message);
}
