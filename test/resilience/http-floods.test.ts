// One client cannot hold the daemon's connections: bodies that never come get 408, headers that
// never end are closed, connections past the cap get 503 with Retry-After, and the daemon serves
// others again as soon as the flood goes. Loopback only, bounded counts.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Daemon, Scratch } from '../fixtures/mcp/cli.js';
import { scratch, startDaemon } from '../fixtures/mcp/cli.js';
import { rawRequest } from '../fixtures/mcp/http-harness.js';
import { openSocket, within } from './helpers.js';

const MAX_CONNECTIONS = 12;
let home: Scratch;
let daemon: Daemon;

beforeAll(async () => {
  home = scratch({
    CODE_EXEC_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
    CODE_EXEC_MAX_CONNECTIONS_PER_ADDRESS: String(MAX_CONNECTIONS),
    CODE_EXEC_BODY_TIMEOUT_SECONDS: '2',
    CODE_EXEC_HEADERS_TIMEOUT_SECONDS: '2',
  });
  daemon = await startDaemon(home.env);
}, 60_000);

afterAll(async () => {
  await daemon?.stop();
  home?.remove();
});

const post = (length: number): string =>
  `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${daemon.port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${length}\r\n\r\n`;

describe('HTTP floods', () => {
  it('a body that never comes is answered 408 within the body deadline, and the connection closed', async () => {
    const { socket, received, closed } = await openSocket(daemon.port);
    socket.write(post(1000) + '{"jsonrpc":"2.0",');
    await within(closed, 8000, 'closing the slow-body connection');
    expect(received()).toMatch(/^HTTP\/1\.1 408/);
    expect(received()).toMatch(/bodyTimeoutSeconds/);
  }, 15_000);

  it('headers that never end are cut off by the header deadline', async () => {
    const { socket, received, closed } = await openSocket(daemon.port);
    socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${daemon.port}\r\nX-Slow: `);
    await within(closed, 8000, 'closing the half-sent-headers connection');
    // Node answers 408 when it can, or just closes.
    expect(received() === '' || received().startsWith('HTTP/1.1 408')).toBe(true);
  }, 15_000);

  it('connections past the cap get 503 with Retry-After; others are served again once the flood goes', async () => {
    const flood = await Promise.all(Array.from({ length: MAX_CONNECTIONS }, () => openSocket(daemon.port)));
    // Each flood connection sends a body that never ends: busy, not idle, so it keeps its slot.
    for (const { socket } of flood) socket.write(post(1000) + '{');
    await new Promise((r) => setTimeout(r, 200));
    const refused = await rawRequest(`${daemon.base}/healthz`, {});
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(JSON.parse(refused.body)).toMatchObject({ error: expect.stringMatching(/server\.maxConnections/) });
    for (const { socket } of flood) socket.destroy();
    await Promise.all(flood.map((f) => f.closed));
    const served = await within(
      (async () => {
        for (;;) {
          const r = await rawRequest(`${daemon.base}/healthz`, {});
          if (r.status === 200) return r;
          await new Promise((res) => setTimeout(res, 50));
        }
      })(),
      5000,
      'serving /healthz after the flood',
    );
    expect(JSON.parse(served.body)).toMatchObject({ status: 'ok' });
  }, 20_000);

  it('a slow-body flood ends by itself within the body deadline', async () => {
    // Two slots of slack: the previous test's keep-alive connection may still be open.
    const flood = await Promise.all(Array.from({ length: MAX_CONNECTIONS - 2 }, () => openSocket(daemon.port)));
    for (const { socket } of flood) socket.write(post(1000) + '{');
    await within(Promise.all(flood.map((f) => f.closed)), 10_000, 'the daemon closing every slow body');
    expect(flood.map((f) => f.received().split('\r\n')[0])).toEqual(flood.map(() => 'HTTP/1.1 408 Request Timeout'));
    const client = await daemon.connect();
    const result = await client.callTool({ name: 'execute_code', arguments: { code: 'return "served"' } });
    expect(result.structuredContent).toMatchObject({ success: true, result: 'served' });
    await client.close();
  }, 20_000);
});
