// The MCP Streamable HTTP server transport, written for Node's http module. On the wire it does
// what the SDK's StreamableHTTPServerTransport does (every answer is an SSE stream whose events
// carry ids, a priming event for clients of 2025-11-25 and later, resumption with Last-Event-ID,
// one standalone GET stream per session, DELETE ends the session), and the protocol layer above
// it is the SDK's own Server. What it leaves out is the SDK's detour through Web Request and
// Response objects (@hono/node-server), which was a third of the daemon's CPU per call, measured
// with --cpu-prof under the lean load generator of `npm run bench -- mcp`.
//
// The daemon in front of it (http-daemon.ts) has already read and parsed the body, checked Host,
// Origin, auth and size, and matched the session; this checks what belongs to the transport.

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEFAULT_SSE_KEEP_ALIVE_MS } from '@modelcontextprotocol/sdk/server/sseKeepAlive.js';
import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { DEFAULT_NEGOTIATED_PROTOCOL_VERSION, isInitializeRequest, JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { InitializeRequest, JSONRPCMessage, JSONRPCRequest, MessageExtraInfo, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { header } from './request-guards.js';
import { primingEvent, sseEvent, SseStream } from './sse-stream.js';

/** Most messages one POST may carry (the SDK's bound). */
const MAX_BATCH = 100;
/** The stream id of the standalone GET stream, as the SDK names it (event ids embed it). */
const STANDALONE = '_GET_stream';
/** Clients of this protocol version and later understand a priming event and may resume. */
const RESUMABLE_SINCE = '2025-11-25';

export interface NodeTransportOptions {
  /** The id this session announces when it is initialized. */
  sessionId: string;
  /** Where events are kept for resumption; without it streams are not resumable. */
  eventStore?: EventStore;
  /** The SSE `retry` field of priming events, ms. */
  retryInterval?: number;
  keepAliveMs?: number;
  /** Called when the client ends the session with DELETE. */
  onsessionclosed?: (sessionId: string) => void | Promise<void>;
}

export class NodeStreamableHttpTransport implements Transport {
  sessionId: string | undefined;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  readonly #o: NodeTransportOptions;
  readonly #streams = new Map<StreamId, SseStream>();
  readonly #streamOf = new Map<RequestId, StreamId>();
  readonly #answers = new Map<RequestId, JSONRPCMessage>();
  /** Streams whose client holds a Last-Event-ID (it can resume them). */
  readonly #resumable = new Set<StreamId>();
  #started = false;
  #initialized = false;
  #closed = false;

  constructor(options: NodeTransportOptions) {
    this.#o = options;
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error('Transport already started');
    this.#started = true;
  }

  /** Answers one HTTP request of this session; `body` is the parsed JSON of a POST. */
  async handleRequest(req: IncomingMessage, res: ServerResponse, body?: unknown): Promise<void> {
    if (this.#closed) return this.#fail(res, 404, -32001, 'Session not found');
    switch (req.method) {
      case 'POST':
        return this.#post(req, res, body);
      case 'GET':
        return this.#get(req, res);
      case 'DELETE':
        return this.#delete(req, res);
      default:
        return this.#fail(res, 405, -32000, 'Method not allowed.', { Allow: 'GET, POST, DELETE' });
    }
  }

  async #post(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const accept = req.headers.accept;
    if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) {
      return this.#fail(res, 406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
    }
    if (!isJsonContentType(req.headers['content-type'])) return this.#fail(res, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    if (Array.isArray(body) && body.length > MAX_BATCH) return this.#fail(res, 400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH} messages`);
    let messages: JSONRPCMessage[];
    try {
      messages = (Array.isArray(body) ? body : [body]).map((m) => JSONRPCMessageSchema.parse(m));
    } catch {
      return this.#fail(res, 400, -32700, 'Parse error: Invalid JSON-RPC message');
    }
    const initialize = messages.find((m) => isRequest(m) && m.method === 'initialize' && isInitializeRequest(m)) as InitializeRequest | undefined;
    if (initialize) {
      if (this.#initialized) return this.#fail(res, 400, -32600, 'Invalid Request: Server already initialized');
      if (messages.length > 1) return this.#fail(res, 400, -32600, 'Invalid Request: Only one initialization request is allowed');
      this.sessionId = this.#o.sessionId;
      this.#initialized = true;
    } else if (!this.#sessionOk(req, res) || !this.#versionOk(req, res)) {
      return;
    }
    const extra: MessageExtraInfo = { requestInfo: { headers: req.headers, url: new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`) } };
    if (!messages.some(isRequest)) {
      // Only notifications or responses: accepted, nothing to stream back.
      for (const message of messages) this.onmessage?.(message, extra);
      res.writeHead(202).end();
      return;
    }
    const version = initialize ? initialize.params.protocolVersion : (header(req, 'mcp-protocol-version') ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION);
    const streamId = randomUUID();
    const stream = new SseStream(res, this.sessionId, (s) => this.#cancelled(streamId, s));
    this.#streams.set(streamId, stream);
    for (const message of messages) if (isRequest(message)) this.#streamOf.set(message.id, streamId);
    try {
      // Headers go out with the priming event, or at once for clients too old for one.
      if (!(await this.#prime(stream, streamId, version))) res.flushHeaders();
      const resumable = this.#o.eventStore !== undefined && version >= RESUMABLE_SINCE;
      for (const message of messages) {
        this.onmessage?.(message, isRequest(message) && resumable ? { ...extra, closeSSEStream: () => this.closeSSEStream(message.id), closeStandaloneSSEStream: () => this.closeStandaloneSSEStream() } : extra);
      }
    } catch (error) {
      // Nothing can end this stream any more: release it and its requests here.
      this.#streams.delete(streamId);
      this.#resumable.delete(streamId);
      for (const message of messages) if (isRequest(message)) this.#streamOf.delete(message.id);
      this.onerror?.(error as Error);
      if (!res.headersSent) return this.#fail(res, 400, -32700, 'Parse error', { data: String(error) });
      stream.end();
      return;
    }
    // The answers end the stream (send); until then it is kept alive, unless they already came.
    if (this.#streams.get(streamId) === stream) stream.keepAlive(this.#o.keepAliveMs ?? DEFAULT_SSE_KEEP_ALIVE_MS);
  }

  async #get(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!req.headers.accept?.includes('text/event-stream')) return this.#fail(res, 406, -32000, 'Not Acceptable: Client must accept text/event-stream');
    if (!this.#sessionOk(req, res) || !this.#versionOk(req, res)) return;
    const lastEventId = header(req, 'last-event-id');
    if (this.#o.eventStore && lastEventId) return this.#replay(res, this.#o.eventStore, lastEventId);
    if (this.#streams.has(STANDALONE)) return this.#fail(res, 409, -32000, 'Conflict: Only one SSE stream is allowed per session');
    const stream = new SseStream(res, this.sessionId, (s) => this.#cancelled(STANDALONE, s));
    this.#streams.set(STANDALONE, stream);
    // Headers go out now: a GET stream may wait long for its first event.
    res.flushHeaders();
    stream.keepAlive(this.#o.keepAliveMs ?? DEFAULT_SSE_KEEP_ALIVE_MS);
  }

  async #replay(res: ServerResponse, store: EventStore, lastEventId: EventId): Promise<void> {
    let target: StreamId | undefined;
    try {
      if (store.getStreamIdForEventId) {
        target = await store.getStreamIdForEventId(lastEventId);
        if (!target) return this.#fail(res, 400, -32000, 'Invalid event ID format');
        if (this.#streams.has(target)) return this.#fail(res, 409, -32000, 'Conflict: Stream already has an active connection');
      }
      let cancelled = false;
      const replayed = new Set<EventId>();
      const stream = new SseStream(res, this.sessionId, (s) => {
        cancelled = true;
        if (target !== undefined) this.#cancelled(target, s);
      }, replayed);
      target = await store.replayEventsAfter(lastEventId, {
        send: async (eventId, message) => {
          if (stream.write(sseEvent(message, eventId))) replayed.add(eventId);
          else this.onerror?.(new Error('Failed replay events'));
        },
      });
      if (this.#closed || cancelled) {
        stream.end();
        return;
      }
      // A reconnect takes over its stream: the predecessor ends cleanly.
      this.#streams.get(target)?.end();
      this.#streams.set(target, stream);
      // The resume itself proves the client holds a Last-Event-ID cursor.
      this.#resumable.add(target);
      res.flushHeaders();
      stream.keepAlive(this.#o.keepAliveMs ?? DEFAULT_SSE_KEEP_ALIVE_MS);
    } catch (error) {
      this.onerror?.(error as Error);
      if (!res.headersSent) this.#fail(res, 500, -32000, 'Error replaying events');
      else res.end();
    }
  }

  async #delete(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.#sessionOk(req, res) || !this.#versionOk(req, res)) return;
    try {
      if (this.sessionId !== undefined) await this.#o.onsessionclosed?.(this.sessionId);
      res.writeHead(200).end();
    } finally {
      await this.close();
    }
  }

  async send(message: JSONRPCMessage, options?: { relatedRequestId?: RequestId }): Promise<void> {
    const isAnswer = 'result' in message || 'error' in message;
    const requestId = isAnswer ? (message as { id?: RequestId }).id : options?.relatedRequestId;
    const store = this.#o.eventStore;
    if (requestId === undefined) {
      if (isAnswer) throw new Error('Cannot send a response on a standalone SSE stream unless resuming a previous client request');
      // Stored even while no GET stream is open, so a later GET with Last-Event-ID gets it.
      const eventId = store ? await store.storeEvent(STANDALONE, message) : undefined;
      const standalone = this.#streams.get(STANDALONE);
      if (standalone && (eventId === undefined || !standalone.replayed?.has(eventId))) standalone.write(sseEvent(message, eventId));
      return;
    }
    const streamId = this.#streamOf.get(requestId);
    if (streamId === undefined) throw new Error(`No connection established for request ID: ${String(requestId)}`);
    const eventId = store ? await store.storeEvent(streamId, message) : undefined;
    // After the await: a resumption may have replaced the stream meanwhile.
    const stream = this.#streams.get(streamId);
    const frame = stream && (eventId === undefined || !stream.replayed?.has(eventId)) ? sseEvent(message, eventId) : undefined;
    if (!isAnswer) {
      if (frame !== undefined && stream?.write(frame) && eventId !== undefined) this.#resumable.add(streamId);
      return;
    }
    this.#answers.set(requestId, message);
    const related = this.#requestsOn(streamId);
    if (!related.every((id) => this.#answers.has(id))) {
      if (frame !== undefined && stream?.write(frame) && eventId !== undefined) this.#resumable.add(streamId);
      return;
    }
    const resumable = store !== undefined && this.#resumable.has(streamId);
    this.#release(streamId, related);
    if (stream) {
      stream.end(frame);
      return;
    }
    // The stream is gone: a resumable client gets the stored answer when it comes back.
    if (this.#closed || resumable) return;
    throw new Error(`No connection established for request ID: ${String(requestId)}`);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const stream of this.#streams.values()) stream.end();
    this.#streams.clear();
    this.#answers.clear();
    this.#resumable.clear();
    this.onclose?.();
  }

  /** Ends the SSE stream carrying `requestId`; the client resumes it later (polling). */
  closeSSEStream(requestId: RequestId): void {
    const streamId = this.#streamOf.get(requestId);
    if (streamId === undefined) return;
    this.#streams.get(streamId)?.end();
    this.#streams.delete(streamId);
  }

  closeStandaloneSSEStream(): void {
    this.#streams.get(STANDALONE)?.end();
    this.#streams.delete(STANDALONE);
  }

  /** Writes the priming event when the client can resume; whether it did. */
  async #prime(stream: SseStream, streamId: StreamId, version: string): Promise<boolean> {
    if (!this.#o.eventStore || version < RESUMABLE_SINCE) return false;
    const eventId = await this.#o.eventStore.storeEvent(streamId, {} as JSONRPCMessage);
    this.#resumable.add(streamId);
    return stream.write(primingEvent(eventId, this.#o.retryInterval));
  }

  /** The client dropped `stream`: forget it unless a resumption already took its place. */
  #cancelled(streamId: StreamId, stream: SseStream): void {
    if (this.#streams.get(streamId) === stream) this.#streams.delete(streamId);
  }

  #requestsOn(streamId: StreamId): RequestId[] {
    const ids: RequestId[] = [];
    for (const [id, sid] of this.#streamOf) if (sid === streamId) ids.push(id);
    return ids;
  }

  #release(streamId: StreamId, requests: RequestId[]): void {
    for (const id of requests) {
      this.#answers.delete(id);
      this.#streamOf.delete(id);
    }
    this.#streams.delete(streamId);
    this.#resumable.delete(streamId);
  }

  #sessionOk(req: IncomingMessage, res: ServerResponse): boolean {
    if (!this.#initialized) {
      this.#fail(res, 400, -32000, 'Bad Request: Server not initialized');
      return false;
    }
    const id = header(req, 'mcp-session-id');
    if (!id) {
      this.#fail(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      return false;
    }
    if (id !== this.sessionId) {
      this.#fail(res, 404, -32001, 'Session not found');
      return false;
    }
    return true;
  }

  #versionOk(req: IncomingMessage, res: ServerResponse): boolean {
    const version = header(req, 'mcp-protocol-version');
    if (version === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return true;
    this.#fail(res, 400, -32000, `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
    return false;
  }

  #fail(res: ServerResponse, status: number, code: number, message: string, extra: { data?: string; Allow?: string } = {}): void {
    this.onerror?.(new Error(message));
    const { data, ...headers } = extra;
    const body = JSON.stringify({ jsonrpc: '2.0', error: data === undefined ? { code, message } : { code, message, data }, id: null });
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(body);
  }
}

/**
 * A request, by shape. Messages here were parsed with JSONRPCMessageSchema (incoming) or built by
 * the SDK's protocol layer (outgoing), so the shape decides: no second schema pass per message on
 * the path of every call, as the SDK's transport makes three.
 */
function isRequest(message: JSONRPCMessage): message is JSONRPCRequest {
  return 'method' in message && 'id' in message;
}
