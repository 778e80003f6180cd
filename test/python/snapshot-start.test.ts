// What makes an interpreter's start from the snapshot cheap holds, and costs nothing of the seal:
// the dangerous built-in C modules are taken out of every copy of CPython's table (found with a
// native search of the heap), and the snapshot's objects are already in the collector's permanent
// generation when the prelude starts (so boot()'s collections scan only what the prelude made).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { disableBuiltinModules } from '../../workers/python/builtin-modules.js';
import type { EmscriptenHeap } from '../../workers/python/builtin-modules.js';
import type * as SnapshotModule from '../../workers/python/snapshot.js';
import { PYTHON_START_MS } from './helpers.js';

/** A heap with NUL-terminated names at `names`, as Emscripten lays out C strings. */
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
  it(
    "starts with the snapshot's objects frozen, and the dangerous built-in modules still refused after the patch",
    async () => {
      // The compiled modules: the snapshot is made in a thread that loads dist/'s snapshot-maker.js.
      const snapshot = (await import(path.resolve(import.meta.dirname, '../../dist/workers/python/snapshot.js'))) as typeof SnapshotModule;
      const dir = mkdtempSync(path.join(tmpdir(), 'cem-snapshot-start-'));
      const { pyodide, fromSnapshot } = await snapshot.loadInterpreter(dir, Object.freeze(Object.create(null) as object), () => {});
      expect(fromSnapshot).toBe(true);
      const [frozen, young] = (pyodide.runPython('import gc\n[gc.get_freeze_count(), len(gc.get_objects())]') as { toJs(): number[] }).toJs();
      // Everything the snapshot's interpreter held (tens of thousands of objects) is frozen; what
      // Pyodide made while restoring is not.
      expect(frozen).toBeGreaterThan(10_000);
      expect(young).toBeLessThan(frozen as number);
      const internals = pyodide as unknown as { _module: EmscriptenHeap };
      expect(disableBuiltinModules(internals._module)).toBeGreaterThanOrEqual(2);
      const ctypes = pyodide.runPython("import _imp, importlib.machinery as m\nsorted(n for n in dir(_imp.create_builtin(m.ModuleSpec('_ctypes', None, origin='built-in'))) if not n.startswith('__'))") as { toJs(): string[] };
      expect(ctypes.toJs()).toEqual([]);
    },
    PYTHON_START_MS,
  );
});
