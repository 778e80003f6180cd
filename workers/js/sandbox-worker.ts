// A piscina worker thread that runs guest JavaScript: SES lockdown() once at start, then a fresh
// Compartment per call whose only powers are the endowments of workers/js/globals.ts.
// Everything is imported before lockdown (piscina's own loader included), as SES requires.
//
// One way in: piscina starts this thread and gives it one ServeTask for its whole life; calls come
// over the thread's own host link from the coordinator and their answers go back there
// (workers/kit/serve-link.ts), so the sandbox process's main thread is off the call's path.

// First: a standard ArrayBuffer `detached` before SES adds its own (standard-detached.ts).
import './standard-detached.js';
import 'ses';
import { GUEST_ERROR, timedOutText } from '../kit/guest-errors.js';
import { MAX_RESULT_CHARS } from '../kit/protocol.js';
import type { Outcome, ServeTask, WorkerTask } from '../kit/protocol.js';
import { serveLink } from '../kit/serve-link.js';
import { CallScope, makeError } from '../kit/call-scope.js';
import { errorInfo } from '../kit/errors.js';
import type { Evaluator } from './globals.js';
import type { WorkerHostLink } from '../kit/host-link.js';
import { retainedBytes, setBaseline } from '../kit/memory.js';
import { lockdownRealm } from './realm.js';
import { clearReadCache } from '../kit/read-cache.js';
import { hostLink, threadPort } from '../kit/thread-channel.js';
import { newBudget, toJsonSafe } from '../kit/serialize.js';
import { endRealm, prepareSoon, takeRealm } from './prepared-realm.js';
import { preprocessCached } from './preprocess-cache.js';
import type { Realm } from './prepared-realm.js';

const MB = 1024 * 1024;

lockdownRealm();

let current: CallScope | undefined;

// A guest promise rejected with no handler must not kill the worker (Node's default 'throw').
// Only the running call can be its author: an earlier call's code cannot run any more once its
// task ended (its scope is closed, its timers cleared, and a macrotask turn ran its last
// microtasks while it was still current), and nothing shared is writable to leave a hook in.
process.on('unhandledRejection', (reason) => {
  if (current?.active) current.log([`Unhandled promise rejection: ${errorInfo(reason).message}`]);
});
process.on('uncaughtException', (err) => {
  if (current?.active) current.fail(err instanceof Error ? err : makeError('Error', String(err)));
});

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The ServeTask (calls over the link), or the warm-up task: loaded, locked down, and the link is open. */
export default async function run(task: ServeTask | Pick<WorkerTask, 'source'>): Promise<Outcome> {
  if ('serve' in task) return serveLink(task, hostLink, { prepare: preprocessCached, run: execute, idle: prepareSoon, trim });
  if (!hostLink) throw new Error('this sandbox thread has no host link: it cannot take calls');
  await hostLink.ready;
  trim();
  return { ok: true, value: null, output: [] };
}

/** Warm-up, and the idle trim: drop what calls left cached, measure what an idle worker holds. */
function trim(): void {
  clearReadCache();
  setBaseline();
}

/** Runs one call in a pristine Compartment (prepared while the thread was idle, or made now). */
async function execute(task: WorkerTask): Promise<Outcome> {
  const scope = new CallScope(threadPort, hostLink as WorkerHostLink, task.id, task.callKey ?? '', task.wake, performance.now() + task.timeoutMs, task.streamOutput, task.maxArgChars);
  current = scope;
  let compartment: Compartment | undefined;
  let realm: Realm | undefined;
  const evaluator = (): Evaluator => compartment as unknown as Evaluator;
  try {
    realm = takeRealm({ scope, task, evaluator });
    compartment = realm.compartment;
    const main = compartment.evaluate(task.source) as () => Promise<unknown>;
    const returned = await race(scope, task.timeoutMs, main());
    const value = returned === undefined ? (compartment.globalThis as { result?: unknown }).result : returned;
    const budget = newBudget(MAX_RESULT_CHARS);
    const json = toJsonSafe(value, budget);
    // One macrotask turn: a microtask flood the guest started never lets this resolve, so it ends
    // as a timeout (the pool host terminates the worker) instead of starving every later task.
    await turn();
    const used = await retainedBytes(task.memoryMb * MB);
    if (used > task.memoryMb * MB) {
      return failure(scope, makeError('MemoryLimitError', `the call holds ${Math.round(used / MB)} MB, over its memory_mb limit of ${task.memoryMb}`));
    }
    return { ok: true, value: json, output: scope.output, outputDropped: scope.outputDropped || undefined, heapBytes: used };
  } catch (err) {
    await turn();
    return failure(scope, err);
  } finally {
    if (realm) endRealm(realm);
    scope.close();
    current = undefined;
  }
}

function failure(scope: CallScope, err: unknown): Outcome {
  return { ok: false, error: errorInfo(err), output: scope.output, outputDropped: scope.outputDropped || undefined };
}

/** The guest's promise against the call's deadline and against a fatal error in a guest callback. */
function race(scope: CallScope, timeoutMs: number, guest: Promise<unknown>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(makeError(GUEST_ERROR.TimeoutError, timedOutText(timeoutMs))), timeoutMs);
    scope.fail = (err) => {
      clearTimeout(timer);
      reject(err);
    };
    guest.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
