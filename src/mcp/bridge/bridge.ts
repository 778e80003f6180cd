// `stdio --connect URL`: a stdio transport whose peer is the daemon's Streamable HTTP endpoint, so
// agents launched by stdio-only clients share the daemon's pool, catalog and skills. The bridge
// speaks only the stateless revision (2026-07-28) to the daemon: every request is a POST of its own
// (stateless-post.ts) that the router's stateless handler answers, so there is no daemon session to
// open, keep alive, lose or replay, and reconnection is the one retry policy of failures.ts. A
// client that speaks the session revision (2025-11-25) gets its session here: the bridge answers
// `initialize` (from the daemon's server/discover), `ping` and `logging/setLevel` itself, and sends
// every other request with the _meta the stateless revision asks for (the client's capabilities
// and log level). Every request the client sends gets an answer: when stdin closes, the bridge
// waits for the ones in flight (up to the drain bound) and answers what is left before it stops.

import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage, JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../../util/logger.js';
import { InFlight } from '../in-flight.js';
import { classify, errorAnswer, isRecord, META_CLIENT_CAPABILITIES, META_LOG_LEVEL, META_PROTOCOL_VERSION, SESSION_REVISIONS, STATELESS_REVISION } from '../router/revision.js';
import { DEFAULT_SESSION_LOG_LEVEL, LOG_SEVERITY } from '../session-log.js';
import { describe, failureMessage } from './failures.js';
import { postStateless } from './stateless-post.js';

/** How long a lost daemon is waited for (connection refused) before a request fails, ms. */
export const DEFAULT_RECONNECT_WINDOW_MS = 30_000;
/** How long requests in flight are waited for once stdin closed, ms. */
export const DEFAULT_DRAIN_MS = 10_000;

export interface BridgeOptions {
  url: string;
  token?: string | undefined;
  stdin: Readable;
  stdout: Writable;
  logger: Logger;
  /** How long a daemon that refuses connections is waited for, ms. */
  reconnectWindowMs?: number;
  /** How long requests in flight are waited for once stdin closed, ms. */
  drainMs?: number;
}

export interface Bridge {
  /** Resolves when stdin has closed, every request has been answered, and the bridge has shut down. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

export async function startBridge(options: BridgeOptions): Promise<Bridge> {
  const { logger } = options;
  const url = new URL(options.url);
  const stdio = new StdioServerTransport(options.stdin, options.stdout);
  /** Client requests not answered yet: what a closing bridge still owes. */
  const open = new Map<RequestId, () => void>();
  const inFlight = new InFlight();
  /** Requests being answered by the daemon: aborting the POST cancels the call there. */
  const posts = new Map<RequestId, AbortController>();
  /** The session revision's state, kept here: what the client's initialize and logging/setLevel said. */
  const session: { capabilities: unknown; level: string } = { capabilities: {}, level: DEFAULT_SESSION_LOG_LEVEL };
  let closing: Promise<void> | undefined;
  const target = { url, token: options.token, windowMs: options.reconnectWindowMs ?? DEFAULT_RECONNECT_WINDOW_MS, stopped: () => closing !== undefined };

  const write = (message: JSONRPCMessage): void => {
    if (('result' in message || 'error' in message) && message.id !== undefined) {
      const end = open.get(message.id);
      if (!end) return; // answered already (a drain, or a failure notice), or never asked
      open.delete(message.id);
      end();
    }
    stdio.send(message).catch((error: unknown) => logger.warn({ err: error }, 'could not write to stdout'));
  };

  /** Sends `request` to the daemon; `shape` turns its answer into what the client asked for. */
  const post = (request: JSONRPCRequest, shape: (answer: JSONRPCMessage) => JSONRPCMessage = (answer) => answer): void => {
    const abort = new AbortController();
    posts.set(request.id, abort);
    postStateless(target, request, write, abort.signal)
      .then((answer) => write(shape(answer)), (error: unknown) => {
        if (abort.signal.aborted) return;
        logger.warn({ err: describe(error), url: url.href, method: request.method }, 'daemon did not take a request');
        write(errorAnswer(request.id, -32000, failureMessage(error, url.href)));
      })
      .finally(() => posts.delete(request.id));
  };

  /** A session-revision request as the stateless revision carries it: the session's state in its _meta. */
  const stateless = (request: JSONRPCRequest, method = request.method): JSONRPCRequest => {
    const params = isRecord(request.params) ? request.params : {};
    const meta = isRecord(params['_meta']) ? params['_meta'] : {};
    const _meta = { ...meta, [META_PROTOCOL_VERSION]: STATELESS_REVISION, [META_CLIENT_CAPABILITIES]: session.capabilities, [META_LOG_LEVEL]: session.level };
    return { ...request, method, params: method === request.method ? { ...params, _meta } : { _meta } };
  };

  const fromSessionClient = (request: JSONRPCRequest): void => {
    const params = isRecord(request.params) ? request.params : {};
    if (request.method === 'ping') return write({ jsonrpc: '2.0', id: request.id, result: {} });
    if (request.method === 'logging/setLevel') {
      const level = params['level'];
      if (typeof level !== 'string' || !Object.hasOwn(LOG_SEVERITY, level)) return write(errorAnswer(request.id, -32602, `Invalid params: level must be one of ${Object.keys(LOG_SEVERITY).join(', ')}`));
      session.level = level;
      return write({ jsonrpc: '2.0', id: request.id, result: {} });
    }
    if (request.method !== 'initialize') return post(stateless(request));
    session.capabilities = isRecord(params['capabilities']) ? params['capabilities'] : {};
    const asked = params['protocolVersion'];
    const protocolVersion = typeof asked === 'string' && SESSION_REVISIONS.includes(asked) ? asked : SESSION_REVISIONS[0];
    // The daemon's own description of itself (server/discover), answered as initialize.
    post(stateless(request, 'server/discover'), (answer) => {
      if (!('result' in answer)) return answer;
      const { capabilities, serverInfo, instructions } = answer.result as { capabilities?: Record<string, unknown>; serverInfo?: unknown; instructions?: unknown };
      return { jsonrpc: '2.0', id: request.id, result: { protocolVersion, capabilities: { ...capabilities, logging: {} }, serverInfo, ...(typeof instructions === 'string' && { instructions }) } };
    });
  };

  const fromClient = (message: JSONRPCMessage): void => {
    const request = 'method' in message && 'id' in message ? (message as JSONRPCRequest) : undefined;
    // (an id the client reuses while it is open is owed one answer, not two)
    if (request) open.set(request.id, open.get(request.id) ?? inFlight.begin());
    if ('method' in message && message.method === 'notifications/cancelled') {
      // A cancelled request gets no answer (MCP): the bridge no longer owes one.
      const id = message.params?.['requestId'] as RequestId;
      open.get(id)?.();
      open.delete(id);
      posts.get(id)?.abort();
    }
    // Notifications (initialized, cancelled, roots) need nothing from a daemon that keeps no session.
    if (!request) return;
    if (classify(message) === 'stateless') post(request);
    else fromSessionClient(request);
  };

  let closedNow: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (closedNow = resolve));
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      for (const id of [...open.keys()]) write(errorAnswer(id, -32000, 'the bridge is shutting down and stopped waiting for this request; it may still complete on the daemon'));
      for (const abort of posts.values()) abort.abort();
      await stdio.close().catch(() => undefined);
      closedNow();
    })());
  // End of input: answer what the client asked (as embedded stdio does, within the drain bound), then stop.
  options.stdin.once('end', () => {
    void inFlight.waitIdle(options.drainMs ?? DEFAULT_DRAIN_MS).then(async (idle) => {
      if (!idle) logger.warn({ in_flight: inFlight.count }, 'input closed; drain time over');
      await close();
    });
  });

  stdio.onmessage = fromClient;
  stdio.onerror = (error) => logger.warn({ err: error.message }, 'stdio error');
  await stdio.start();
  logger.info({ url: url.href }, 'bridging stdio to the daemon');
  return { closed, close };
}
