// How the stdio bridge carries one stateless (2026-07-28) request to the daemon: a POST of its
// own with the headers the revision's HTTP binding asks for, answered with JSON or with an SSE
// stream of the request's notifications that the answer ends (the frames stateless-binding.ts
// writes; the SSE rules this needs are followed in full: events end with a blank line, data lines
// joined, comments skipped). A daemon that refuses connections or is still starting is retried
// (failures.ts); a client that cancels the request aborts the POST, which cancels the call.
// Every request the bridge sends goes this way: it holds no session with the daemon.

import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONRPCMessage, JSONRPCNotification, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { META_PROTOCOL_VERSION, STATELESS_REVISION } from '../router/revision.js';
import { retrying } from './failures.js';

export interface StatelessTarget {
  url: URL;
  token: string | undefined;
  windowMs: number;
  stopped: () => boolean;
}

/** The daemon's answer to `request` (under the client's id); its notifications go to `onNotification` first. */
export async function postStateless(target: StatelessTarget, request: JSONRPCRequest, onNotification: (message: JSONRPCNotification) => void, signal: AbortSignal): Promise<JSONRPCMessage> {
  const params = (request.params ?? {}) as Record<string, unknown>;
  const version = request.params?._meta?.[META_PROTOCOL_VERSION];
  const name = request.method === 'tools/call' ? params['name'] : request.method === 'resources/read' ? params['uri'] : undefined;
  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    // Without a version in _meta the daemon says what is missing (the same answer stdio gives).
    'MCP-Protocol-Version': typeof version === 'string' ? version : STATELESS_REVISION,
    'Mcp-Method': request.method,
    ...(typeof name === 'string' && { 'Mcp-Name': name }),
    ...(target.token && { Authorization: `Bearer ${target.token}` }),
  };
  const res = await retrying(async () => {
    const sent = await fetch(target.url, { method: 'POST', headers, body: JSON.stringify(request), signal });
    // 503: still starting (retried); 401 and 403: the token, which the client is told to check.
    if (sent.status === 503 || sent.status === 401 || sent.status === 403) throw new StreamableHTTPError(sent.status, await sent.text());
    return sent;
  }, target.windowMs, target.stopped);
  let answer: JSONRPCMessage | undefined;
  if (res.body && res.headers.get('content-type')?.includes('text/event-stream')) {
    answer = await readStream(res.body, onNotification);
  } else {
    const text = await res.text();
    try {
      answer = JSON.parse(text) as JSONRPCMessage;
    } catch {
      answer = undefined;
    }
    if (!answer || !('result' in answer || 'error' in answer)) throw new StreamableHTTPError(res.status, text);
  }
  return { ...answer, id: request.id } as JSONRPCMessage;
}

/** Reads an answer sent as an SSE stream: notifications to `onNotification` as they arrive, the answer returned. */
export async function readStream(body: ReadableStream<Uint8Array>, onNotification: (message: JSONRPCNotification) => void): Promise<JSONRPCMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  let answer: JSONRPCMessage | undefined;
  const take = (event: string): void => {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
      .join('\n');
    if (data.trim() === '') return;
    const message = JSON.parse(data) as JSONRPCMessage;
    if ('result' in message || 'error' in message) answer = message;
    else if ('method' in message && !('id' in message)) onNotification(message);
  };
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    const events = buffer.split(/\r?\n\r?\n/);
    buffer = events.pop() ?? '';
    for (const event of events) take(event);
    if (answer) break;
  }
  if (!answer && buffer.trim() !== '') take(buffer);
  if (!answer) throw new Error('the stream ended before the answer');
  return answer;
}
