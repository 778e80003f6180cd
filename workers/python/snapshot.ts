// Pyodide interpreters from a memory snapshot. A cold start (load the WebAssembly, boot CPython,
// import the modules the prelude needs) takes seconds; restoring the memory of an interpreter
// that already did it takes a fraction. The snapshot holds only that: Pyodide booted and the
// standard modules the prelude imports or preloads, and the prelude compiled (not run), every
// object frozen out of the collector's way (snapshot-maker.ts). The sandbox prelude (engine.ts) then runs on the
// restored interpreter exactly as on a cold one, so the audit hook, the recorded shared state and
// the integrity self-check are made fresh for every interpreter, never taken from the file.
//
// The file lives in the data directory under a key made from the Pyodide build and everything
// the snapshot or the prelude depends on: a new Pyodide or a changed prelude is a new file. A file
// whose checksum, key or Pyodide build does not match is deleted and made again, never trusted
// (its layout and checksum: snapshot-file.ts).
// It is made in a thread of its own (snapshot-maker.ts) that exits when done, so the interpreter
// that made it does not stay in memory.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { loadPyodide } from 'pyodide';
import type { PyodideAPI } from 'pyodide';
import { preludeSource, snapshotSource } from './prelude.js';
import { SNAPSHOT_FORMAT, discardSnapshot, readSnapshot } from './snapshot-file.js';
import { lockSnapshot, markWanted, unlockSnapshot, waitForMaker } from './snapshot-lock.js';

export { SNAPSHOT_FORMAT, discardSnapshot, readSnapshot, writeSnapshot } from './snapshot-file.js';

/**
 * What the snapshot's interpreter runs before its memory is taken (py/preloaded.py, py/snapshot.py):
 * the prelude's own imports and the preloaded modules (seconds of a cold start).
 */
export const SNAPSHOT_PY = snapshotSource();
/** The sandbox prelude, in the order it runs (engine.ts; its files: prelude.ts). */
export const PRELUDE_PY = preludeSource();
/**
 * Where the snapshot keeps the prelude compiled (compiling it is most of a restored start): a
 * name in __main__ that engine.ts takes out before anything else runs.
 */
export const PRELUDE_CODE_NAME = '_cem_prelude_code';

/** How long the thread that makes a snapshot may take before the interpreter starts cold instead, ms. */
export const MAKE_TIMEOUT_MS = 180_000;

export function pyodideFolder(): string {
  const require = createRequire(import.meta.url);
  return path.dirname(require.resolve('pyodide/package.json')) + path.sep;
}

/** loadPyodide's options shared by every interpreter: offline, no package index, no host path. */
export function loadOptions(jsglobals: object, output: (line: string) => void): Parameters<typeof loadPyodide>[0] {
  const indexURL = pyodideFolder();
  // No package index: nothing can be fetched, whatever asks.
  const lock = JSON.parse(fs.readFileSync(path.join(indexURL, 'pyodide-lock.json'), 'utf8')) as { info: unknown };
  return {
    indexURL,
    jsglobals,
    lockFileContents: JSON.stringify({ info: lock.info, packages: {} }),
    env: { HOME: '/home/pyodide' },
    args: [],
    enableRunUntilComplete: false,
    stdout: output,
    stderr: output,
  };
}

/**
 * The snapshot's file name: changes with the Pyodide package, the snapshot's code, the prelude
 * (every .py file) and the file's format (SNAPSHOT_FORMAT, which also names the maker's steps).
 */
export function snapshotFile(dir: string, prelude: string = PRELUDE_PY, snapshotCode: string = SNAPSHOT_PY): string {
  const folder = pyodideFolder();
  const pkg = JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8')) as { version: string };
  const wasm = fs.statSync(path.join(folder, 'pyodide.asm.wasm'));
  const key = createHash('sha256')
    .update(JSON.stringify([pkg.version, wasm.size, Math.round(wasm.mtimeMs), process.versions.node, SNAPSHOT_FORMAT, snapshotCode, prelude]))
    .digest('hex')
    .slice(0, 24);
  return path.join(dir, `pyodide-${pkg.version}-${key}.snap`);
}

/** Makes the snapshot in a thread of its own; resolves true once the file is written. */
export function makeSnapshot(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      worker = new Worker(new URL('./snapshot-maker.js', import.meta.url), { workerData: { file }, resourceLimits: { stackSizeMb: 16 }, stdout: true, stderr: true });
    } catch {
      resolve(false);
      return;
    }
    const timer = setTimeout(() => void worker.terminate(), MAKE_TIMEOUT_MS);
    worker.on('error', () => {});
    worker.on('exit', (code) => {
      clearTimeout(timer);
      resolve(code === 0 && fs.existsSync(file));
    });
  });
}

/**
 * A loaded interpreter: restored from the snapshot in `dir` (made first when missing or not
 * intact), or cold when there is no `dir` or the snapshot cannot be used.
 */
export async function loadInterpreter(dir: string | undefined, jsglobals: object, output: (line: string) => void): Promise<{ pyodide: PyodideAPI; fromSnapshot: boolean }> {
  const options = loadOptions(jsglobals, output);
  let file: string | undefined;
  try {
    file = dir === undefined ? undefined : snapshotFile(dir);
  } catch {
    file = undefined;
  }
  // Twice at most: a snapshot Pyodide refuses (another build) is deleted and made again once.
  for (let attempt = 0; file !== undefined && attempt < 2; attempt++) {
    const snapshot = readSnapshot(file) ?? (await obtainSnapshot(file));
    if (snapshot === undefined) break;
    try {
      const pyodide = await loadPyodide({ ...options, _loadSnapshot: snapshot });
      return { pyodide, fromSnapshot: true };
    } catch {
      discardSnapshot(file);
    }
  }
  return { pyodide: await loadPyodide(options), fromSnapshot: false };
}

/**
 * The snapshot made here, or by the maker already at work on it (the daemon's background maker,
 * another process): waited for rather than made twice (snapshot-lock.ts).
 */
async function obtainSnapshot(file: string): Promise<Uint8Array | undefined> {
  if (!lockSnapshot(file)) {
    markWanted(file);
    await waitForMaker(file, MAKE_TIMEOUT_MS);
    const made = readSnapshot(file);
    // The maker gave up (or went): make it here unless yet another one took over.
    if (made !== undefined || !lockSnapshot(file)) return made ?? readSnapshot(file);
  }
  try {
    return (await makeSnapshot(file)) ? readSnapshot(file) : undefined;
  } finally {
    unlockSnapshot(file);
  }
}
