// A piscina worker thread that runs guest Python in Pyodide (WebAssembly). Pyodide loads once
// per thread (seconds), then each task of the one agent this interpreter serves runs in a fresh
// namespace, with cheap hygiene after it (workers/python/py/state.py). Another agent never
// gets this interpreter: its process replaces it (workers/python/strategy.ts), and a call of another
// agent that reached it anyway is refused and the interpreter retired. Calls come over the thread's
// host link (workers/kit/serve-link.ts). After each call's answer its clean-up runs within the
// call's limits (its memory limit still set, its remaining time counted by the process's main
// thread), and the thread takes no call until it is clean; a damaged or dead interpreter asks to be
// retired instead. The main thread stops a runaway call through the interrupt slot, so the warm
// interpreter usually survives it.
// How Python is kept away from the host: workers/python/engine.ts.

import 'ses';
import { workerData } from 'node:worker_threads';
import type { PyCallable, PyProxy } from 'pyodide/ffi';
import { timedOutText, timeoutError } from '../kit/guest-errors.js';
import { SLOT_STOP_REASON, STOP_REASONS } from '../kit/protocol.js';
import type { ErrorInfo, Json, LinkServing, Outcome, ServeTask, WorkerTask } from '../kit/protocol.js';
import { ASYNC_HOST_METHODS, HOST_METHODS } from '../kit/api-contract.js';
import { CallScope } from '../kit/call-scope.js';
import { stoppedCall } from '../kit/call-errors.js';
import { countRead, fastRead } from '../kit/fast-read.js';
import type { WorkerHostLink } from '../kit/host-link.js';
import { serveLink } from '../kit/serve-link.js';
import { hostLink, threadPort } from '../kit/thread-channel.js';
import { beginCallTimers, endCallTimers, hostTimers } from './call-timers.js';
import { startPython } from './engine.js';
import type { Bridge, PythonEngine } from './engine.js';

const MB = 1024 * 1024;
/** Share of memory_mb the WebAssembly heap may grow by; the rest is the JavaScript side's. */
const WASM_SHARE_OF_LIMIT = 0.85;
/** Where the interpreter's memory snapshot is kept (python/snapshot.ts); cold start without it. */
const snapshotDir = (workerData as { pythonSnapshotDir?: string } | undefined)?.pythonSnapshotDir;
/** The WebAssembly memory's size once warm: memory_mb counts growth from here, whatever earlier calls grew. */
let baselineWasmBytes = 0;
/** How often an async call checks its interrupt buffer and deadline, ms. */
const INTERRUPT_POLL_MS = 20;
/** Compiled code objects kept per worker: agents re-run the same code often. */
const MAX_CACHED_CODE = 128;
const MAX_CACHED_SOURCE_CHARS = 64 * 1024;
/** Host methods Python code may call, and which of them may be awaited. */
// From the one sandbox API table: Python may block on every host method, and await the async ones.
const SYNC_METHODS: ReadonlySet<string> = new Set(HOST_METHODS);
const ASYNC_METHODS: ReadonlySet<string> = new Set(ASYNC_HOST_METHODS);

let current: CallScope | undefined;
let currentTask: WorkerTask | undefined;
/** Stays 0: the interrupt buffer between calls, so nothing can interrupt the clean-up. */
const idleInterrupt = new Int32Array(new SharedArrayBuffer(4));

type Envelope = { ok: true; value?: Json } | { ok: false; error?: ErrorInfo; name?: string; message?: string };

/** Strings longer than this reach Python as UTF-8 bytes: Pyodide converts JS strings char by char. */
const BYTES_REPLY_CHARS = 32 * 1024;
const utf8 = new TextEncoder();

// Replies to Python: 's' + a string value as is (file contents are often megabytes of JSON that
// the code parses itself: no second JSON layer), a long string as UTF-8 bytes, 'j' + any other
// value as JSON, 'e' + an error.
function reply(value: unknown): string | Uint8Array {
  if (typeof value === 'string') return value.length > BYTES_REPLY_CHARS ? utf8.encode(value) : `s${value}`;
  return `j${JSON.stringify(value === undefined ? null : value)}`;
}

/**
 * How context_vars reach Python: their JSON text (as UTF-8 bytes when long, like long host
 * replies), and each long string value the coordinator sent apart (RunRequest.contextStrings) as
 * its UTF-8 bytes, which Python decodes without a JSON layer.
 */
function contextForPython(task: WorkerTask): { json: string | Uint8Array; longNames: string; longValues: Uint8Array[] } {
  const json = task.contextJson ?? '';
  const strings = task.contextStrings ?? [];
  return {
    json: json.length > BYTES_REPLY_CHARS ? utf8.encode(json) : json,
    longNames: strings.length > 0 ? JSON.stringify(strings.map(([name]) => name)) : '',
    longValues: strings.map(([, value]) => utf8.encode(value)),
  };
}

function replyError(err: unknown): string {
  const e = err as { name?: unknown; message?: unknown };
  return `e${JSON.stringify({ name: typeof e?.name === 'string' ? e.name : 'Error', message: typeof e?.message === 'string' ? e.message : String(err) })}`;
}

function parseArgs(method: unknown, argsJson: unknown, allowed: ReadonlySet<string>): { scope: CallScope; method: string; args: unknown[] } {
  const scope = current;
  if (!scope || !scope.active) throw Object.assign(new Error('the sandbox API was used after its call ended'), { name: 'RuntimeError' });
  if (typeof method !== 'string' || !allowed.has(method) || typeof argsJson !== 'string') throw Object.assign(new Error('unknown host call'), { name: 'RuntimeError' });
  if (method === 'fetch' && !currentTask?.fetchAllowed) {
    const message = "permission denied: fetch needs the net permission, and this agent's net permission lists no hosts; an operator can add hosts to permissions.net";
    throw Object.assign(new Error(message), { name: 'PermissionError' });
  }
  const args = JSON.parse(argsJson) as unknown;
  if (!Array.isArray(args)) throw Object.assign(new Error('bad host call arguments'), { name: 'RuntimeError' });
  return { scope, method, args };
}

// Text in, text out: Python never holds a JavaScript object it could use to reach further.
const bridge: Bridge = {
  sync(method, argsJson) {
    try {
      const call = parseArgs(method, argsJson, SYNC_METHODS);
      if (call.method === 'read_file' && typeof call.args[0] === 'string') {
        // Served here when the coordinator granted it and the path is plain (fast-read.ts).
        const content = fastRead(currentTask?.readGrant, call.args[0]);
        if (content !== undefined) {
          if (currentTask) countRead(currentTask.interrupt, content.length);
          return reply(content);
        }
      }
      return reply(call.scope.callSync(call.method, call.args));
    } catch (err) {
      return replyError(err);
    }
  },
  async(method, argsJson) {
    try {
      const call = parseArgs(method, argsJson, ASYNC_METHODS);
      return call.scope.callAsync(call.method, call.args).then(reply, replyError);
    } catch (err) {
      return Promise.resolve(replyError(err));
    }
  },
  emit(line) {
    if (typeof line === 'string') current?.log([line]);
  },
  done(text) {
    if (typeof text === 'string') finishAsync?.(text);
  },
};

/** Resolves the running async call with its outcome text (set while one runs). */
let finishAsync: ((text: string) => void) | undefined;

const engine: Promise<PythonEngine> = startPython(bridge, (line) => current?.log([line]), snapshotDir);
// Failures are reported by the warm-up task; nobody may be left with an unhandled rejection.
engine.catch(() => {});

process.on('unhandledRejection', () => {});
process.on('uncaughtException', (err) => {
  current?.log([`Uncaught error in the sandbox: ${err instanceof Error ? err.message : String(err)}`]);
});

const codeCache = new Map<string, PyProxy>();

function compile(py: PythonEngine, source: string): PyProxy | string {
  const hit = codeCache.get(source);
  if (hit) {
    codeCache.delete(source);
    codeCache.set(source, hit);
    return hit;
  }
  const compiled = py.compile(source) as PyProxy | string;
  if (typeof compiled === 'string' || source.length > MAX_CACHED_SOURCE_CHARS) return compiled;
  codeCache.set(source, compiled);
  if (codeCache.size > MAX_CACHED_CODE) {
    const [oldest, proxy] = codeCache.entries().next().value as [string, PyProxy];
    codeCache.delete(oldest);
    proxy.destroy();
  }
  return compiled;
}

/**
 * The outcome of an async call: bridge.done delivers it. The task is cancelled when the pool host
 * signals an interrupt or the deadline passes (a task waiting on a host promise runs no Python,
 * so Pyodide's own interrupt check would never fire).
 */
function awaitOutcome(py: PythonEngine, interrupt: Int32Array, deadline: number): { outcome: Promise<string>; stop(): void } {
  let poll: NodeJS.Timeout | undefined;
  const stop = (): void => {
    if (poll) hostTimers.clearInterval(poll);
    poll = undefined;
    finishAsync = undefined;
  };
  const outcome = new Promise<string>((resolve) => {
    let cancelled = false;
    poll = hostTimers.setInterval(() => {
      if (!cancelled && (Atomics.load(interrupt, 0) !== 0 || performance.now() >= deadline)) {
        cancelled = true;
        py.cancel();
      }
    }, INTERRUPT_POLL_MS);
    finishAsync = (text) => {
      stop();
      resolve(text);
    };
  });
  return { outcome, stop };
}

function lastLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n').filter((line) => line.trim() !== '').pop() ?? 'unknown error';
}

function toOutcome(text: string, scope: CallScope, timedOut: boolean, timeoutMs: number): Outcome {
  const envelope = JSON.parse(text) as Envelope;
  const extra = { output: scope.output, outputDropped: scope.outputDropped || undefined };
  if (envelope.ok) return { ok: true, value: envelope.value ?? null, ...extra };
  if (timedOut) return { ok: false, error: timeoutError(timedOutText(timeoutMs)), ...extra };
  return { ok: false, error: envelope.error ?? { type: 'Error', message: 'the call failed' }, ...extra };
}

/**
 * Collects the call's garbage (finalizers run now, not in a later call), then sweeps. A sweep
 * that repaired something dropped objects whose finalizers may change things again: repeat until
 * a sweep finds nothing, or give up on this interpreter (false: the worker must go).
 */
function settle(py: PythonEngine, sweep: PyCallable): boolean {
  for (let pass = 0; pass < 4; pass++) {
    py.collect();
    if ((sweep() as number) === 0) return true;
  }
  return false;
}

/** Ends a call: its leftovers closed, its timers cancelled, the shared state put back. */
function cleanUp(py: PythonEngine): boolean {
  try {
    py.endCall();
  } catch {
    // the call broke what end_call uses; the sweeps below still put the shared state back
  }
  endCallTimers((callback) => {
    if (py.pyodide.ffi.PyProxy && callback instanceof py.pyodide.ffi.PyProxy) {
      try {
        callback.destroy();
      } catch {
        // already destroyed (a once-callable that ran)
      }
    }
  });
  if (!settle(py, py.sweepQuick)) return false;
  py.resetSettings();
  py.freeze();
  return py.intact() === true;
}

/** The agent this interpreter serves (its first call's): another agent's call is refused, and the interpreter goes. */
let boundAgent: string | undefined;
/** Set once this interpreter must take no further call (it was handed another agent's call, or it died). */
let retiring = false;

/** The ServeTask (calls over the link), or the warm-up task: Pyodide loaded and sealed, the link open. */
export default async function run(task: ServeTask | Pick<WorkerTask, 'source'>): Promise<Outcome> {
  const py = await engine;
  if ('serve' in task) return serveLink(task, hostLink, { run: (work) => execute(py, work), after: () => afterCall(py) });
  // Warm-up: Pyodide is loaded and sealed; its memory now is the pristine baseline.
  if (baselineWasmBytes === 0) baselineWasmBytes = py.wasmBytes();
  if (!hostLink) throw new Error('this sandbox thread has no host link: it cannot take calls');
  await hostLink.ready;
  return { ok: true, value: null, output: [] };
}

async function execute(py: PythonEngine, task: WorkerTask): Promise<Outcome> {
  if (boundAgent !== undefined && task.agent !== boundAgent) {
    // Never expected: the coordinator gives another agent a pristine interpreter. Refused all the same.
    retiring = true;
    return { ok: false, error: { type: 'SandboxCrashError', message: 'this Python interpreter served another agent: the call was refused and the interpreter is replaced' }, output: [] };
  }
  boundAgent = task.agent;
  if (py.dead || retiring) {
    retiring = true;
    return { ok: false, error: { type: 'SandboxCrashError', message: 'the Python interpreter can no longer run code; it is replaced' }, output: [] };
  }
  const deadline = performance.now() + task.timeoutMs;
  const scope = new CallScope(threadPort, hostLink as WorkerHostLink, task.id, task.callKey ?? '', task.wake, deadline, task.streamOutput);
  current = scope;
  currentTask = task;
  py.pyodide.setInterruptBuffer(task.interrupt);
  beginCallTimers();
  // Growth counts from the pristine baseline: memory an earlier call grew is this call's too (the
  // coordinator gave this call a pristine interpreter if that alone was past its limit). The limit
  // holds through the clean-up after the answer (afterCall).
  py.limitMemory(Math.max(0, baselineWasmBytes + task.memoryMb * MB * WASM_SHARE_OF_LIMIT - py.wasmBytes()));
  let outcome: Outcome;
  try {
    let text: string;
    const code = compile(py, task.source);
    if (typeof code === 'string') {
      text = code;
    } else {
      // Async code answers through bridge.done: listen before the task can possibly finish.
      const pending = awaitOutcome(py, task.interrupt, deadline);
      try {
        const context = contextForPython(task);
        const started = py.begin(code, task.source, context.json, task.workspaceName, JSON.stringify(task.toolNames ?? []), task.fetchAllowed, context.longNames, ...context.longValues) as unknown;
        if (typeof started === 'string') finishAsync?.(started);
        text = await pending.outcome;
      } finally {
        pending.stop();
      }
    }
    outcome = toOutcome(text, scope, performance.now() >= deadline, task.timeoutMs);
  } catch (err) {
    outcome = { ok: false, error: { type: 'SandboxCrashError', message: `the Python sandbox could not report the outcome: ${lastLine(err)}` }, output: scope.output };
  } finally {
    // Nothing may interrupt the clean-up: the call's slot is not watched once it has answered.
    py.pyodide.setInterruptBuffer(idleInterrupt);
    scope.close();
    current = undefined;
    currentTask = undefined;
  }
  // Stopped by the process (timeout, cancel): the call unwound with KeyboardInterrupt; say why.
  const reason = STOP_REASONS[Atomics.load(task.interrupt, SLOT_STOP_REASON) - 1];
  if (reason && !outcome.ok) outcome = { ...outcome, error: stoppedCall(undefined, reason, { timeoutMs: task.timeoutMs, memoryMb: task.memoryMb, heapLimitMb: 0 }, false) };
  return outcome;
}

/**
 * After the answer left: the clean-up, still under the call's memory limit and within its time
 * (the process's main thread ends this thread past it, and the interpreter is replaced). Says how
 * far the memory grew, or that this interpreter must go (damaged, dead, or handed another agent's call).
 */
function afterCall(py: PythonEngine): LinkServing | 'retire' {
  let sealed = false;
  try {
    sealed = !retiring && cleanUp(py);
  } catch {
    sealed = false;
  }
  py.limitMemory(undefined);
  if (!sealed || py.dead) return 'retire';
  const grown = py.wasmBytes() - baselineWasmBytes;
  return grown > 0 ? { kind: 'serving', minMemoryMb: Math.ceil(grown / WASM_SHARE_OF_LIMIT / MB) } : { kind: 'serving' };
}
