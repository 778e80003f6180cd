// The pieces of a stateless answer's SSE stream: which Accept headers take a stream, and the
// reader the stdio bridge relays it with (notifications in order, the answer last, whatever the
// chunking).

import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { acceptsEventStream } from '../../src/mcp/http/stateless-binding.js';
import { readStream } from '../../src/mcp/bridge/stateless-post.js';
import { sseEvent } from '../../src/mcp/http/sse-stream.js';

const withAccept = (accept: string | undefined): IncomingMessage => ({ headers: accept === undefined ? {} : { accept } }) as IncomingMessage;

function body(text: string, chunk: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + chunk));
      at += chunk;
    },
  });
}

describe('acceptsEventStream', () => {
  it('takes a stream only when the Accept header lists text/event-stream with a q above 0', () => {
    expect(acceptsEventStream(withAccept('application/json, text/event-stream'))).toBe(true);
    expect(acceptsEventStream(withAccept('text/event-stream;q=0.5, application/json'))).toBe(true);
    expect(acceptsEventStream(withAccept('application/json'))).toBe(false);
    expect(acceptsEventStream(withAccept('application/json, text/event-stream;q=0'))).toBe(false);
    expect(acceptsEventStream(withAccept(undefined))).toBe(false);
  });
});

describe('readStream', () => {
  const progress = (n: number) => ({ jsonrpc: '2.0' as const, method: 'notifications/progress', params: { progressToken: 't', progress: n, message: `line ${n}` } });
  const answer = { jsonrpc: '2.0' as const, id: 'x', result: { resultType: 'complete', content: [] } };
  const text = `: keepalive\n\n${sseEvent(progress(1))}${sseEvent(progress(2))}${sseEvent(answer)}`;

  it.each([1, 7, 4096])('relays notifications in order and returns the answer (chunks of %i bytes)', async (chunk) => {
    const notes: unknown[] = [];
    expect(await readStream(body(text, chunk), (n) => notes.push(n))).toEqual(answer);
    expect(notes).toEqual([progress(1), progress(2)]);
  });

  it('fails clearly when the stream ends before the answer', async () => {
    await expect(readStream(body(sseEvent(progress(1)), 64), () => undefined)).rejects.toThrow(/ended before the answer/);
  });
});
