// A sandbox process: hosts one piscina pool of SES worker threads for the coordinator. It is a
// separate process because some allocations make V8 abort the whole process (fatal OOM); when
// that happens only this process and its calls die, and the coordinator starts another.
// A Python process serves one agent at a time with one interpreter (one thread); on 'recycle',
// and whenever its interpreter crashed, was damaged or grew past the next call's memory_mb, the
// interpreter is replaced by a pristine warm standby (workers/kit/thread-pool.ts).
// Started by src/executor/sandbox-process.ts with `--enable-experimental-regexp-engine-on-excessive-backtracks`
// on the command line (Node refuses that flag in worker execArgv), so catastrophic regular
// expressions in guest code fall back to a linear engine.

import { receiveMessageOnPort } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { batchingSender, unbatch } from './ipc-batch.js';
import { MemoryWatch } from './memory-watch.js';
import type { WatchedCall } from './memory-watch.js';
import type { Batch } from './ipc-batch.js';
import { READ_CHARS_SLOT } from './fast-read.js';
import { runWarmTask, STATE_GROWN_PAGES, STATE_RETIRE, ThreadPool, WASM_PAGE_BYTES, WASM_SHARE_OF_LIMIT } from './thread-pool.js';
import { notStarted, stoppedCall } from './call-errors.js';
import { DirectThreads } from './direct-threads.js';
import { ExitWatch, SELF_KILL_MS } from './exit-watch.js';
import { answeredEarly, HOST_LINK_ENV } from './protocol.js';
import type { AbortReason, ErrorInfo, FromSandbox, HostLinkInfo, Outcome, Preprocess, Preprocessed, RunRequest, SandboxProcessOptions, ToSandbox, ToThread, WorkerMessage, WorkerTask } from './protocol.js';

const MB = 1024 * 1024;
const started = performance.now();
const options = JSON.parse(process.argv[2] ?? '{}') as SandboxProcessOptions;
/** The runtime's preprocessing (its row names the module), loaded once before the first call. */
const preprocessor: Preprocess | undefined = options.preprocessor ? ((await import(options.preprocessor)) as { default: Preprocess }).default : undefined;
// The host link's secret (protocol.ts HOST_LINK_ENV), taken out of the environment before any
// worker thread starts with a copy of it.
const linkJson = process.env[HOST_LINK_ENV];
delete process.env[HOST_LINK_ENV];
if (linkJson) options.hostLink = JSON.parse(linkJson) as HostLinkInfo;

/** Each worker thread's channel (workers/kit/thread-channel.ts), by threadId. */
const channels = new Map<number, MessagePort>();

const threads = new ThreadPool(options, {
  onError(err: unknown) {
    sendNow({ type: 'fatal', message: `sandbox pool error: ${(err as Error)?.message ?? String(err)}` });
    process.exit(1);
  },
  onChannel(threadId, port) {
    channels.set(threadId, port);
    port.on('message', relay);
    port.once('close', () => channels.delete(threadId));
  },
});

/** Forwards what a thread says about a call that is still running here; the rest is stale. */
function relay(m: WorkerMessage): void {
  if (m.kind === 'busy') {
    direct?.wake();
    return;
  }
  const entry = running.get(m.id) ?? direct?.find(m.id);
  if (!entry) return;
  if (m.kind === 'answer') (entry as Running).answer?.(m.outcome);
  else if (m.kind === 'host-call') send({ type: 'host-call', id: m.id, key: m.key, callId: m.callId, method: m.method, args: m.args });
  else if (m.kind === 'output') send({ type: 'output', id: m.id, lines: m.lines });
  else memory.answer(m.id, entry, m.bytes);
}

/** The channel of the thread running `entry`; undefined until the call has started on one. */
function channelOf(entry: Running): MessagePort | undefined {
  const threadId = Atomics.load(entry.interrupt, 1);
  return threadId === 0 ? undefined : channels.get(threadId);
}

/** Python: how long an interrupted call may take to unwind before its worker is terminated, ms. */
const INTERRUPT_GRACE_MS = 1_000;
/** What a call gets if its worker said it answered early and no answer came (not expected to happen). */
const LOST_ANSWER: Outcome = { ok: false, error: { type: 'SandboxCrashError', message: 'the sandbox lost the answer of this call' }, output: [] };
/** Python: how long the clean-up after an answered call may take before the interpreter is replaced, ms. */
const CLEAN_UP_LIMIT_MS = 5_000;
interface Running extends WatchedCall {
  controller: AbortController;
  interrupt: Int32Array;
  reason?: AbortReason;
  wake: Int32Array;
  /** JavaScript, once aborted: settles when the aborted worker thread has really exited. */
  exited?: Promise<void>;
  /** Python: the outcome came before the task settled (WorkerMessage 'answer'). */
  answer?: (outcome: Outcome) => void;
}

const running = new Map<number, Running>();
const memory = new MemoryWatch(
  running,
  (id, entry, limit) => {
    const port = channelOf(entry);
    port?.postMessage({ kind: 'memory-probe', limit, id } satisfies ToThread);
    return port !== undefined;
  },
  (id) => abort(id, 'memory'),
  options.memoryPollMs,
);

const send = batchingSender<FromSandbox>((msg) => {
  if (process.connected) process.send?.(msg);
});
const exits = new ExitWatch(() => threads.current.pool.threads, send);
const watchExit = (entry: { interrupt: Int32Array; reason?: AbortReason }): Promise<void> => exits.watch(entry);

/** For a message sent just before the process exits: written now, after what was queued. */
function sendNow(msg: FromSandbox): void {
  send(msg);
  send.flush();
}

function prepare(req: RunRequest): Preprocessed {
  return preprocessor ? preprocessor(req.code, req.language) : { ok: true, source: req.code };
}

/**
 * Calls the coordinator has sent ahead (one per thread), waiting for a thread here rather than
 * behind an IPC round trip; each starts the moment a thread frees.
 */
const waiting: { id: number; req: RunRequest }[] = [];
let busyThreads = 0;

function enqueue(id: number, req: RunRequest): void {
  waiting.push({ id, req });
  pump();
}

function pump(): void {
  for (const next of takeStartable()) launch(next.id, next.req, next.pre);
}

/**
 * Python: 'recycle's that arrived while a call ran or cleaned up after its answer, each answered
 * once the interpreter is replaced (the coordinator may send several before the first answer).
 */
let recyclesOwed = 0;
/** Python: crashed calls whose 'worker-ready' is sent when the replacement is in place. */
let readyOwed = 0;

/**
 * Python: whether the idle interpreter must be replaced before the next call: another agent
 * comes (recycle), it was damaged or died (retire), or its WebAssembly memory, which never
 * shrinks, already holds more than the next call's memory_mb would let it grow to.
 */
function wantsFresh(req: RunRequest | undefined): boolean {
  if (options.dispatch !== 'bound') return false;
  const state = threads.current.state;
  if (recyclesOwed > 0 || readyOwed > 0 || Atomics.load(state, STATE_RETIRE) === 1) return true;
  return req !== undefined && Atomics.load(state, STATE_GROWN_PAGES) * WASM_PAGE_BYTES > req.memoryMb * MB * WASM_SHARE_OF_LIMIT;
}

/** Starts replacing the interpreter when it is idle and must be; true while one is replaced. */
function maybeReplace(req: RunRequest | undefined): boolean {
  if (threads.replacing) return true;
  if (busyThreads > 0 || !wantsFresh(req)) return false;
  const answers = recyclesOwed;
  const owed = readyOwed;
  recyclesOwed = 0;
  readyOwed = 0;
  threads.replace().then(
    (ms) => {
      for (let i = 0; i < answers; i++) send({ type: 'recycled', ms });
      for (let i = 0; i < owed; i++) send({ type: 'worker-ready' });
      pump();
    },
    (err: unknown) => {
      sendNow({ type: 'fatal', message: `a fresh Python interpreter failed to start: ${(err as Error)?.message ?? String(err)}` });
      process.exit(1);
    },
  );
  return true;
}

/** 'recycle': the coordinator hands this (idle) process to another agent once this answers. */
function recycle(): void {
  if (options.dispatch !== 'bound') {
    // A JavaScript call runs in a fresh Compartment every time: nothing to replace.
    send({ type: 'recycled', ms: 0 });
  } else if (threads.replacing) {
    // The replacement under way was started after the last call ended: it is pristine too.
    void threads.replace().then((ms) => send({ type: 'recycled', ms }), () => {});
  } else {
    recyclesOwed++;
    maybeReplace(undefined);
  }
}

/**
 * Waiting calls that can start now (threads are reserved for them). Calls whose code does not
 * compile are answered here and take no thread.
 */
function takeStartable(): { id: number; req: RunRequest; pre: Extract<Preprocessed, { ok: true }> }[] {
  const out: { id: number; req: RunRequest; pre: Extract<Preprocessed, { ok: true }> }[] = [];
  while (!exits.unstoppable && busyThreads < options.threads && waiting.length > 0) {
    if (maybeReplace(waiting[0]?.req)) break;
    const next = waiting.shift() as { id: number; req: RunRequest };
    const pre = prepare(next.req);
    if (!pre.ok) {
      send({ type: 'done', id: next.id, outcome: { ok: false, error: pre.error, output: [] }, workerReplaced: false });
      continue;
    }
    busyThreads++;
    out.push({ ...next, pre });
  }
  return out;
}

/**
 * The direct path (JavaScript with a host link): calls go between the coordinator and the threads
 * over their links, and this thread keeps only the control plane (direct-threads.ts).
 */
const direct = options.direct && options.hostLink
  ? new DirectThreads({
      pool: () => threads.current.pool,
      send: (msg) => send(msg),
      memory,
      running,
      pollMs: options.memoryPollMs,
      idleTrimMs: options.idleTrimMs ?? 60_000,
      prepareRealms: options.prepareRealms !== false,
      watchExit,
      failureOf: (err, call) => failureOf(err, call, { timeoutMs: call.timeoutMs ?? 0, memoryMb: call.memoryMb }),
      accepting: () => !exits.unstoppable,
    })
  : undefined;

// Idle options.idleTrimMs (default a minute), JavaScript threads give back what they cached for calls.
// On the direct path each thread trims itself when idle that long (direct-server.ts).
if (options.dispatch === 'hardened' && !direct) {
  threads.trimWhenIdle(options.idleTrimMs ?? 60_000, () => running.size > 0 || waiting.length > 0);
}

function launch(id: number, req: RunRequest, pre: Extract<Preprocessed, { ok: true }>): void {
  threads.noteCall();
  const wake = new Int32Array(new SharedArrayBuffer(4));
  const controller = new AbortController();
  // [0]: Pyodide's interrupt buffer; [1]: the JavaScript worker's threadId, so an abort can
  // watch that thread exit; [2]: characters the worker read itself (READ_CHARS_SLOT).
  const interrupt = new Int32Array(new SharedArrayBuffer(12));
  const entry: Running = { controller, interrupt, wake, rssAtStart: memory.startingRss(), memoryMb: req.memoryMb };
  running.set(id, entry);
  // What the worker posted last (its final output flush) may still be queued when the task
  // settles: forward it before 'done', or the coordinator drops it.
  const drain = (): void => {
    const port = channelOf(entry);
    if (!port) return;
    for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) relay(m.message as WorkerMessage);
  };
  let answered = false;
  let cleanUpLimit: NodeJS.Timeout | undefined;
  /** Why an interrupted Python call, which ends normally with KeyboardInterrupt, was stopped. */
  const told = (outcome: Outcome): Outcome => (entry.reason && !outcome.ok ? { ...outcome, error: failureOf(undefined, entry, req, false) } : outcome);
  /** The call's 'done': once, with the calls that started as it ended (`started`). */
  const answer = (result: Outcome, workerReplaced: boolean, started: number[] = []): void => {
    if (answered) return;
    answered = true;
    drain();
    const readChars = Atomics.load(interrupt, READ_CHARS_SLOT);
    const outcome: Outcome = readChars > 0 ? { ...result, readChars } : result;
    send({ type: 'done', id, outcome, workerReplaced, ...(started.length > 0 ? { started } : {}) });
  };
  // Python answers before its clean-up (WorkerMessage 'answer'): the thread stays this call's until
  // the task settles, and a clean-up that does not end is stopped like a call (the interpreter goes).
  entry.answer = (outcome) => {
    answer(told(outcome), false);
    cleanUpLimit = setTimeout(() => running.get(id) === entry && entry.controller.abort(), CLEAN_UP_LIMIT_MS).unref();
  };
  /** The thread is free: starts what waits, and answers the call if it has not answered yet. */
  const finish = (result: Outcome, workerReplaced: boolean): void => {
    if (!answered) drain();
    clearTimeout(cleanUpLimit);
    running.delete(id);
    busyThreads--;
    maybeReplace(undefined);
    const next = takeStartable();
    const started = next.map((n) => n.id);
    if (answered) {
      if (started.length > 0) send({ type: 'started', ids: started });
    } else {
      answer(result, workerReplaced, started);
    }
    for (const n of next) launch(n.id, n.req, n.pre);
  };
  const { code: _code, ...rest } = req;
  const task: WorkerTask = { ...rest, id, source: pre.source, wake, interrupt };
  threads.current.pool.run(task, { signal: controller.signal }).then(
    (outcome: Outcome) => finish(answeredEarly(outcome) ? LOST_ANSWER : told(outcome), false),
    (err: unknown) => {
      // Python: the standby interpreter takes over at once (a cold Pyodide start takes seconds).
      if (options.dispatch === 'bound') readyOwed++;
      finish({ ok: false, error: failureOf(err, entry, req), output: [] }, true);
      // The slot is free only once the old thread is gone: a thread stuck in native code never
      // exits, and the process is killed instead (see watchExit).
      if (options.dispatch !== 'bound') void (entry.exited ?? Promise.resolve()).then(rewarm);
    },
  );
}

function failureOf(err: unknown, entry: { reason?: AbortReason }, req: Pick<RunRequest, 'timeoutMs' | 'memoryMb'>, replaced = true): ErrorInfo {
  return stoppedCall(err, entry.reason, { timeoutMs: req.timeoutMs, memoryMb: req.memoryMb, heapLimitMb: options.maxMemoryMb }, replaced);
}

/** After piscina replaces a terminated worker, wait until the new one is warm, then say so. */
function rewarm(): void {
  runWarmTask(threads.current.pool).then(
    () => send({ type: 'worker-ready' }),
    () => send({ type: 'worker-ready' }),
  );
}

function abort(id: number, reason: AbortReason): void {
  const entry = running.get(id);
  if (!entry || entry.reason) return;
  entry.reason = reason;
  if (options.dispatch === 'bound' && reason !== 'memory' && reason !== 'shutdown') {
    // Pyodide checks this buffer between bytecodes: the call unwinds and the warm worker stays.
    Atomics.store(entry.interrupt, 0, 2);
    setTimeout(() => {
      if (running.get(id) === entry) entry.controller.abort();
    }, INTERRUPT_GRACE_MS).unref();
    return;
  }
  if (options.dispatch === 'hardened') entry.exited = watchExit(entry);
  entry.controller.abort();
}

process.on('message', (batch: ToSandbox | Batch<ToSandbox>) => unbatch(batch, onMessage));

function onMessage(msg: ToSandbox): void {
  switch (msg.type) {
    case 'run':
      enqueue(msg.id, msg.request);
      break;
    case 'abort': {
      if (direct) {
        direct.abort(msg.id, msg.reason, msg.timeoutMs);
        break;
      }
      const i = waiting.findIndex((w) => w.id === msg.id);
      if (i >= 0) {
        // Not started yet: nothing to stop, just answer.
        const [w] = waiting.splice(i, 1);
        const error = notStarted(msg.reason, (w as { req: RunRequest }).req.timeoutMs);
        send({ type: 'done', id: msg.id, outcome: { ok: false, error, output: [] }, workerReplaced: false });
      } else {
        abort(msg.id, msg.reason);
      }
      break;
    }
    case 'host-reply': {
      const entry = running.get(msg.id) ?? direct?.find(msg.id);
      if (!entry) break;
      channelOf(entry)?.postMessage({ ...msg.reply, id: msg.id } satisfies ToThread);
      Atomics.store(entry.wake, 0, 1);
      Atomics.notify(entry.wake, 0);
      break;
    }
    case 'recycle':
      recycle();
      break;
    case 'shutdown':
      for (const w of waiting.splice(0)) {
        send({ type: 'done', id: w.id, outcome: { ok: false, error: notStarted('shutdown'), output: [] }, workerReplaced: false });
      }
      if (direct) direct.close();
      else for (const id of running.keys()) abort(id, 'shutdown');
      void threads.close().finally(() => {
        send.flush();
        process.exit(0);
      });
      break;
  }
}

// The coordinator is gone: nobody can use this process any more. process.exit() waits for every
// worker thread, which a thread stuck in native code never lets happen: kill as a backstop.
process.on('disconnect', () => {
  setTimeout(() => process.kill(process.pid, 'SIGKILL'), SELF_KILL_MS).unref();
  process.exit(0);
});

// Warm every thread (import ses, lockdown) before saying ready, so no call pays a cold start.
threads.start().then(
  () => {
    direct?.start(options.threads);
    send({ type: 'ready', threads: options.threads, startupMs: Math.round(performance.now() - started) });
  },
  (err: unknown) => {
    sendNow({ type: 'fatal', message: `sandbox workers failed to start: ${(err as Error)?.message ?? String(err)}` });
    process.exit(1);
  },
);
