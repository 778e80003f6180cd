// The sandbox process's main thread over its worker threads: the control plane only. Calls travel
// between the coordinator and each thread over the thread's link (serve-link.ts); here every thread
// runs one ServeTask for its whole life, and this side reads the task's shared slots to know which
// call runs where, without a message per call. It stops a call that must stop (timeout, cancel,
// memory, shutdown: interrupted if its runtime can, else its thread is ended, which makes piscina
// terminate it), answers a call whose thread was ended (its thread can no longer), ends a thread
// whose work after its answer outlasts the call's time, and has the runtime's strategy put a
// replacement in place. The memory watch polls only while calls run: the thread that makes the
// process's count of running calls 1 tells this side once ('busy').

import type { Piscina } from 'piscina';
import { SLOT_CALL_ID, SLOT_CLEAN_MS, SLOT_MEMORY_MB, SLOT_STOP_REASON, SLOT_THREAD_ID, STOP_REASONS, THREAD_SLOTS } from './protocol.js';
import type { AbortReason, ErrorInfo, FromSandbox, Outcome, ServeTask } from './protocol.js';
import { READ_CHARS_SLOT } from './fast-read.js';
import type { MemoryWatch, WatchedCall } from './memory-watch.js';
import type { RuntimeStrategy } from './runtime-strategy.js';
import type { ThreadPool } from './thread-pool.js';

/** What runs on one thread, as the slots say (the memory watch's calls). */
export interface ServedCall extends WatchedCall {
  serve: Serve;
  /** The thread's slots (protocol.ts SLOT_*). */
  interrupt: Int32Array;
  wake: Int32Array;
  reason?: AbortReason;
  timeoutMs?: number;
}

interface Serve {
  controller: AbortController;
  slots: Int32Array;
  wake: Int32Array;
  /** The generation this thread belongs to: a replaced one's threads are not replaced again. */
  pool: Piscina;
  /** Settles when the ended thread has really exited. */
  exited?: Promise<void>;
  /** performance.now() past which the thread's work after its answer is cut short. */
  cleanUntil?: number;
}

/** ServeTask.busy[WATCHING]: 1 while the memory watch polls. */
const WATCHING = 1;
/** How long an abort for a call no thread runs yet is kept, ms (its frame may still be on the way). */
const PENDING_ABORT_MS = 5_000;
/** How long an interrupted call may take to unwind before its thread is ended, ms. */
const INTERRUPT_GRACE_MS = 1_000;

export interface SupervisorHost {
  threads: ThreadPool;
  /** Threads per generation. */
  count: number;
  strategy: RuntimeStrategy;
  send(msg: FromSandbox): void;
  /** The watch over `running`. */
  memory: MemoryWatch<ServedCall>;
  running: Map<number, ServedCall>;
  pollMs: number;
  /** A thread idle this long trims itself (ServeTask.idleTrimMs). */
  idleTrimMs: number;
  /** Settles when the thread of `slots` has exited after it was ended (or never: the process is then killed). */
  watchExit(entry: { interrupt: Int32Array; reason?: AbortReason }): Promise<void>;
  failureOf(err: unknown, call: ServedCall): ErrorInfo;
  /** Whether the process still starts threads (false once one would not stop). */
  accepting(): boolean;
  /** A replacement could not be made: the process cannot serve any more. */
  fatal(message: string): void;
}

export class ThreadSupervisor {
  readonly #host: SupervisorHost;
  readonly #serves = new Set<Serve>();
  /** Running calls in this process, counted by the threads, and whether the watch polls (ServeTask.busy). */
  readonly #busy = new Int32Array(new SharedArrayBuffer(8));
  readonly #pendingAborts = new Map<number, { reason: AbortReason; until: number; timeoutMs?: number }>();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(host: SupervisorHost) {
    this.#host = host;
  }

  /** Gives every thread of the current generation that has none its ServeTask. */
  fill(): void {
    const pool = this.#host.threads.current.pool;
    let serving = 0;
    for (const s of this.#serves) if (s.pool === pool) serving++;
    for (; serving < this.#host.count; serving++) this.#serve(pool);
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
  find(id: number): ServedCall | undefined {
    this.#sync();
    return this.#host.running.get(id);
  }

  /** Stops call `id`; an abort for a call no thread has started yet waits for it. */
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

  /** Ends the thread whose id is `threadId` (it asked to be retired): the strategy replaces it. */
  retire(threadId: number): void {
    for (const serve of this.#serves) if (Atomics.load(serve.slots, SLOT_THREAD_ID) === threadId) this.#end(serve);
  }

  /** Ends every thread (shutdown): their calls are answered as cancelled. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#sync();
    for (const call of this.#host.running.values()) call.reason ??= 'shutdown';
    for (const serve of this.#serves) serve.controller.abort();
  }

  /** Whether a call runs in this process now. */
  get busy(): boolean {
    return Atomics.load(this.#busy, 0) > 0;
  }

  #serve(pool: Piscina): void {
    if (this.#closed || !this.#host.accepting()) return;
    const serve: Serve = {
      controller: new AbortController(),
      slots: new Int32Array(new SharedArrayBuffer(4 * THREAD_SLOTS)),
      wake: new Int32Array(new SharedArrayBuffer(4)),
      pool,
    };
    this.#serves.add(serve);
    const task: ServeTask = { serve: true, slots: serve.slots, busy: this.#busy, wake: serve.wake, idleTrimMs: this.#host.idleTrimMs };
    pool.run(task, { signal: serve.controller.signal }).then(
      () => this.#ended(serve, new Error('the thread stopped serving')),
      (err: unknown) => this.#ended(serve, err),
    );
  }

  /** A thread is gone (ended here, or crashed): its call is answered unless it already was, and a replacement serves. */
  #ended(serve: Serve, err: unknown): void {
    this.#serves.delete(serve);
    // Work after an answer (SLOT_CLEAN_MS): the call has its answer already.
    const answered = Atomics.load(serve.slots, SLOT_CLEAN_MS) > 0;
    const id = Atomics.load(serve.slots, SLOT_CALL_ID);
    let call: ServedCall | undefined;
    for (const [cid, c] of this.#host.running) {
      if (c.serve !== serve) continue;
      call = c;
      this.#host.running.delete(cid);
      if (!answered) this.#host.send({ type: 'done', id: cid, outcome: stopped(this.#host.failureOf(err, c), serve.slots), workerReplaced: true });
    }
    if (!call && id !== 0 && !answered) {
      // Crashed (its own out-of-memory) before the watch saw the call: answer it all the same.
      const c: ServedCall = { serve, interrupt: serve.slots, wake: serve.wake, rssAtStart: 0, memoryMb: Atomics.load(serve.slots, SLOT_MEMORY_MB) };
      this.#host.send({ type: 'done', id, outcome: stopped(this.#host.failureOf(err, c), serve.slots), workerReplaced: true });
    }
    if (id !== 0) {
      // Its count of running calls is the thread's to give back, and it never will.
      Atomics.store(serve.slots, SLOT_CALL_ID, 0);
      Atomics.sub(this.#busy, 0, 1);
    }
    // A thread of a replaced generation: the generation that replaced it serves already.
    if (this.#closed || serve.pool !== this.#host.threads.current.pool) return;
    this.#host.strategy.replace(this.#host.threads, serve.exited ?? Promise.resolve()).then(
      () => this.fill(),
      (e: unknown) => this.#host.fatal(`a replacement sandbox thread failed to start: ${(e as Error)?.message ?? String(e)}`),
    );
  }

  #stop(id: number, call: ServedCall, reason: AbortReason): void {
    if (call.reason) return;
    // The thread may have moved on to another call since the slots were read: never end that one.
    const slots = call.interrupt;
    if (Atomics.load(slots, SLOT_CALL_ID) !== id) return;
    call.reason = reason;
    Atomics.store(slots, SLOT_STOP_REASON, STOP_REASONS.indexOf(reason) + 1);
    // A call that may unwind does (the warm interpreter stays); its thread ends if it does not in time.
    if (reason !== 'memory' && Atomics.load(slots, SLOT_CLEAN_MS) === 0 && this.#host.strategy.interrupt(slots)) {
      setTimeout(() => {
        if (Atomics.load(slots, SLOT_CALL_ID) === id) this.#end(call.serve, reason);
      }, INTERRUPT_GRACE_MS).unref();
      return;
    }
    this.#end(call.serve, reason);
  }

  /** Ends a thread: piscina terminates it; #ended answers its call and replaces it. */
  #end(serve: Serve, reason?: AbortReason): void {
    if (serve.exited) return;
    serve.exited = this.#host.strategy.watchExit ? this.#host.watchExit({ interrupt: serve.slots, reason }) : Promise.resolve();
    serve.controller.abort();
  }

  /** Brings `running` in line with the slots: calls that started are added, those that ended removed. */
  #sync(): void {
    const running = this.#host.running;
    const live = new Set<number>();
    const now = performance.now();
    for (const serve of this.#serves) {
      const id = Atomics.load(serve.slots, SLOT_CALL_ID);
      if (id === 0) continue;
      live.add(id);
      if (!running.has(id)) {
        running.set(id, { serve, interrupt: serve.slots, wake: serve.wake, rssAtStart: this.#host.memory.lastRss, memoryMb: Atomics.load(serve.slots, SLOT_MEMORY_MB) });
      }
      // Work after the answer (Python's clean-up) counts against the call's time: past it, the thread goes.
      const cleanMs = Atomics.load(serve.slots, SLOT_CLEAN_MS);
      if (cleanMs === 0) serve.cleanUntil = undefined;
      else if ((serve.cleanUntil ??= now + cleanMs) < now) this.#end(serve, 'timeout');
    }
    for (const id of running.keys()) if (!live.has(id)) running.delete(id);
    if (this.#pendingAborts.size === 0) return;
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
