// The direct path, in the worker thread: the thread serves the calls the coordinator writes to its
// host link, one at a time, and writes each answer back there. piscina keeps the thread's life: it
// started the thread with its resourceLimits and gave it one ServeTask that never settles, and the
// pool host's main thread ends the thread (aborts that task, so piscina terminates and replaces it)
// on a timeout, a cancel, the memory watch or a recycle. The main thread learns what runs here from
// the task's shared slots, with no message per call (protocol.ts SLOT_*).
//
// Between calls the thread is idle (not parked in Atomics.wait: it is inside its task), and it
// prepares the next call's Compartment then (prepared-realm.ts).

import { preprocessCached } from './preprocess-cache.js';
import { SLOT_CALL_ID, SLOT_MEMORY_MB } from '../kit/protocol.js';
import type { LinkRun, Outcome, ServeTask, ToLinkThread, WorkerTask } from '../kit/protocol.js';
import { notStarted } from '../kit/call-errors.js';
import { READ_CHARS_SLOT } from '../kit/fast-read.js';
import type { WorkerHostLink } from '../kit/host-link.js';
import { prepareSoon } from './prepared-realm.js';
import { threadPort } from '../kit/thread-channel.js';

type Execute = (task: WorkerTask, direct: boolean) => Promise<Outcome>;

/**
 * Serves calls from `link` until the thread is terminated; never settles. A call that arrives
 * while another runs waits here (the coordinator sends one at a time, but a cancel may overtake).
 */
export function serveLink(task: ServeTask, link: WorkerHostLink | undefined, execute: Execute, trim: () => void): Promise<Outcome> {
  if (!link) return Promise.reject(new Error('the direct path needs a host link, and this thread has none'));
  const queue: LinkRun[] = [];
  let running = false;
  const answer = (id: number, key: string, outcome: Outcome): void => {
    link.send({ kind: 'done', id, key, outcome });
  };
  const next = async (): Promise<void> => {
    running = true;
    for (let run = queue.shift(); run; run = queue.shift()) {
      const key = run.request.callKey ?? '';
      const pre = preprocessCached(run.request.code, run.request.language);
      if (!pre.ok) {
        answer(run.id, key, { ok: false, error: pre.error, output: [] });
        continue;
      }
      const { code: _code, ...rest } = run.request;
      const work: WorkerTask = { ...rest, id: run.id, source: pre.source, wake: task.wake, interrupt: task.slots };
      // Before any guest code: the main thread can now find this call (abort, memory watch).
      Atomics.store(task.slots, READ_CHARS_SLOT, 0);
      Atomics.store(task.slots, SLOT_MEMORY_MB, run.request.memoryMb);
      Atomics.store(task.slots, SLOT_CALL_ID, run.id);
      // The main thread's memory watch polls while calls run; it is told only when it is not polling.
      Atomics.add(task.busy, 0, 1);
      if (Atomics.load(task.busy, 1) === 0) threadPort.postMessage({ kind: 'busy' });
      let outcome: Outcome;
      try {
        outcome = await execute(work, true);
      } finally {
        // Cleared before the answer leaves: an abort for this call that comes later finds nothing to stop.
        Atomics.store(task.slots, SLOT_CALL_ID, 0);
        Atomics.sub(task.busy, 0, 1);
      }
      const readChars = Atomics.load(task.slots, READ_CHARS_SLOT);
      answer(run.id, key, readChars > 0 ? { ...outcome, readChars } : outcome);
    }
    running = false;
    if (task.prepareRealms) prepareSoon();
    // Idle task.idleTrimMs after its last call, the thread gives back what it cached for calls.
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      if (!running) trim();
    }, task.idleTrimMs);
    idleTimer.unref();
  };
  let idleTimer: NodeJS.Timeout | undefined;
  link.serve((frame: ToLinkThread) => {
    if (frame.kind === 'cancel') {
      const i = queue.findIndex((r) => r.id === frame.id);
      if (i < 0) return;
      const [run] = queue.splice(i, 1) as [LinkRun];
      answer(run.id, run.request.callKey ?? '', { ok: false, error: notStarted(frame.reason, run.request.timeoutMs), output: [] });
      return;
    }
    queue.push(frame);
    if (!running) void next();
  });
  if (task.prepareRealms) prepareSoon();
  return new Promise<Outcome>(() => {});
}
