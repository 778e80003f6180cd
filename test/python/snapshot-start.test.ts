// What makes an interpreter's start from the snapshot cheap holds, and costs nothing of the seal:
// the dangerous built-in C modules are taken out of every copy of CPython's table (found with a
// native search of the heap), and the snapshot's objects are already in the collector's permanent
// generation when the prelude starts (so boot()'s collections scan only what the prelude made),
// the values take_snapshot skips by type are ones it has nothing to record for, and its walk,
// which builds records only for the hot modules, still protects every module's functions and classes.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { PyodideAPI } from 'pyodide';
import type { PyProxy } from 'pyodide/ffi';
import { beforeAll, describe, expect, it } from 'vitest';
import { disableBuiltinModules } from '../../workers/python/builtin-modules.js';
import type { EmscriptenHeap } from '../../workers/python/builtin-modules.js';
import type * as SnapshotModule from '../../workers/python/snapshot.js';
import { PRELUDE_PY } from '../../workers/python/snapshot.js';
import { PYTHON_START_MS } from './helpers.js';

/** A heap with NUL-terminated names at `names`, as Emscripten lays out C strings. */
/** Runs `lines` in a fresh prelude namespace of the test's interpreter, after the preloaded modules. */
function inPrelude(pyodide: PyodideAPI, lines: string[]): unknown {
  const ns = pyodide.runPython("import builtins\n{'__name__': '_sandbox', '__builtins__': dict(builtins.__dict__)}") as PyProxy;
  pyodide.runPython(PRELUDE_PY, { globals: ns, filename: '<sandbox>' });
  return pyodide.runPython(['import sys, types, importlib', 'for name in PRELOADED:', '    importlib.import_module(name)', ...lines].join('\n'), { globals: ns });
}

function fakeHeap(words: number): { module: EmscriptenHeap; heap: Uint32Array; name(text: string): number } {
  const heap = new Uint32Array(words);
  const bytes = new Uint8Array(heap.buffer);
  let next = (words - 256) * 4;
  return {
    heap,
    module: {
      HEAPU32: heap,
      UTF8ToString: (ptr: number) => {
        let end = ptr;
        while (bytes[end] !== 0) end++;
        return Buffer.from(bytes.subarray(ptr, end)).toString('utf8');
      },
      _PyImport_Inittab: 0,
    },
    name(text: string): number {
      const at = next;
      bytes.set(Buffer.from(`${text}\0`), at);
      next += text.length + 1;
      return at;
    },
  };
}

describe('disableBuiltinModules', () => {
  it('patches every copy of the table and nothing else, however far into the heap', () => {
    const { module, heap, name } = fakeHeap(1 << 20);
    const entries = [
      [name('posix'), 11],
      [name('_ctypes'), 22],
      [name('math'), 33],
      [name('faulthandler'), 44],
    ];
    const table = entries.flat();
    // The table CPython points at, a copy far away, and a decoy that only starts like the table.
    const places = [1000, (1 << 20) - 2000];
    for (const at of places) heap.set([...table, 0, 0], at);
    const decoy = 500_000;
    heap.set([...table.slice(0, 4), 99, 99, 0, 0], decoy);
    heap[0] = places[0]! * 4;
    expect(disableBuiltinModules(module)).toBe(2);
    for (const at of places) expect([...heap.subarray(at, at + 8)]).toEqual([entries[0]![0], 11, entries[1]![0], 0, entries[2]![0], 33, entries[3]![0], 0]);
    expect([...heap.subarray(decoy, decoy + 6)]).toEqual([...table.slice(0, 4), 99, 99]);
  });
});

describe('an interpreter restored from the snapshot, before the prelude runs', () => {
  let pyodide: PyodideAPI;
  beforeAll(async () => {
    // The compiled modules: the snapshot is made in a thread that loads dist/'s snapshot-maker.js.
    const snapshot = (await import(path.resolve(import.meta.dirname, '../../dist/workers/python/snapshot.js'))) as typeof SnapshotModule;
    const dir = mkdtempSync(path.join(tmpdir(), 'cem-snapshot-start-'));
    const loaded = await snapshot.loadInterpreter(dir, Object.freeze(Object.create(null) as object), () => {});
    expect(loaded.fromSnapshot).toBe(true);
    pyodide = loaded.pyodide;
  }, PYTHON_START_MS);

  it("starts with the snapshot's objects frozen", () => {
    const [frozen, young] = (pyodide.runPython('import gc\n[gc.get_freeze_count(), len(gc.get_objects())]') as PyProxy & { toJs(): number[] }).toJs();
    // Everything the snapshot's interpreter held (tens of thousands of objects) is frozen; what
    // Pyodide made while restoring is not.
    expect(frozen).toBeGreaterThan(10_000);
    expect(young).toBeLessThan(frozen as number);
  });

  it('still refuses the dangerous built-in modules after the patch', () => {
    const internals = pyodide as unknown as { _module: EmscriptenHeap };
    expect(disableBuiltinModules(internals._module)).toBeGreaterThanOrEqual(2);
    const ctypes = pyodide.runPython("import _imp, importlib.machinery as m\nsorted(n for n in dir(_imp.create_builtin(m.ModuleSpec('_ctypes', None, origin='built-in'))) if not n.startswith('__'))") as PyProxy & { toJs(): string[] };
    expect(ctypes.toJs()).toEqual([]);
  });

  it("skips in take_snapshot only values that have nothing to record (py/state.py's _PLAIN_TYPE_IDS)", () => {
    // Over every value the recorded state walks (module namespaces and their classes' members),
    // after the prelude: a value of a listed type is no module, class, function or container,
    // its type is immutable, and it does not claim another __class__ (so record_value's checks
    // would all fall through for it).
    const check = inPrelude(pyodide, [
        'values = []',
        'for m in list(sys.modules.values()):',
        "    d = getattr(m, '__dict__', None)",
        '    if type(d) is dict:',
        '        for v in list(d.values()):',
        '            values.append(v)',
        '            if isinstance(v, type) and not (v.__flags__ & _IMMUTABLE_TYPE):',
        '                values.extend(list(v.__dict__.values()))',
        'plain = [v for v in values if id(type(v)) in _PLAIN_TYPE_IDS]',
        'bad = [repr(v)[:80] for v in plain if isinstance(v, (type, types.ModuleType, types.FunctionType, list, dict, set))',
        '       or _mutable_class(type(v)) or v.__class__ is not type(v)]',
        '[len(values), len(plain), bad]',
    ]) as PyProxy & { toJs(): [number, number, string[]] };
    const [all, plain, bad] = check.toJs();
    expect(bad).toEqual([]);
    // Most values are plain: the shortcut is worth having.
    expect(plain).toBeGreaterThan(all / 4);
  });

  it('protects every function and mutable class of every module namespace (take_snapshot, which makes no record for most of them)', () => {
    // Last: take_snapshot gives every module the tracking class. The audit hook refuses changes
    // to the code, defaults and special names of what these ids name.
    const check = inPrelude(pyodide, [
        'quick, protected = take_snapshot((globals(),))',
        'expected = set()',
        // builtins is not walked as a namespace: the walk meets its dict first as a module's
        // __builtins__ value (a container), as it always did. Its one mutable class
        // (ExceptionGroup) is covered by the hook's check of __module__ against the shared modules.
        'for n, m in list(sys.modules.items()):',
        "    d = getattr(m, '__dict__', None)",
        "    if type(d) is dict and n != 'builtins':",
        '        expected.update(id(v) for v in d.values() if type(v) is types.FunctionType or _mutable_class(v))',
        '[len(expected), len(protected), len(expected - protected)]',
    ]) as PyProxy & { toJs(): number[] };
    const [expected, protectedIds, missing] = check.toJs();
    expect(missing).toBe(0);
    expect(expected).toBeGreaterThan(1_000);
    // Class members are protected too: more ids than the namespaces' own functions and classes.
    expect(protectedIds).toBeGreaterThan(expected as number);
  });
});
