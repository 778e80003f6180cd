// Streamable HTTP resumability, with a raw HTTP client that does what a client on a flaky
// network does: a long execute_code streams over SSE, the connection drops mid-call, and the
// client reconnects with GET + Last-Event-ID. The call was not cancelled and its answer arrives.
// Events carry ids, streams carry `retry`, and one session cannot replay another's events.

import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpHarness } from '../fixtures/mcp/http-harness.js';
import type { HttpHarness } from '../fixtures/mcp/http-harness.js';

let h: HttpHarness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
});

interface SseEvent {
  id?: string;
  retry?: number;
  data: string;
}

/** A POST or GET whose SSE events are handed over as they come; `drop()` cuts the connection. */
function open(url: string, method: 'POST' | 'GET', headers: Record<string, string>, body?: unknown) {
  const events: SseEvent[] = [];
  let notify: () => void = () => undefined;
  let req!: http.ClientRequest;
  const response = new Promise<http.IncomingMessage>((resolve, reject) => {
    req = http.request(url, { method, headers: { Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json', ...headers } }, resolve);
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
  void response.then((res) => {
    let buffer = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        const e: SseEvent = { data: '' };
        for (const line of block.split('\n')) {
          if (line.startsWith('id: ')) e.id = line.slice(4);
          else if (line.startsWith('retry: ')) e.retry = Number(line.slice(7));
          else if (line.startsWith('data: ')) e.data += line.slice(6);
        }
        events.push(e);
        notify();
      }
    });
    res.on('error', () => undefined);
  });
  return {
    response,
    events,
    async until(test: (e: SseEvent) => boolean, ms = 10_000): Promise<SseEvent> {
      const deadline = Date.now() + ms;
      for (;;) {
        const found = events.find(test);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no such event within ${ms} ms; got ${JSON.stringify(events)}`);
        await new Promise<void>((resolve) => {
          notify = resolve;
          setTimeout(resolve, 50);
        });
      }
    },
    drop(): void {
      req.destroy();
    },
  };
}

async function initialize(url: string): Promise<string> {
  const init = open(url, 'POST', {}, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  const res = await init.response;
  await init.until((e) => e.data.includes('"result"'));
  const session = res.headers['mcp-session-id'] as string;
  const note = open(url, 'POST', { 'Mcp-Session-Id': session, 'Mcp-Protocol-Version': '2025-11-25' }, { jsonrpc: '2.0', method: 'notifications/initialized' });
  await note.response;
  return session;
}

const headersOf = (session: string): Record<string, string> => ({ 'Mcp-Session-Id': session, 'Mcp-Protocol-Version': '2025-11-25' });

describe('resumable streams', () => {
  it('a call survives its dropped connection: the client reconnects with Last-Event-ID and gets the answer', async () => {
    h = await startHttpHarness();
    const session = await initialize(h.url);
    const started = h.executor.nextStart();
    const call = open(h.url, 'POST', headersOf(session), {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'execute_code', arguments: { code: 'await sleep(800); return "finished after the drop"' }, _meta: { progressToken: 'p7' } },
    });
    // The stream opens with a priming event: an id to resume from and how long to wait.
    const priming = await call.until((e) => e.id !== undefined);
    expect(priming.retry).toBeGreaterThan(0);
    await started;
    call.drop();
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    // The call was not cancelled: its answer waits in the session's event store.
    const resumed = open(h.url, 'GET', { ...headersOf(session), 'Last-Event-ID': priming.id as string });
    expect((await resumed.response).statusCode).toBe(200);
    const answer = await resumed.until((e) => e.data.includes('"id":7'));
    expect(answer.id).toBeDefined();
    expect(JSON.parse(answer.data)).toMatchObject({ id: 7, result: { structuredContent: { success: true, result: 'finished after the drop' } } });
    resumed.drop();
  });

  it('an unknown Last-Event-ID is refused clearly, and one session cannot replay another session\'s events', async () => {
    h = await startHttpHarness();
    const alice = await initialize(h.url);
    const mallory = await initialize(h.url);
    const call = open(h.url, 'POST', headersOf(alice), { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'execute_code', arguments: { code: 'return "alice secret"' } } });
    const answer = await call.until((e) => e.data.includes('alice secret'));
    const primed = call.events.find((e) => e.id !== undefined) as SseEvent;
    expect(primed.id).toBeDefined();
    // Mallory presents Alice's event ids on her own session: nothing of Alice's comes back.
    for (const id of [primed.id as string, answer.id as string]) {
      const stolen = open(h.url, 'GET', { ...headersOf(mallory), 'Last-Event-ID': id });
      const res = await stolen.response;
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(stolen.events.some((e) => e.data.includes('alice secret'))).toBe(false);
      stolen.drop();
    }
    const unknown = open(h.url, 'GET', { ...headersOf(alice), 'Last-Event-ID': 'no-such-stream.1' });
    expect((await unknown.response).statusCode).toBe(400);
    unknown.drop();
  });
});
