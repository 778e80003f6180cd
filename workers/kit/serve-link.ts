// A worker thread's whole life after start-up, for every runtime: it serves the calls the
// coordinator writes to its host link, one at a time, and writes each answer back there. piscina
// keeps the thread's life: it started the thread with its resourceLimits and gave it one ServeTask
// that never settles, and the process's main thread ends the thread (aborts that task) when its call
// must stop. The main thread learns what runs here from the task's shared slots (protocol.ts
// SLOT_*), with no message per call. What a runtime does differently is its CallRunner.

import { threadId } from 'node:worker_threads';
import { SLOT_CALL_ID, SLOT_CLEAN_MS, SLOT_INTERRUPT, SLOT_MEMORY_MB, SLOT_STOP_REASON, SLOT_THREAD_ID } from './protocol.js';
import type { LinkRun, LinkServing, Outcome, Preprocessed, SandboxLanguage, ServeTask, WorkerMessage, WorkerTask } from './protocol.js';
import { READ_CHARS_SLOT } from './fast-read.js';
import type { WorkerHostLink } from './host-link.js';
import { threadPort } from './thread-channel.js';

/** Work a call still owns after its answer left may take at most this long, ms, and never less than CLEAN_MIN_MS. */
const CLEAN_MAX_MS = 5_000;
const CLEAN_MIN_MS = 250;

/** What a runtime's thread does with a call. */
export interface CallRunner {
  /** Turns a call's code into what `run` evaluates, or the error that stops it; absent: the code as given. */
  prepare?(code: string, language: SandboxLanguage): Preprocessed;
  /** Runs one call to its outcome (never throws: the sandbox boundary returns errors as outcomes). */
  run(task: WorkerTask): Promise<Outcome>;
  /**
   * Work the call still owns once its answer left (Python's clean-up, within the call's limits): the
   * thread is not free until it ends, and then says what the coordinator must know ('serving'), or
   * 'retire' when it must not take another call. The main thread ends it past its time (SLOT_CLEAN_MS).
   */
  after?(task: WorkerTask): LinkServing | 'retire';
  /** The thread is idle again (JavaScript prepares the next call's realm then). */
  idle?(): void;
  /** Idle ServeTask.idleTrimMs: drop what calls left cached. */
  trim?(): void;
}

/** Serves calls from `link` until the thread is ended; never settles, rejects when the link does not open. */
export async function serveLink(task: ServeTask, link: WorkerHostLink | undefined, runner: CallRunner): Promise<Outcome> {
  if (!link) throw new Error('this sandbox thread has no host link (its process was started without one): it cannot take calls');
  await link.ready;
  const slots = task.slots;
  Atomics.store(slots, SLOT_THREAD_ID, threadId);
  const retire = (): void => threadPort.postMessage({ kind: 'retire' } satisfies WorkerMessage);
  // A thread whose link is gone can take no call and give no answer: it asks to be replaced.
  link.onClosed = retire;
  let busy = false;
  let idleTimer: NodeJS.Timeout | undefined;
  const answer = (run: LinkRun, outcome: Outcome, more?: true): void => {
    link.send({ kind: 'done', id: run.id, key: run.request.callKey ?? '', outcome, ...(more ? { busy: more } : {}) });
  };
  const idle = (): void => {
    busy = false;
    runner.idle?.();
    clearTimeout(idleTimer);
    if (!runner.trim) return;
    idleTimer = setTimeout(() => {
      if (!busy) runner.trim?.();
    }, task.idleTrimMs);
    idleTimer.unref();
  };
  const serve = async (run: LinkRun): Promise<void> => {
    const deadline = performance.now() + run.request.timeoutMs;
    const pre = runner.prepare ? runner.prepare(run.request.code, run.request.language) : ({ ok: true, source: run.request.code } as const);
    if (!pre.ok) {
      answer(run, { ok: false, error: pre.error, output: [] });
      idle();
      return;
    }
    const { code: _code, ...rest } = run.request;
    const work: WorkerTask = { ...rest, id: run.id, source: pre.source, wake: task.wake, interrupt: slots };
    // Before any guest code: the main thread can now find this call (abort, memory watch).
    Atomics.store(slots, READ_CHARS_SLOT, 0);
    Atomics.store(slots, SLOT_INTERRUPT, 0);
    Atomics.store(slots, SLOT_STOP_REASON, 0);
    Atomics.store(slots, SLOT_MEMORY_MB, run.request.memoryMb);
    Atomics.store(slots, SLOT_CALL_ID, run.id);
    // The main thread's memory watch polls while calls run; it is told only when it is not polling.
    Atomics.add(task.busy, 0, 1);
    if (Atomics.load(task.busy, 1) === 0) threadPort.postMessage({ kind: 'busy' } satisfies WorkerMessage);
    let outcome = await runner.run(work);
    const readChars = Atomics.load(slots, READ_CHARS_SLOT);
    if (readChars > 0) outcome = { ...outcome, readChars };
    if (!runner.after) {
      // Cleared before the answer leaves: an abort for this call that comes later finds nothing to stop.
      release();
      answer(run, outcome);
      idle();
      return;
    }
    // The answer goes out first and the thread stays this call's, within the call's own time.
    Atomics.store(slots, SLOT_CLEAN_MS, Math.round(Math.min(CLEAN_MAX_MS, Math.max(CLEAN_MIN_MS, deadline - performance.now()))));
    answer(run, outcome, true);
    let next: LinkServing | 'retire';
    try {
      next = runner.after(work);
    } catch {
      next = 'retire';
    }
    release();
    if (next === 'retire') {
      // Busy for good: the main thread ends this thread once the answer has left.
      await link.flushed();
      retire();
      return;
    }
    link.send(next);
    idle();
  };
  const release = (): void => {
    Atomics.store(slots, SLOT_CLEAN_MS, 0);
    Atomics.store(slots, SLOT_CALL_ID, 0);
    Atomics.sub(task.busy, 0, 1);
  };
  link.serve((run) => {
    if (busy) {
      // The coordinator sends a thread a call only when it said it serves: this one is not for it.
      link.send({ kind: 'done', id: run.id, key: run.request.callKey ?? '', outcome: { ok: false, error: { type: 'SandboxCrashError', message: 'the sandbox thread was running another call' }, output: [] } });
      return;
    }
    busy = true;
    clearTimeout(idleTimer);
    void serve(run);
  });
  link.send({ kind: 'serving' });
  idle();
  return new Promise<Outcome>(() => {});
}
