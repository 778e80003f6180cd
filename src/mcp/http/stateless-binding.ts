// The HTTP binding of revision 2026-07-28 (the router's stateless handler does the rest): the
// headers that repeat the body (MCP-Protocol-Version, Mcp-Method, Mcp-Name) must match it, and the
// answer's bytes. Notifications related to the request (execute_code's progress and output lines,
// the log messages its _meta logLevel asks for) travel on the POST's own response as an SSE
// stream that the answer ends; the stream opens with the first notification, so a request that
// has none gets plain JSON, and so does a client whose Accept header does not take
// text/event-stream (there is nowhere else to put them).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEFAULT_SSE_KEEP_ALIVE_MS } from '@modelcontextprotocol/sdk/server/sseKeepAlive.js';
import type { JSONRPCMessage, JSONRPCNotification } from '@modelcontextprotocol/sdk/types.js';
import { META_PROTOCOL_VERSION, metaOf, STATELESS_REVISION } from '../router/revision.js';
import { header as untrimmed, sendJson } from './request-guards.js';
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

const header = (req: IncomingMessage, name: string): string | undefined => untrimmed(req, name)?.trim();

/** What is wrong with the headers that repeat the body (JSON-RPC -32020), or null. */
export function headerProblem(req: IncomingMessage, message: Record<string, unknown>): string | null {
  const version = header(req, 'mcp-protocol-version');
  if (version === undefined) return `Missing MCP-Protocol-Version header: a request without Mcp-Session-Id speaks revision ${STATELESS_REVISION} and must send "MCP-Protocol-Version: ${STATELESS_REVISION}"`;
  const metaVersion = metaOf(message)?.[META_PROTOCOL_VERSION];
  if (metaVersion !== undefined && metaVersion !== version) return `MCP-Protocol-Version header (${version}) does not match _meta["${META_PROTOCOL_VERSION}"] (${String(metaVersion)})`;
  const method = String(message['method']);
  const sentMethod = header(req, 'mcp-method');
  if (sentMethod === undefined) return `Mcp-Method header missing: revision ${STATELESS_REVISION} sends the body's method in it ("Mcp-Method: ${method}")`;
  if (sentMethod !== method) return `Mcp-Method header (${sentMethod}) does not match the body's method (${method})`;
  const sentName = header(req, 'mcp-name');
  const params = (message['params'] ?? {}) as Record<string, unknown>;
  const named = method === 'tools/call' || method === 'prompts/get' ? params['name'] : method === 'resources/read' ? params['uri'] : undefined;
  if (typeof named === 'string' && sentName === undefined) return `Mcp-Name header missing: a ${method} request names "${named}" in the header too`;
  if (sentName !== undefined && typeof named === 'string' && sentName !== named) return `Mcp-Name header (${sentName}) does not match the body's ${method === 'resources/read' ? 'uri' : 'name'} (${named})`;
  return null;
}
