// The sandbox process's main thread on the direct path (JavaScript with a host link): the control
// plane only. Calls travel between the coordinator and each worker thread over the thread's link
// (workers/js/direct-server.ts); here every thread runs one ServeTask for its whole life, and
// this side reads the task's shared slots to know which call runs where, without a message per
// call. It ends a thread when its call must stop (abort: timeout, cancel, memory, shutdown), which
// makes piscina terminate and replace it, answers that call itself (its thread can no longer), and
// starts a ServeTask for the replacement. The memory watch polls only while calls run: the thread
// that makes the process's count of running calls 1 tells this side once ('busy').

import type { Piscina } from 'piscina';
import { SLOT_CALL_ID, SLOT_MEMORY_MB, THREAD_SLOTS } from './protocol.js';
import type { AbortReason, ErrorInfo, FromSandbox, Outcome, ServeTask } from './protocol.js';
import { READ_CHARS_SLOT } from './fast-read.js';
import type { MemoryWatch, WatchedCall } from './memory-watch.js';

/** What runs on one thread, as the slots say (the pool host's `running` entries on this path). */
export interface DirectCall extends WatchedCall {
  controller: AbortController;
  interrupt: Int32Array;
  wake: Int32Array;
  reason?: AbortReason;
  exited?: Promise<void>;
  timeoutMs?: number;
}

interface Serve {
  controller: AbortController;
  slots: Int32Array;
  wake: Int32Array;
}

/** ServeTask.busy[WATCHING]: 1 while the memory watch polls. */
const WATCHING = 1;

/** How long an abort for a call no thread runs yet is kept, ms (its frame may still be on the way). */
const PENDING_ABORT_MS = 5_000;

export interface DirectHost {
  pool(): Piscina;
  send(msg: FromSandbox): void;
  /** The watch over `running` (pool-host.ts). */
  memory: MemoryWatch<DirectCall>;
  running: Map<number, DirectCall>;
  pollMs: number;
  /** A thread idle this long trims itself (ServeTask.idleTrimMs). */
  idleTrimMs: number;
  /** Threads prepare the next call's realm while idle (ServeTask.prepareRealms). */
  prepareRealms: boolean;
  /** The thread of `call` exited after its abort (or will never: the host kills the process). */
  watchExit(call: DirectCall): Promise<void>;
  failureOf(err: unknown, call: DirectCall): ErrorInfo;
  /** Whether the process still starts threads (false once one would not stop). */
  accepting(): boolean;
}

export class DirectThreads {
  readonly #host: DirectHost;
  readonly #serves = new Set<Serve>();
  /** Running calls in this process, counted by the threads, and whether the watch polls (ServeTask.busy). */
  readonly #busy = new Int32Array(new SharedArrayBuffer(8));
  readonly #pendingAborts = new Map<number, { reason: AbortReason; until: number; timeoutMs?: number }>();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(host: DirectHost) {
    this.#host = host;
  }

  /** One ServeTask per thread: piscina hands each to a different (warm) thread. */
  start(threads: number): void {
    for (let i = 0; i < threads; i++) this.#serve();
  }

  /** A thread said the process went from idle to busy: watch memory while calls run. */
  wake(): void {
    if (this.#timer || this.#closed) return;
    Atomics.store(this.#busy, WATCHING, 1);
    this.#host.memory.lastRss = process.memoryUsage.rss();
    this.#timer = setInterval(() => this.#poll(), this.#host.pollMs);
    this.#timer.unref();
  }

  /** The running call `id`, if a thread runs it (the slots are read afresh). */
  find(id: number): DirectCall | undefined {
    this.#sync();
    return this.#host.running.get(id);
  }

  /** Stops call `id`: its thread is ended; an abort for a call not started yet waits for it. */
  abort(id: number, reason: AbortReason, timeoutMs?: number): void {
    const call = this.find(id);
    if (!call) {
      this.#pendingAborts.set(id, { reason, until: performance.now() + PENDING_ABORT_MS, timeoutMs });
      this.wake();
      return;
    }
    if (timeoutMs !== undefined) call.timeoutMs = timeoutMs;
    this.#stop(id, call, reason);
  }

  /** Ends every thread (shutdown): their calls are answered as cancelled. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#sync();
    for (const [id, call] of this.#host.running) this.#stop(id, call, 'shutdown');
  }

  /** Whether a call runs in this process now. */
  get busy(): boolean {
    return Atomics.load(this.#busy, 0) > 0;
  }

  #serve(): void {
    if (this.#closed || !this.#host.accepting()) return;
    const serve: Serve = {
      controller: new AbortController(),
      slots: new Int32Array(new SharedArrayBuffer(4 * THREAD_SLOTS)),
      wake: new Int32Array(new SharedArrayBuffer(4)),
    };
    this.#serves.add(serve);
    const task: ServeTask = { serve: true, slots: serve.slots, busy: this.#busy, wake: serve.wake, idleTrimMs: this.#host.idleTrimMs, prepareRealms: this.#host.prepareRealms };
    this.#host
      .pool()
      .run(task, { signal: serve.controller.signal })
      .then(
        () => this.#ended(serve, new Error('the thread stopped serving')),
        (err: unknown) => this.#ended(serve, err),
      );
  }

  /** A thread is gone (ended here, or crashed): its call is answered, and a new thread serves. */
  #ended(serve: Serve, err: unknown): void {
    this.#serves.delete(serve);
    const id = Atomics.load(serve.slots, SLOT_CALL_ID);
    let call: DirectCall | undefined;
    for (const [cid, c] of this.#host.running) {
      if (c.controller === serve.controller) {
        call = c;
        this.#host.running.delete(cid);
        this.#host.send({ type: 'done', id: cid, outcome: stopped(this.#host.failureOf(err, c), serve.slots), workerReplaced: true });
      }
    }
    if (!call && id !== 0) {
      // Crashed (its own out-of-memory) before the watch saw the call: answer it all the same.
      const c: DirectCall = { controller: serve.controller, interrupt: serve.slots, wake: serve.wake, rssAtStart: 0, memoryMb: Atomics.load(serve.slots, SLOT_MEMORY_MB) };
      this.#host.send({ type: 'done', id, outcome: stopped(this.#host.failureOf(err, c), serve.slots), workerReplaced: true });
    }
    if (Atomics.load(serve.slots, SLOT_CALL_ID) !== 0) {
      // Its count of running calls is the thread's to give back, and it never will.
      Atomics.store(serve.slots, SLOT_CALL_ID, 0);
      Atomics.sub(this.#busy, 0, 1);
    }
    void (call?.exited ?? Promise.resolve()).then(() => this.#serve());
  }

  #stop(id: number, call: DirectCall, reason: AbortReason): void {
    if (call.reason) return;
    // The thread may have moved on to another call since the slots were read: never end that one.
    if (Atomics.load(call.interrupt, SLOT_CALL_ID) !== id) return;
    call.reason = reason;
    call.exited = this.#host.watchExit(call);
    call.controller.abort();
  }

  /** Brings `running` in line with the slots: calls that started are added, those that ended removed. */
  #sync(): void {
    const running = this.#host.running;
    const live = new Set<number>();
    for (const serve of this.#serves) {
      const id = Atomics.load(serve.slots, SLOT_CALL_ID);
      if (id === 0) continue;
      live.add(id);
      if (!running.has(id)) {
        running.set(id, {
          controller: serve.controller,
          interrupt: serve.slots,
          wake: serve.wake,
          rssAtStart: this.#host.memory.lastRss,
          memoryMb: Atomics.load(serve.slots, SLOT_MEMORY_MB),
        });
      }
    }
    for (const [id, call] of running) if (!live.has(id) && !call.reason) running.delete(id);
    if (this.#pendingAborts.size === 0) return;
    const now = performance.now();
    for (const [id, pending] of this.#pendingAborts) {
      const call = running.get(id);
      if (call) {
        this.#pendingAborts.delete(id);
        if (pending.timeoutMs !== undefined) call.timeoutMs = pending.timeoutMs;
        this.#stop(id, call, pending.reason);
      } else if (now > pending.until) {
        this.#pendingAborts.delete(id);
      }
    }
  }

  #poll(): void {
    this.#sync();
    this.#host.memory.check();
    if (!this.busy && this.#pendingAborts.size === 0 && this.#host.running.size === 0) {
      // The flag goes down before the count is read again: a thread that starts a call now either
      // sees it down and says 'busy', or is seen here (sequentially consistent atomics).
      Atomics.store(this.#busy, WATCHING, 0);
      if (this.busy) {
        Atomics.store(this.#busy, WATCHING, 1);
        return;
      }
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }
}

/** The answer for a call whose thread was ended: its error, and what it read in the worker (still counted). */
function stopped(error: ErrorInfo, slots: Int32Array): Outcome {
  const readChars = Atomics.load(slots, READ_CHARS_SLOT);
  return readChars > 0 ? { ok: false, error, output: [], readChars } : { ok: false, error, output: [] };
}
