// Shared pieces of the upstream tests: launch configs for the real MCP servers installed as
// devDependencies (run as `node <entry>`, so PATH and npx do not matter), a logger whose records
// the test can wait on, and a bounded poll.
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { expect } from 'vitest';
import { UpstreamError } from '../../src/upstream/index.js';
import type { McpServerConfig } from '../../src/config/config-types.js';
import type { Logger } from '../../src/util/logger.js';

const require = createRequire(import.meta.url);

/** The JS file a package's bin points at. */
export function binEntry(pkg: string): string {
  const manifestPath = require.resolve(`${pkg}/package.json`);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { bin: string | Record<string, string> };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin)[0];
  if (bin === undefined) throw new Error(`${pkg} has no bin`);
  return join(dirname(manifestPath), bin);
}

export function everythingConfig(): McpServerConfig {
  return { command: process.execPath, args: [binEntry('@modelcontextprotocol/server-everything'), 'stdio'] };
}

export function filesystemConfig(root: string): McpServerConfig {
  return { command: process.execPath, args: [binEntry('@modelcontextprotocol/server-filesystem'), root] };
}

export function memoryConfig(file: string): McpServerConfig {
  return { command: process.execPath, args: [binEntry('@modelcontextprotocol/server-memory')], env: { MEMORY_FILE_PATH: file } };
}

export function dynamicConfig(): McpServerConfig {
  const fixture = fileURLToPath(new URL('../fixtures/upstream/dynamic-server.mjs', import.meta.url));
  return { command: process.execPath, args: [fixture] };
}

export interface LogRecord {
  level: number;
  code?: string;
  server?: string;
  msg?: string;
  [key: string]: unknown;
}

/** A debug-level logger whose records are kept and announced as they are written (synchronously). */
export function captureLogger(): { logger: Logger; records: LogRecord[]; events: EventEmitter } {
  const records: LogRecord[] = [];
  const events = new EventEmitter();
  const stream = {
    write(line: string): void {
      const record = JSON.parse(line) as LogRecord;
      records.push(record);
      events.emit('record', record);
    },
  };
  return { logger: pino({ level: 'debug' }, stream), records, events };
}

/** Resolves with the first record matching `match`, written now or later; rejects after `timeoutMs`. */
export function nextRecord(
  capture: { records: LogRecord[]; events: EventEmitter },
  match: (record: LogRecord) => boolean,
  timeoutMs = 20_000,
): Promise<LogRecord> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      capture.events.off('record', onRecord);
      reject(new Error(`no matching log record within ${timeoutMs} ms`));
    }, timeoutMs);
    const onRecord = (record: LogRecord): void => {
      if (!match(record)) return;
      clearTimeout(timer);
      capture.events.off('record', onRecord);
      resolve(record);
    };
    capture.events.on('record', onRecord);
  });
}

/** Polls `check` until it returns a value other than undefined/false; rejects after `timeoutMs`. */
export async function waitFor<T>(check: () => T | undefined | false, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Whether a process with this pid is alive. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The UpstreamError a promise rejects with (fails the test if it resolves or throws something else). */
export async function rejection(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(UpstreamError);
    return error as UpstreamError;
  }
  throw new Error('expected the call to fail');
}
