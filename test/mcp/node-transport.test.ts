// The daemon's own Streamable HTTP server transport (src/mcp/http/node-transport.ts), alone
// behind a bare node:http server with the SDK's McpServer on top: every refusal the SDK's
// transport gives, the SSE framing (priming event, event ids, retry), 202 for notifications,
// one standalone GET stream, a resumption that gets an answer produced while the client was
// away, DELETE, and the SDK's own client working through it.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SessionEventStores, EventBudget, DEFAULT_EVENT_LIMITS } from '../../src/mcp/http/event-store.js';
import { NodeStreamableHttpTransport } from '../../src/mcp/http/node-transport.js';

const SESSION = 'session-under-test';
const VERSION = '2025-11-25';
const ACCEPT = 'application/json, text/event-stream';

interface Rig {
  url: string;
  transport: NodeStreamableHttpTransport;
  release: () => void;
  /** How often onsessionclosed ran. */
  closedCount: () => number;
  close(): Promise<void>;
}

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** A server whose `slow` tool answers when the test calls `release()`. */
async function start(options: { eventStore?: boolean; retry?: number; keepAliveMs?: number } = {}): Promise<Rig> {
  const events = options.eventStore === false ? undefined : new SessionEventStores(new EventBudget(1 << 20), DEFAULT_EVENT_LIMITS).create();
  let closed = 0;
  const transport = new NodeStreamableHttpTransport({ sessionId: SESSION, ...(events ? { eventStore: events } : {}), ...(options.retry === undefined ? {} : { retryInterval: options.retry }), ...(options.keepAliveMs === undefined ? {} : { keepAliveMs: options.keepAliveMs }), onsessionclosed: () => void closed++ });
  const server = new McpServer({ name: 'under-test', version: '1.0.0' });
  let release: () => void = () => undefined;
  server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  server.registerTool('slow', {}, async () => {
    await new Promise<void>((resolve) => {
      release = resolve;
    });
    return { content: [{ type: 'text', text: 'finally' }] };
  });
  await server.connect(transport);
  const httpServer = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      void transport.handleRequest(req, res, text ? (JSON.parse(text) as unknown) : undefined);
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/mcp`;
  return {
    url,
    transport,
    release: () => release(),
    closedCount: () => closed,
    async close() {
      await server.close();
      httpServer.closeAllConnections();
      await new Promise((resolve) => httpServer.close(resolve));
    },
  };
}

const initialize = (id = 1) => ({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 't', version: '1' } } });
const headers = (extra: Record<string, string> = {}) => ({ Accept: ACCEPT, 'Content-Type': 'application/json', 'mcp-session-id': SESSION, 'mcp-protocol-version': VERSION, ...extra });

async function post(url: string, body: unknown, h: Record<string, string> = headers()): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(url, { method: 'POST', headers: h, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function initialized(r: Rig): Promise<void> {
  const res = await post(r.url, initialize(), { Accept: ACCEPT, 'Content-Type': 'application/json' });
  expect(res.status).toBe(200);
  expect(res.headers.get('mcp-session-id')).toBe(SESSION);
  await post(r.url, { jsonrpc: '2.0', method: 'notifications/initialized' });
}

/** SSE events of a complete body. */
function events(text: string): { id?: string; retry?: number; data: string }[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const e: { id?: string; retry?: number; data: string } = { data: '' };
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) e.id = line.slice(4);
        else if (line.startsWith('retry: ')) e.retry = Number(line.slice(7));
        else if (line.startsWith('data: ')) e.data += line.slice(6);
      }
      return e;
    });
}

describe('NodeStreamableHttpTransport', () => {
  it('answers initialize and a call as SSE: a priming event with id and retry, then the answer with an id', async () => {
    rig = await start({ retry: 1234 });
    const init = await post(rig.url, initialize(), { Accept: ACCEPT, 'Content-Type': 'application/json' });
    expect(init.headers.get('content-type')).toBe('text/event-stream');
    expect(init.headers.get('cache-control')).toBe('no-cache, no-transform');
    const [priming, answer] = events(init.text);
    expect(priming).toMatchObject({ retry: 1234, data: '' });
    expect(priming!.id).toBeTruthy();
    expect(JSON.parse(answer!.data)).toMatchObject({ id: 1, result: { protocolVersion: VERSION, serverInfo: { name: 'under-test' } } });
    expect(answer!.id).toBeTruthy();
    const notified = await post(rig.url, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(notified.status).toBe(202);
    expect(notified.text).toBe('');
    const call = await post(rig.url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } });
    const last = events(call.text).at(-1)!;
    expect(JSON.parse(last.data)).toEqual({ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'hi' }] } });
  });

  it('answers a batch of two requests on one stream and ends it after both', async () => {
    rig = await start();
    await initialized(rig);
    const res = await post(rig.url, [
      { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'echo', arguments: { text: 'one' } } },
      { jsonrpc: '2.0', id: 'b', method: 'ping' },
    ]);
    const answers = events(res.text).filter((e) => e.data !== '').map((e) => JSON.parse(e.data) as { id: string });
    expect(answers.map((a) => a.id).sort()).toEqual(['a', 'b']);
  });

  it('gives the SDK transport\'s refusals: Accept, Content-Type, batch size, JSON-RPC shape, session, version, re-initialize', async () => {
    rig = await start();
    const before = await post(rig.url, { jsonrpc: '2.0', id: 1, method: 'ping' });
    expect([before.status, JSON.parse(before.text).error.message]).toEqual([400, 'Bad Request: Server not initialized']);
    await initialized(rig);
    const cases: [unknown, Record<string, string>, number, string][] = [
      [{ jsonrpc: '2.0', id: 1, method: 'ping' }, headers({ Accept: 'application/json' }), 406, 'Not Acceptable'],
      [{ jsonrpc: '2.0', id: 1, method: 'ping' }, headers({ 'Content-Type': 'text/plain' }), 415, 'Unsupported Media Type'],
      [Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })), headers(), 400, 'Batch must not exceed 100'],
      [{ jsonrpc: '1.0', id: 1, method: 'ping' }, headers(), 400, 'Invalid JSON-RPC message'],
      [{ jsonrpc: '2.0', id: 1, method: 'ping' }, headers({ 'mcp-session-id': 'someone-else' }), 404, 'Session not found'],
      [{ jsonrpc: '2.0', id: 1, method: 'ping' }, headers({ 'mcp-protocol-version': '1999-01-01' }), 400, 'Unsupported protocol version: 1999-01-01'],
      [initialize(9), headers(), 400, 'Server already initialized'],
    ];
    for (const [body, h, status, message] of cases) {
      const res = await post(rig.url, body, h);
      expect(res.status, message).toBe(status);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(JSON.parse(res.text)).toMatchObject({ jsonrpc: '2.0', id: null, error: { message: expect.stringContaining(message) } });
    }
    const noSession = { ...headers() } as Record<string, string>;
    delete noSession['mcp-session-id'];
    expect((await post(rig.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, noSession)).status).toBe(400);
    // and it still serves
    expect(events((await post(rig.url, { jsonrpc: '2.0', id: 5, method: 'ping' })).text).at(-1)!.data).toContain('"id":5');
  });

  it('allows one standalone GET stream: a second is refused with 409, and GET needs text/event-stream', async () => {
    rig = await start();
    await initialized(rig);
    const controller = new AbortController();
    const first = await fetch(rig.url, { headers: headers({ Accept: 'text/event-stream' }), signal: controller.signal });
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('text/event-stream');
    const second = await fetch(rig.url, { headers: headers({ Accept: 'text/event-stream' }) });
    expect(second.status).toBe(409);
    const wrong = await fetch(rig.url, { headers: headers({ Accept: 'application/json' }) });
    expect(wrong.status).toBe(406);
    controller.abort();
    await first.body?.cancel().catch(() => undefined);
    // once the first one is gone, a new one is allowed
    await expect
      .poll(async () => {
        const again = await fetch(rig!.url, { headers: headers({ Accept: 'text/event-stream' }), signal: AbortSignal.timeout(2000) });
        void again.body?.cancel().catch(() => undefined);
        return again.status;
      })
      .toBe(200);
  });

  it('keeps an answer produced while the client was away and replays it on GET with Last-Event-ID', async () => {
    rig = await start();
    await initialized(rig);
    const { id: primingId, drop } = await new Promise<{ id: string; drop: () => void }>((resolve, reject) => {
      const req = http.request(rig!.url, { method: 'POST', headers: headers() }, (res) => {
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk: string) => {
          buffer += chunk;
          const first = events(buffer)[0];
          if (first?.id) resolve({ id: first.id, drop: () => req.destroy() });
        });
        res.on('error', () => undefined);
      });
      req.on('error', reject);
      req.end(JSON.stringify({ jsonrpc: '2.0', id: 77, method: 'tools/call', params: { name: 'slow', arguments: {} } }));
    });
    drop();
    await new Promise((resolve) => setTimeout(resolve, 50));
    rig.release();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const resumed = await fetch(rig.url, { headers: headers({ Accept: 'text/event-stream', 'last-event-id': primingId }), signal: AbortSignal.timeout(5000) });
    expect(resumed.status).toBe(200);
    const reader = resumed.body!.getReader();
    let text = '';
    while (!text.includes('"id":77')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    await reader.cancel();
    expect(JSON.parse(events(text).find((e) => e.data.includes('"id":77'))!.data)).toMatchObject({ id: 77, result: { content: [{ text: 'finally' }] } });
    const unknown = await fetch(rig.url, { headers: headers({ Accept: 'text/event-stream', 'last-event-id': 'not-an-event' }) });
    expect(unknown.status).toBe(400);
  });

  it('without an event store sends no priming event and no ids', async () => {
    rig = await start({ eventStore: false });
    const init = await post(rig.url, initialize(), { Accept: ACCEPT, 'Content-Type': 'application/json' });
    const all = events(init.text);
    expect(all).toHaveLength(1);
    expect(all[0]!.id).toBeUndefined();
  });

  it('DELETE ends the session: later requests get 404', async () => {
    rig = await start();
    await initialized(rig);
    const del = await fetch(rig.url, { method: 'DELETE', headers: headers() });
    expect(del.status).toBe(200);
    expect(rig.closedCount()).toBe(1);
    const after = await post(rig.url, { jsonrpc: '2.0', id: 3, method: 'ping' });
    expect(after.status).toBe(404);
  });

  it('works with the SDK client, streaming included', async () => {
    rig = await start();
    const client = new Client({ name: 'sdk-client', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(rig.url)));
    const result = await client.callTool({ name: 'echo', arguments: { text: 'through the SDK' } });
    expect(result.content).toEqual([{ type: 'text', text: 'through the SDK' }]);
    await expect(client.callTool({ name: 'echo', arguments: { text: 42 } })).resolves.toMatchObject({ isError: true });
    await client.close();
  });
});
