// The sandbox prelude and the snapshot's code, read from the Python files next to this module
// (workers/python/py/*.py; `npm run build` copies them into dist/ with scripts/copy-assets.mjs).
// The prelude's plain host calls are made from the sandbox API table (api-contract.ts) as Python
// source, added after py/api.py (forwardersSource).
// The text made here is what the memory snapshot's key hashes (snapshot.ts), so a change to any
// .py file or to the table's Python rows is a new snapshot.

import fs from 'node:fs';
import { SANDBOX_API } from '../kit/api-contract.js';
import type { ApiEntry } from '../kit/api-contract.js';

/** The prelude's files, in the order they run in one namespace (engine.ts). */
export const PRELUDE_FILES: readonly string[] = Object.freeze([
  'guard.py', 'bridge.py', 'api.py', 'state.py', 'runner.py', 'integrity.py', 'preloaded.py', 'boot.py',
]);
/** Every Python file the worker loads (the unit tests under py/tests/ are not shipped). */
export const PYTHON_FILES: readonly string[] = Object.freeze([...PRELUDE_FILES, 'snapshot.py']);

/** The folder of the .py files, next to this module (source or dist/). */
export const PY_DIR = new URL('./py/', import.meta.url);

export type SourceReader = (file: string) => string;

/** One .py file's text; a clear error when the build did not copy it. */
export function readPython(file: string): string {
  const url = new URL(file, PY_DIR);
  try {
    return fs.readFileSync(url, 'utf8');
  } catch (err) {
    throw new Error(`the Python file ${url.pathname} is missing (${(err as Error).message}): run \`npm run build\`, which copies workers/python/py/*.py next to the compiled worker`, { cause: err });
  }
}

/**
 * The table's Python functions written by hand, because they do more than forward their arguments
 * (py/api.py, py/runner.py). Every other 'host-sync' row with a Python signature is made from the
 * table by forwardersSource().
 */
export const PYTHON_HAND_WRITTEN: readonly string[] = Object.freeze(['list_files', 'save_skill', 'tokenize_pii', 'detokenize_pii', 'search_tools', 'import_skill']);

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;
/** A parameter: a name, with at most a simple default (no commas or parentheses to misread). */
const PARAMETER = /^([a-z_][a-z0-9_]*)(?:=(?:None|True|False|-?\d+|'[^'\\,()]*'))?$/;

/**
 * The Python source of the table's plain host calls: for each 'host-sync' row with a Python
 * signature and not in PYTHON_HAND_WRITTEN, `def SIGNATURE: return host_sync(HOST_METHOD, ARGS...)`
 * with its docstring from FORWARDER_DOCS (py/api.py). Written as source, it is compiled with the
 * rest of the prelude (once, into the memory snapshot), so names, positional and keyword
 * arguments and Python's own argument errors are those of a hand-written function. A row whose
 * signature is not a plain call is refused here, naming what to do.
 */
export function forwardersSource(table: readonly ApiEntry[] = SANDBOX_API): string {
  const out: string[] = [];
  for (const row of table) {
    if (row.kind !== 'host-sync' || row.python === null || PYTHON_HAND_WRITTEN.includes(row.name)) continue;
    const call = /^([a-z_][a-z0-9_]*)\((.*)\)$/.exec(row.python);
    const params = call === null || call[2] === '' ? [] : (call[2] as string).split(', ');
    const names = params.map((p) => PARAMETER.exec(p)?.[1]);
    if (call === null || call[1] !== row.name || names.some((n) => n === undefined)) {
      throw new Error(`the sandbox API table's Python signature for ${row.name} (${JSON.stringify(row.python)}) is not a plain call (names, simple defaults): write ${row.name} by hand in workers/python/py/api.py and add it to PYTHON_HAND_WRITTEN in workers/python/prelude.ts`);
    }
    if (row.hostMethod === undefined || !IDENTIFIER.test(row.hostMethod)) {
      throw new Error(`the sandbox API table gives ${row.name} no host method to forward to (${JSON.stringify(row.hostMethod)}): add hostMethod to its row in workers/kit/api-contract.ts`);
    }
    const args = names.map((n) => `, ${n as string}`).join('');
    out.push(`def ${row.python}:\n    return host_sync('${row.hostMethod}'${args})\n\n\n${row.name}.__doc__ = FORWARDER_DOCS.get('${row.name}')\n`);
  }
  return `# ---- made from the sandbox API table (workers/python/prelude.ts) ----\n${out.join('\n\n')}`;
}

/** The sandbox prelude's text: its files in order, the table's plain host calls after py/api.py. */
export function preludeSource(read: SourceReader = readPython, table: readonly ApiEntry[] = SANDBOX_API): string {
  const parts = PRELUDE_FILES.map((file) => (file === 'api.py' ? `${read(file)}\n\n${forwardersSource(table)}` : read(file)));
  return parts.join('\n');
}

/** What the snapshot's interpreter runs before its memory is taken: the preloaded list, then the imports. */
export function snapshotSource(read: SourceReader = readPython): string {
  return `${read('preloaded.py')}\n${read('snapshot.py')}`;
}
