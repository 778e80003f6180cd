// A short-lived thread that makes the Pyodide memory snapshot (snapshot.ts): a cold interpreter,
// the prelude's imports, the memory written to the data directory. It exits when done, taking
// that interpreter's memory with it. Exit code 0: the file is written. The steps here are not part
// of the snapshot's key by their text: change SNAPSHOT_FORMAT (snapshot-file.ts) with them.

import { workerData } from 'node:worker_threads';
import { loadPyodide } from 'pyodide';
import { PRELUDE_CODE_NAME, PRELUDE_PY, SNAPSHOT_PY, loadOptions, writeSnapshot } from './snapshot.js';

const { file } = workerData as { file: string };

try {
  const pyodide = await loadPyodide({ ...loadOptions(Object.freeze(Object.create(null) as object), () => {}), _makeSnapshot: true });
  pyodide.runPython(SNAPSHOT_PY);
  // Compiled, not run: the prelude runs on every interpreter, restored or cold (engine.ts).
  pyodide.globals.set('_cem_prelude_src', PRELUDE_PY);
  pyodide.runPython(`${PRELUDE_CODE_NAME} = compile(_cem_prelude_src, '<sandbox>', 'exec')\ndel _cem_prelude_src`);
  // Everything alive now goes to the collector's permanent generation, as boot() does with the
  // prelude's objects (py/boot.py): the freeze is part of the memory, so the collections of every
  // restored start scan only what was made after it (they took ~90 ms scanning this heap).
  pyodide.runPython('import gc as _cem_gc\n_cem_gc.collect()\n_cem_gc.freeze()\ndel _cem_gc');
  writeSnapshot(file, pyodide.makeMemorySnapshot());
  process.exit(0);
} catch {
  process.exit(1);
}
