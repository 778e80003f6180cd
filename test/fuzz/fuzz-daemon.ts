// The daemon the fuzz suites throw random input at: the real coordinator (real JavaScript sandbox,
// real skills, PII vaults, an upstream-less catalog) behind the real HTTP daemon, two token agents
// (the fuzzer and a bystander), and every log record kept so a suite can fail on an error-level
// line. Raw HTTP helpers for both revisions (2025-11-25 sessions, stateless 2026-07-28 `_meta`).

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect } from 'vitest';
import { startCoordinator } from '../../src/daemon.js';
import type { Coordinator } from '../../src/daemon.js';
import { HttpDaemon } from '../../src/mcp/http/http-daemon.js';
import { FULL_PERMISSIONS, testConfig } from '../fixtures/config.js';
import { captureLogger } from '../upstream/helpers.js';
import type { LogRecord } from '../upstream/helpers.js';

export const FUZZER = 'fuzz-agent-token-0123456789abcdef';
export const BYSTANDER = 'bystander-token-0123456789abcdef';
export const STATELESS = '2026-07-28';
/** Keys that reach prototypes when code indexes plain objects with them. */
export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];
const PINO_ERROR = 50;

export interface FuzzDaemon {
  url: string;
  records: LogRecord[];
  fuzzer: Client;
  bystander: Client;
  close(): Promise<void>;
}

export async function startFuzzDaemon(): Promise<FuzzDaemon> {
  const base = testConfig();
  const config = {
    ...base,
    agents: [
      { name: 'fuzzer', token: FUZZER, workspace: 'fuzzer', permissions: FULL_PERMISSIONS },
      { name: 'bystander', token: BYSTANDER, workspace: 'bystander', permissions: FULL_PERMISSIONS },
    ],
  };
  const { logger, records } = captureLogger();
  const coordinator: Coordinator = await startCoordinator(config, logger, { watch: false });
  const daemon = new HttpDaemon(coordinator.services);
  const { url } = await daemon.listen();
  const connect = async (token: string): Promise<Client> => {
    const client = new SdkClient({ name: 'fuzz', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    return client;
  };
  const fuzzer = await connect(FUZZER);
  const bystander = await connect(BYSTANDER);
  return {
    url,
    records,
    fuzzer,
    bystander,
    async close() {
      await Promise.allSettled([fuzzer.close(), bystander.close()]);
      await daemon.shutdown(0);
      await coordinator.close();
    },
  };
}

/** A raw POST to /mcp; the body is sent as given (it may not even be JSON). */
export async function post(url: string, body: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${FUZZER}`, ...headers },
    body,
  });
  return { status: res.status, text: await res.text() };
}

/** Error-level log lines written since `from` (a record index). */
export function errorsSince(records: readonly LogRecord[], from: number): LogRecord[] {
  return records.slice(from).filter((r) => r.level >= PINO_ERROR);
}

/** The bystander's trivial call still answers, correctly. */
export async function bystanderServed(d: FuzzDaemon): Promise<void> {
  const r = await d.bystander.callTool({ name: 'execute_code', arguments: { code: 'return 6 * 7', language: 'javascript' } });
  expect((r.structuredContent as { result?: unknown } | undefined)?.result).toBe(42);
}

/** One fuzz daemon for the calling suite: started before its tests, closed after; call the getter in a test. */
export function fuzzDaemonForSuite(): () => FuzzDaemon {
  let d: FuzzDaemon | undefined;
  beforeAll(async () => {
    d = await startFuzzDaemon();
  }, 60_000);
  afterAll(async () => {
    await d?.close();
  });
  return () => {
    if (d === undefined) throw new Error('the fuzz daemon did not start');
    return d;
  };
}
