// The JavaScript layer of the Python sandbox holds on its own: in a worker thread where the engine
// has started, the host powers Emscripten's glue keeps references to (processes, files, sockets,
// code generation) are inert, and no C module that gives raw memory access can be loaded. This is
// what stands if Python code ever gets around the Python-level policy.

import { existsSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PYTHON_START_MS } from './helpers.js';

const dist = path.resolve(import.meta.dirname, '../../dist/workers/python/engine.js');

// Runs in the worker thread (CommonJS, eval): takes Node's modules (the engine removes the global
// require), starts the engine, then tries each host power.
const probe = `
const { parentPort, workerData } = require('node:worker_threads');
const cp = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const attempt = (fn) => { try { const v = fn(); return 'ran: ' + String(v).slice(0, 40); } catch (e) { return 'refused: ' + e.message; } };
(async () => {
  await import(workerData.ses);
  const { startPython } = await import(workerData.engine);
  const noop = () => {};
  const py = await startPython({ sync: () => '{}', async: async () => '{}', emit: noop, done: noop }, noop);
  const out = {
    spawnSync: attempt(() => cp.spawnSync('touch', [workerData.marker]).status),
    execSync: attempt(() => cp.execSync('touch ' + workerData.marker)),
    readFile: attempt(() => fs.readFileSync('/etc/hostname', 'utf8')),
    writeFile: attempt(() => fs.writeFileSync(workerData.marker, 'x')),
    connect: attempt(() => net.connect(workerData.port, '127.0.0.1')),
    eval: attempt(() => globalThis.eval('1 + 1')),
    Function: attempt(() => new globalThis.Function('return 1')()),
    constructorWalk: attempt(() => (() => 0).constructor('return 1')()),
    python: py.pyodide.runPython('1 + 1'),
    system: attempt(() => py.pyodide.runPython("import posix\\nposix.system('touch " + workerData.marker + "')")),
    ctypes: py.pyodide.runPython("import _imp, importlib.machinery as m\\nstr(dir(_imp.create_builtin(m.ModuleSpec('_ctypes', None, origin='built-in'))))"),
  };
  parentPort.postMessage(out);
})().catch((e) => parentPort.postMessage({ error: String(e && e.stack || e) }));
`;

let results: Record<string, unknown> = {};
let marker = '';
let connections = 0;
const server = createServer((s) => {
  connections++;
  s.destroy();
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  marker = path.join(mkdtempSync(path.join(tmpdir(), 'cem-host-powers-')), 'marker');
  const require = createRequire(import.meta.url);
  const worker = new Worker(probe, {
    eval: true,
    workerData: { ses: pathToFileURL(require.resolve('ses')).href, engine: pathToFileURL(dist).href, marker, port },
  });
  results = await new Promise<Record<string, unknown>>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await worker.terminate();
}, PYTHON_START_MS);

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('the Python worker thread after start-up', () => {
  it('started the engine', () => {
    expect(results.error).toBeUndefined();
    expect(results.python).toBe(2);
  });

  it('cannot start processes: system() gets a refusal, no command runs', () => {
    expect(results.spawnSync).toBe('ran: 127');
    expect(results.execSync).toMatch(/^refused/);
    expect(results.system).toMatch(/^refused.*os\.system is not allowed/s);
    expect(existsSync(marker)).toBe(false);
  });

  it('cannot touch host files or open sockets', async () => {
    expect(results.readFile).toMatch(/^refused/);
    expect(results.writeFile).toMatch(/^refused/);
    expect(results.connect).toMatch(/^refused/);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(connections).toBe(0);
  });

  it('cannot make code from strings by any route', () => {
    expect(results.eval).toMatch(/^refused/);
    expect(results.Function).toMatch(/^refused/);
    expect(results.constructorWalk).toMatch(/^refused/);
  });

  it('hands out an empty module for _ctypes', () => {
    expect(results.ctypes).toBe("['__doc__', '__loader__', '__name__', '__package__', '__spec__']");
  });
});
