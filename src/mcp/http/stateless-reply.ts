// The HTTP answer to one stateless (2026-07-28) request. Notifications related to the request
// (execute_code's progress and output lines, log messages the request asked for with
// _meta["io.modelcontextprotocol/logLevel"]) travel on the POST's own response as an SSE stream,
// before the result, which ends it. The stream opens with the first notification, so a request
// that has none is answered with plain JSON; a client whose Accept header does not take
// text/event-stream always gets plain JSON and no notifications (there is nowhere else to put them).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEFAULT_SSE_KEEP_ALIVE_MS } from '@modelcontextprotocol/sdk/server/sseKeepAlive.js';
import type { JSONRPCMessage, JSONRPCNotification } from '@modelcontextprotocol/sdk/types.js';
import { sendJson } from './request-guards.js';
import { SseStream, sseEvent } from './sse-stream.js';

/** Whether the client's Accept header takes an SSE stream (media ranges, parameters and q=0 honoured). */
export function acceptsEventStream(req: IncomingMessage): boolean {
  const accept = req.headers.accept;
  if (accept === undefined) return false;
  return accept.split(',').some((range) => {
    const [type, ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    if (type !== 'text/event-stream') return false;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

export class StatelessReply {
  readonly #res: ServerResponse;
  readonly #streams: boolean;
  #stream: SseStream | undefined;

  constructor(req: IncomingMessage, res: ServerResponse) {
    this.#res = res;
    this.#streams = acceptsEventStream(req);
  }

  /** Where the request's notifications go; undefined when the client takes JSON only. */
  get notify(): ((notification: JSONRPCNotification) => void) | undefined {
    return this.#streams ? (notification) => this.#send(notification) : undefined;
  }

  /** The final answer: the last event of an open stream, or a JSON body. */
  finish(status: number, body: unknown): void {
    if (this.#stream) this.#stream.end(sseEvent(body as JSONRPCMessage));
    else sendJson(this.#res, status, body, { 'Cache-Control': 'no-store' });
  }

  #send(notification: JSONRPCNotification): void {
    if (this.#res.writableEnded || this.#res.destroyed) return;
    if (!this.#stream) {
      // The client going away is seen by the caller's own close listener (it cancels the call).
      this.#stream = new SseStream(this.#res, undefined, () => undefined);
      this.#stream.keepAlive(DEFAULT_SSE_KEEP_ALIVE_MS);
    }
    this.#stream.write(sseEvent(notification));
  }
}
