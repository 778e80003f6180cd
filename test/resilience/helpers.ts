// Shared pieces of the resilience suite: a bystander that times its calls, raw sockets for
// floods, and a percentile helper. The daemon itself comes from test/fixtures/mcp/cli.ts.

import { connect } from 'node:net';
import type { Socket } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

export interface Timings {
  healthz: number[];
  calls: number[];
  /** When each call started (Date.now()), index for index with `calls`. */
  startedAt: number[];
  failures: string[];
}

/** Runs until `stop` resolves: a trivial execute_code and a GET /healthz, one after the other, timed. */
export async function bystander(client: Client, base: string, stop: Promise<unknown>): Promise<Timings> {
  const timings: Timings = { healthz: [], calls: [], startedAt: [], failures: [] };
  let stopped = false;
  void stop.then(() => (stopped = true));
  while (!stopped) {
    let t = performance.now();
    const health = await fetch(`${base}/healthz`).catch((e: unknown) => e as Error);
    timings.healthz.push(performance.now() - t);
    if (health instanceof Error || health.status !== 200) timings.failures.push(`healthz: ${health instanceof Error ? health.message : health.status}`);
    else await health.arrayBuffer();
    t = performance.now();
    timings.startedAt.push(Date.now());
    const result = await client.callTool({ name: 'execute_code', arguments: { code: 'return 1 + 1' } });
    timings.calls.push(performance.now() - t);
    if ((result.structuredContent as { result?: unknown } | undefined)?.result !== 2) timings.failures.push(`call: ${JSON.stringify(result).slice(0, 200)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return timings;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

/** A TCP connection to the daemon, resolved once connected; `received` collects what comes back. */
export function openSocket(port: number): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('error', () => undefined);
    socket.once('connect', () => resolve({ socket, received: () => data, closed }));
    socket.once('error', reject);
  });
}

/** Resolves with `promise`'s value, or rejects when `ms` passes first. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
    }),
  ]);
}
