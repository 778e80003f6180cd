// A request id used twice in one session is refused with a JSON-RPC error naming the id, and the
// first request still gets its own answer (the transport would otherwise route one answer to the
// second request and leave the first waiting forever).

import { afterEach, describe, expect, it } from 'vitest';
import type { HttpHarness } from '../fixtures/mcp/http-harness.js';
import { INITIALIZE, MCP_POST_HEADERS, rawRequest, startHttpHarness } from '../fixtures/mcp/http-harness.js';
import { within } from './helpers.js';

let harness: HttpHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** JSON-RPC messages of a response body, JSON or an SSE stream. */
function messages(body: string): { id?: unknown; result?: { structuredContent?: { result?: unknown } }; error?: { code: number; message: string } }[] {
  const trimmed = body.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) return [JSON.parse(trimmed)].flat();
  return trimmed
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)));
}

async function openSession(): Promise<Record<string, string>> {
  const init = await rawRequest(harness!.url, { method: 'POST', headers: { ...MCP_POST_HEADERS }, body: JSON.stringify(INITIALIZE) });
  expect(init.status).toBe(200);
  const headers = { ...MCP_POST_HEADERS, 'Mcp-Session-Id': String(init.headers['mcp-session-id']), 'Mcp-Protocol-Version': '2025-06-18' };
  const ack = await rawRequest(harness!.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  expect(ack.status).toBe(202);
  return headers;
}

const call = (id: number, code: string): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'execute_code', arguments: { code } } });

describe('duplicate request ids', () => {
  it('refuses a second request with an id still open, and answers the first', async () => {
    harness = await startHttpHarness();
    const headers = await openSession();
    const started = harness.executor.nextStart();
    const first = rawRequest(harness.url, { method: 'POST', headers, body: call(7, 'await sleep(300); return "first"') });
    await started;
    const second = await rawRequest(harness.url, { method: 'POST', headers, body: call(7, 'return "second"') });
    expect(second.status).toBe(400);
    expect(messages(second.body)).toEqual([{ jsonrpc: '2.0', id: 7, error: { code: -32600, message: expect.stringMatching(/request id 7 is already used/) } }]);
    const answered = await within(first, 5000, 'the first request being answered');
    expect(messages(answered.body)).toMatchObject([{ id: 7, result: { structuredContent: { result: 'first' } } }]);
    // Once answered, the id may be used again.
    const again = await rawRequest(harness.url, { method: 'POST', headers, body: call(7, 'return "again"') });
    expect(messages(again.body)).toMatchObject([{ id: 7, result: { structuredContent: { result: 'again' } } }]);
  });

  it('refuses a batch that holds one id twice', async () => {
    harness = await startHttpHarness();
    const headers = await openSession();
    const batch = `[${call(9, 'return 1')},${call(9, 'return 2')}]`;
    const refused = await rawRequest(harness.url, { method: 'POST', headers, body: batch });
    expect(refused.status).toBe(400);
    expect(messages(refused.body)[0]).toMatchObject({ id: 9, error: { code: -32600 } });
    expect(harness.executor.calls.length).toBe(0);
  });
});
