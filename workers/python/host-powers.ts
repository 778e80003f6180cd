// Makes Node's host powers inert inside a Python worker thread, after Pyodide has loaded.
// Emscripten's Node glue keeps direct references to them: `system()` spawns a host shell through
// child_process, `dlopen()` of a name missing from the virtual file system reads the host file
// through fs, NODEFS mounts host folders, and its socket layer opens real connections. Python
// code must never reach these, so they are disabled at the source: each worker thread has its
// own instances of Node's built-in modules, so this changes nothing outside this thread.

import childProcess from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';

type Mutable = Record<string, unknown>;

function refusal(what: string): Error {
  const err = new Error(`${what} is not available in the Python sandbox`);
  err.name = 'PermissionError';
  return err;
}

function replaceFunctions(target: Mutable, what: string, except: ReadonlySet<string> = new Set()): void {
  for (const key of Object.getOwnPropertyNames(target)) {
    if (except.has(key)) continue;
    const desc = Object.getOwnPropertyDescriptor(target, key);
    if (!desc || typeof desc.value !== 'function' || !desc.configurable && !desc.writable) continue;
    const name = `${what}.${key}`;
    Object.defineProperty(target, key, {
      value: () => {
        throw refusal(name);
      },
      writable: false,
      configurable: false,
      enumerable: desc.enumerable,
    });
  }
}

function refuse(target: Mutable, what: string, keys: readonly string[]): void {
  for (const key of keys) {
    if (typeof target[key] !== 'function') continue;
    const name = `${what}.${key}`;
    Object.defineProperty(target, key, {
      value: () => {
        throw refusal(name);
      },
      writable: false,
      configurable: false,
    });
  }
}

/** Disables host processes, host files and the network for everything in this thread. */
export function disableHostPowers(): void {
  // Emscripten's system() reads `status` from spawnSync's result: a failed-but-well-formed result
  // makes os.system() return 127 instead of throwing through WebAssembly frames.
  const spawnSyncRefused = (): unknown => ({ pid: 0, status: 127, signal: null, output: [], stdout: null, stderr: null, error: refusal('child_process.spawnSync') });
  replaceFunctions(childProcess as unknown as Mutable, 'child_process', new Set(['spawnSync']));
  Object.defineProperty(childProcess, 'spawnSync', { value: spawnSyncRefused, writable: false, configurable: false });

  // fs: the thread never touches the host file system again once Pyodide is loaded.
  replaceFunctions(fs as unknown as Mutable, 'fs');
  replaceFunctions(fs.promises as unknown as Mutable, 'fs.promises');

  // Network: every TCP/TLS client goes through net.Socket.prototype.connect, servers through
  // listen, UDP through dgram sockets. The classes stay (Node's own stdio may build sockets).
  refuse(net as unknown as Mutable, 'net', ['connect', 'createConnection', 'createServer']);
  refuse(net.Socket.prototype as unknown as Mutable, 'net.Socket', ['connect']);
  refuse(net.Server.prototype as unknown as Mutable, 'net.Server', ['listen']);
  refuse(tls as unknown as Mutable, 'tls', ['connect', 'createServer', 'createSecureContext']);
  refuse(dgram as unknown as Mutable, 'dgram', ['createSocket']);
  refuse(dgram.Socket.prototype as unknown as Mutable, 'dgram.Socket', ['bind', 'connect', 'send']);
  for (const [mod, name] of [[http, 'http'], [https, 'https']] as const) {
    refuse(mod as unknown as Mutable, name, ['request', 'get', 'createServer']);
  }

  for (const name of ['fetch', 'WebSocket', 'EventSource', 'XMLHttpRequest', 'require'] as const) {
    if (name in globalThis) Reflect.deleteProperty(globalThis, name);
  }

  // This thread writes nothing to the daemon's stderr (pino JSON lines): Pyodide prints multi-line
  // fatal-error reports with host paths through the console.
  const quiet = Reflect.get(globalThis, 'console') as unknown as Record<string, unknown> | undefined;
  if (quiet) {
    for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace', 'dir', 'table']) {
      if (typeof quiet[method] === 'function') quiet[method] = () => {};
    }
  }
}

/**
 * After lockdown() (which makes Function constructors reached through prototypes throw): no
 * JavaScript code from strings at all. Emscripten's emscripten_run_script() calls the global eval.
 */
export function disableCodeGeneration(): void {
  const noEval = (): never => {
    throw refusal('eval');
  };
  // A stand-in with the real prototype, so `x instanceof Function` (Pyodide uses it) still works.
  const NoFunction = function Function(): never {
    throw refusal('Function');
  };
  Object.defineProperty(NoFunction, 'prototype', { value: Object.getPrototypeOf(noEval) as object, writable: false });
  Object.defineProperty(globalThis, 'eval', { value: noEval, writable: false, configurable: false });
  Object.defineProperty(globalThis, 'Function', { value: NoFunction, writable: false, configurable: false });
}
