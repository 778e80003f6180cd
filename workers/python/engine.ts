// Starts the Pyodide interpreter of one worker thread and seals it. Order matters:
//   1. load Pyodide offline from its npm folder, with an empty `js` module and no package index
//      (restored from a memory snapshot of exactly that when there is one: snapshot.ts);
//   2. drop the JavaScript bridge modules (js, pyodide_js) and run the sandbox prelude, which
//      preloads the usual modules, records the shared state and installs the audit hook;
//   3. make Node's host powers inert in this thread (host-powers.ts), record timers per call;
//   4. lockdown(): every Function constructor reachable from a JavaScript object now throws,
//      then remove eval and Function from the global scope.
// Python code then holds at most a few frozen JavaScript functions and no way to make more code.

import type { PyodideAPI } from 'pyodide';
import type { PyCallable, PyProxy } from 'pyodide/ffi';
import { disableBuiltinModules } from './builtin-modules.js';
import type { EmscriptenHeap } from './builtin-modules.js';
import { installCallTimers } from './call-timers.js';
import { disableCodeGeneration, disableHostPowers } from './host-powers.js';
import { PRELUDE_CODE_NAME, PRELUDE_PY, loadInterpreter } from './snapshot.js';

const MB = 1024 * 1024;

/** The JavaScript functions Python calls: text in, text (or UTF-8 bytes of a long text) out. */
export interface Bridge {
  sync(method: unknown, argsJson: unknown): string | Uint8Array;
  async(method: unknown, argsJson: unknown): Promise<string | Uint8Array>;
  emit(line: unknown): void;
  /** The outcome (JSON text) of an async call, when its task ends. */
  done(text: unknown): void;
}

/** Handles on the prelude's entry points, held by JavaScript only (Python cannot swap them). */
export interface PythonEngine {
  readonly pyodide: PyodideAPI;
  compile: PyCallable;
  begin: PyCallable;
  cancel: PyCallable;
  endCall: PyCallable;
  /** After every call: sys.modules, modules the call touched, the preloaded modules' classes. */
  sweepQuick: PyCallable;
  resetSettings: PyCallable;
  collect: PyCallable;
  freeze: PyCallable;
  /** The self-check after every call: false when the prelude was damaged (the worker must go). */
  intact: PyCallable;
  /** The WebAssembly memory's size now, bytes (it only ever grows). */
  wasmBytes(): number;
  /** Limits WebAssembly memory growth to `bytes` more than now; undefined lifts the limit. */
  limitMemory(bytes: number | undefined): void;
  /** Set once Pyodide hit a fatal error: the interpreter cannot run anything any more. */
  readonly dead: boolean;
  startupMs: number;
  /**
   * Where startupMs went, ms: load (the snapshot's key, file and loadPyodide, or a cold start),
   * modules (the bridge modules dropped, the built-in C modules disabled), prelude, boot, seal
   * (host powers, lockdown, hardening). Printed by bench/python-start-probe.ts.
   */
  startupPhases: Record<'load' | 'modules' | 'prelude' | 'boot' | 'seal', number>;
  /** Restored from the memory snapshot (snapshot.ts) rather than started cold. */
  fromSnapshot: boolean;
}

/** The part of a WebAssembly.Memory used here (lib ES2023 has no WebAssembly types). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

interface PyodideInternals {
  _module: EmscriptenHeap & { memory: WasmMemory };
  _api: { on_fatal?: (e: unknown) => void; scheduleCallback?: unknown };
  loadedPackages: object;
}

/**
 * `snapshotDir`: where the memory snapshot is kept (snapshot.ts); without it the interpreter
 * starts cold. Either way the prelude below runs on it and seals it the same way.
 */
export async function startPython(bridge: Bridge, fallbackOutput: (line: string) => void, snapshotDir?: string): Promise<PythonEngine> {
  const started = performance.now();
  let last = started;
  const lap = (): number => {
    const now = performance.now();
    const ms = Math.round((now - last) * 10) / 10;
    last = now;
    return ms;
  };
  const jsglobals = Object.freeze(Object.create(null) as object);
  const { pyodide, fromSnapshot } = await loadInterpreter(snapshotDir, jsglobals, fallbackOutput);
  const phases = { load: lap(), modules: 0, prelude: 0, boot: 0, seal: 0 };
  const internals = pyodide as unknown as PyodideInternals;
  let dead = false;
  internals._api.on_fatal = () => {
    dead = true;
  };
  pyodide.unregisterJsModule('js');
  pyodide.unregisterJsModule('pyodide_js');
  disableBuiltinModules(internals._module);
  phases.modules = lap();

  const namespace = pyodide.runPython(
    "import builtins\n{'__name__': '_sandbox', '__builtins__': dict(builtins.__dict__)}",
  ) as PyProxy & { get(key: string): unknown };
  // Restored: the snapshot holds the prelude compiled; taken out of __main__ before it runs.
  const compiled = fromSnapshot ? (pyodide.globals.get(PRELUDE_CODE_NAME) as PyProxy | undefined) : undefined;
  if (compiled) {
    pyodide.globals.delete(PRELUDE_CODE_NAME);
    const exec = pyodide.globals.get('exec') as PyCallable;
    exec(compiled, namespace);
    exec.destroy();
    compiled.destroy();
  } else {
    pyodide.runPython(PRELUDE_PY, { globals: namespace, filename: '<sandbox>' });
  }
  phases.prelude = lap();
  const get = (name: string): PyCallable => namespace.get(name) as PyCallable;
  (get('install') as unknown as (...fns: unknown[]) => void)(bridge.sync, bridge.async, bridge.emit, bridge.done);
  const booted = get('boot')() as PyProxy & { get(i: number): unknown };
  const engine = {
    pyodide,
    compile: get('compile_user'),
    begin: get('begin'),
    cancel: get('cancel'),
    endCall: get('end_call'),
    sweepQuick: booted.get(0) as PyCallable,
    resetSettings: booted.get(1) as PyCallable,
    collect: booted.get(2) as PyCallable,
    freeze: booted.get(3) as PyCallable,
    intact: booted.get(4) as PyCallable,
    wasmBytes: () => internals._module.memory.buffer.byteLength,
    limitMemory: memoryLimiter(internals._module.memory),
    get dead() {
      return dead;
    },
    startupMs: 0,
    startupPhases: phases,
    fromSnapshot,
  };
  booted.destroy();
  namespace.destroy();
  phases.boot = lap();

  disableHostPowers();
  installCallTimers();
  lockdown({
    errorTaming: 'safe',
    stackFiltering: 'concise',
    errorTrapping: 'none',
    unhandledRejectionTrapping: 'none',
    consoleTaming: 'unsafe',
    overrideTaming: 'moderate',
    domainTaming: 'safe',
    reporting: 'none',
  });
  // What Python can still reach of JavaScript: freeze it, so no call can leave data in it.
  for (const reachable of [bridge.sync, bridge.async, bridge.emit, bridge.done, jsglobals, internals._api.scheduleCallback, internals.loadedPackages]) {
    if (reachable !== undefined && reachable !== null) harden(reachable);
  }
  disableCodeGeneration();
  phases.seal = lap();
  engine.startupMs = Math.round(performance.now() - started);
  return engine;
}

/**
 * Emscripten grows the WebAssembly memory through `memory.grow()`; when that throws, malloc fails
 * and Python raises MemoryError: the call fails cleanly and the warm worker stays. The pool
 * host's resident-memory watchdog remains the backstop for everything else.
 */
function memoryLimiter(memory: WasmMemory): (bytes: number | undefined) => void {
  const grow = memory.grow.bind(memory);
  let limit = Infinity;
  Object.defineProperty(memory, 'grow', {
    value: (pages: number): number => {
      if (memory.buffer.byteLength + pages * 65_536 > limit) throw new RangeError('memory limit of the call reached');
      return grow(pages);
    },
  });
  return (bytes) => {
    limit = bytes === undefined ? Infinity : memory.buffer.byteLength + Math.max(bytes, 8 * MB);
  };
}
