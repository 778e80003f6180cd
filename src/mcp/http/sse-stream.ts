// One Server-Sent Events stream on a Node response: the frames the MCP Streamable HTTP transport
// writes (events with ids, the priming event, keep-alive comments) and how it ends. A stream
// ends once, either by the server (`end`, the response is finished) or by the client dropping
// the connection (`onCancel` runs); writes after either are refused, not thrown.

import type { ServerResponse } from 'node:http';
import { armSseKeepAlive } from '@modelcontextprotocol/sdk/server/sseKeepAlive.js';
import type { EventId } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
} as const;

/** The text of one `message` event. */
export function sseEvent(message: JSONRPCMessage, eventId?: EventId): string {
  return `event: message\n${eventId ? `id: ${eventId}\n` : ''}data: ${JSON.stringify(message)}\n\n`;
}

/** The event that gives the client a Last-Event-ID before anything else is sent. */
export function primingEvent(eventId: EventId, retryMs: number | undefined): string {
  return retryMs === undefined ? `id: ${eventId}\ndata: \n\n` : `id: ${eventId}\nretry: ${retryMs}\ndata: \n\n`;
}

export class SseStream {
  readonly #res: ServerResponse;
  #keepAlive: NodeJS.Timeout | undefined;
  #done = false;
  /** Event ids a resumption already delivered: the live path must not send them again. */
  readonly replayed: Set<EventId> | undefined;

  /**
   * Sends the status line and headers (written with the first frame). `onCancel` runs once if the
   * client goes away before the server ends the stream.
   */
  constructor(res: ServerResponse, sessionId: string | undefined, onCancel: (stream: SseStream) => void, replayed?: Set<EventId>) {
    this.#res = res;
    this.replayed = replayed;
    res.writeHead(200, sessionId === undefined ? SSE_HEADERS : { ...SSE_HEADERS, 'mcp-session-id': sessionId });
    res.once('close', () => {
      if (this.#done) return;
      this.#stop();
      onCancel(this);
    });
  }

  /** Whether the stream can still carry frames. */
  get open(): boolean {
    return !this.#done && !this.#res.destroyed;
  }

  /** Writes one frame; false when the stream is gone. */
  write(frame: string): boolean {
    if (!this.open) return false;
    this.#res.write(frame);
    return true;
  }

  /** Sends a keep-alive comment every `intervalMs` while the stream is idle. */
  keepAlive(intervalMs: number): void {
    if (this.#done) return;
    this.#keepAlive = armSseKeepAlive(intervalMs, () => {
      if (!this.write(': keepalive\n\n')) this.#stop();
    });
  }

  /** Ends the response, after `lastFrame` if given; later calls do nothing. */
  end(lastFrame?: string): void {
    if (this.#done) return;
    this.#stop();
    if (this.#res.destroyed) return;
    if (lastFrame === undefined) this.#res.end();
    else this.#res.end(lastFrame);
  }

  #stop(): void {
    this.#done = true;
    if (this.#keepAlive !== undefined) clearInterval(this.#keepAlive);
    this.#keepAlive = undefined;
  }
}
