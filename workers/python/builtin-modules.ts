// Takes dangerous C modules out of CPython's table of built-in modules. _ctypes (raw memory and
// function pointers), the _test* modules (deliberately unsafe C-API probes) and faulthandler are
// compiled into Pyodide's WebAssembly, and CPython's import machinery can load a built-in module
// without the 'import' audit event (BuiltinImporter.load_module). CPython copies the table at
// start-up and looks modules up in the copy, so every copy is patched: an entry whose init
// function is NULL makes CPython hand out an empty module instead of running the C code.

/** The part of Emscripten's Module used here. */
export interface EmscriptenHeap {
  HEAPU32: Uint32Array;
  UTF8ToString(ptr: number): string;
  /** Address of CPython's `PyImport_Inittab` pointer. */
  _PyImport_Inittab: number;
}

/** Built-in modules no call may load. Modules already imported at start-up are unaffected. */
export const DISABLED_BUILTIN_MODULES: ReadonlySet<string> = new Set([
  '_ctypes', '_testcapi', '_testinternalcapi', '_testbuffer', '_testclinic', '_testclinic_limited',
  '_testlimitedcapi', '_xxtestfuzz', '_remote_debugging', 'faulthandler', '_posixsubprocess',
  '_sqlite3', 'mmap', 'xxsubtype',
]);

/** Patches every copy of the inittab; returns how many copies were patched. */
export function disableBuiltinModules(module: EmscriptenHeap, names: ReadonlySet<string> = DISABLED_BUILTIN_MODULES): number {
  const heap = module.HEAPU32;
  const table = heap[module._PyImport_Inittab >> 2] ?? 0;
  if (table === 0) return 0;
  const words: number[] = [];
  for (let p = table >> 2; (heap[p] ?? 0) !== 0; p += 2) words.push(heap[p] ?? 0, heap[p + 1] ?? 0);
  if (words.length < 6) return 0;
  const targets: number[] = [];
  for (let j = 0; j < words.length; j += 2) {
    if (names.has(module.UTF8ToString(words[j] ?? 0))) targets.push(j + 1);
  }
  let patched = 0;
  const [w0 = 0, w1, w2, w3] = words;
  // The heap is tens of MB: TypedArray indexOf finds the candidates natively (a JavaScript loop
  // over every word took 50-100 ms of each interpreter's start).
  for (let i = heap.indexOf(w0); i !== -1 && i + words.length < heap.length; i = heap.indexOf(w0, i + 1)) {
    if (heap[i + 1] !== w1 || heap[i + 2] !== w2 || heap[i + 3] !== w3) continue;
    let whole = true;
    for (let k = 4; k < words.length && whole; k++) whole = heap[i + k] === words[k];
    if (!whole) continue;
    for (const t of targets) heap[i + t] = 0;
    patched++;
  }
  return patched;
}
