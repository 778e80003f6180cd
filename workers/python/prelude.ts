// The sandbox prelude and the snapshot's code, read from the Python files next to this module
// (workers/python/py/*.py; `npm run build` copies them into dist/ with scripts/copy-assets.mjs).
// The prelude's plain host calls are defined from the sandbox API table (api-contract.ts): its
// rows are handed to define_forwarders() (py/api.py) at the end of the prelude, before boot().
// The text made here is what the memory snapshot's key hashes (snapshot.ts), so a change to any
// .py file or to the table's Python rows is a new snapshot.

import fs from 'node:fs';
import { SANDBOX_API } from '../sandbox/api-contract.js';
import type { ApiEntry } from '../sandbox/api-contract.js';

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

/** The table's rows Python needs, as a Python expression (a JSON text decoded by the prelude). */
export function apiTableLiteral(table: readonly ApiEntry[] = SANDBOX_API): string {
  const rows = table.filter((x) => x.python !== null).map((x) => ({ name: x.name, kind: x.kind, hostMethod: x.hostMethod ?? null, python: x.python }));
  // A JSON string literal is a valid Python string literal (same escapes).
  return `_loads(${JSON.stringify(JSON.stringify(rows))})`;
}

/** The sandbox prelude's text: its files in order, the table's plain host calls defined before boot. */
export function preludeSource(read: SourceReader = readPython, table: readonly ApiEntry[] = SANDBOX_API): string {
  const parts = PRELUDE_FILES.map((file) => (file === 'boot.py' ? `define_forwarders(${apiTableLiteral(table)}, globals())\n\n${read(file)}` : read(file)));
  return parts.join('\n');
}

/** What the snapshot's interpreter runs before its memory is taken: the preloaded list, then the imports. */
export function snapshotSource(read: SourceReader = readPython): string {
  return `${read('preloaded.py')}\n${read('snapshot.py')}`;
}
