// `stdio --connect URL`: a stdio transport whose peer is the daemon's Streamable HTTP endpoint, so
// agents launched by stdio-only clients share the daemon's pool, catalog and skills. Each client
// message is classified once (src/mcp/router/revision.ts, as every front does): a stateless
// (2026-07-28) request goes to the daemon in a POST of its own (stateless-post.ts), where the
// router's handler answers it; the session revision goes into the bridge's one session with the
// daemon (daemon-session.ts). Messages pass unchanged both ways. Every request the client sends
// gets an answer: when stdin closes, the bridge waits for the ones in flight (up to the drain
// bound) and answers what is left before it stops.

import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage, JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../../util/logger.js';
import { InFlight } from '../in-flight.js';
import { classify } from '../router/revision.js';
import { DaemonSession } from './daemon-session.js';
import { describe, failureMessage } from './failures.js';
import { postStateless } from './stateless-post.js';

/** How long a lost daemon is waited for (connection refused) before a request fails, ms. */
export const DEFAULT_RECONNECT_WINDOW_MS = 30_000;
/** How long requests in flight are waited for once stdin closed, ms. */
export const DEFAULT_DRAIN_MS = 10_000;
const METHOD_NOT_FOUND = -32601;

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
  const windowMs = options.reconnectWindowMs ?? DEFAULT_RECONNECT_WINDOW_MS;
  /** Client requests not answered yet: what a closing bridge still owes. */
  const open = new Map<RequestId, () => void>();
  const inFlight = new InFlight();
  /** Stateless requests being answered: aborting the POST cancels the call on the daemon. */
  const posts = new Map<RequestId, AbortController>();
  let closing: Promise<void> | undefined;

  const write = (message: JSONRPCMessage): void => {
    if (('result' in message || 'error' in message) && message.id !== undefined) {
      const end = open.get(message.id);
      if (!end) return; // answered already (a drain, or a failure notice), or never asked
      open.delete(message.id);
      end();
    }
    stdio.send(message).catch((error: unknown) => logger.warn({ err: error }, 'could not write to stdout'));
  };
  const fail = (id: RequestId, error: unknown): void => write({ jsonrpc: '2.0', id, error: { code: -32000, message: failureMessage(error, url.href) } });
  const session = new DaemonSession({ url, token: options.token, logger, windowMs, write });
  const target = { url, token: options.token, windowMs, stopped: () => closing !== undefined };

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
    if (classify(message) === 'stateless') {
      if (!request) return; // the stateless revision's notifications need no session and get no answer
      const abort = new AbortController();
      posts.set(request.id, abort);
      postStateless(target, request, write, abort.signal)
        .then(write, (error: unknown) => {
          if (abort.signal.aborted) return;
          logger.warn({ err: describe(error), url: url.href, method: request.method }, 'daemon did not take a stateless request');
          fail(request.id, error);
        })
        .finally(() => posts.delete(request.id));
      return;
    }
    if (!session.hasInitialize && request?.method !== 'initialize') {
      // Before initialize there is no session to forward to: ping is answered as ping, the rest
      // as the embedded server answers what it does not know.
      if (request) write(request.method === 'ping' ? { jsonrpc: '2.0', id: request.id, result: {} } : { jsonrpc: '2.0', id: request.id, error: { code: METHOD_NOT_FOUND, message: 'Method not found' } });
      return;
    }
    session.relay(message).catch((error: unknown) => {
      logger.warn({ err: describe(error), url: url.href, method: 'method' in message ? message.method : undefined }, 'daemon did not take a message');
      if (request) fail(request.id, error);
    });
  };

  let closedNow: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (closedNow = resolve));
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      for (const id of [...open.keys()]) write({ jsonrpc: '2.0', id, error: { code: -32000, message: 'the bridge is shutting down and stopped waiting for this request; it may still complete on the daemon' } });
      for (const abort of posts.values()) abort.abort();
      await Promise.allSettled([session.close(), stdio.close()]);
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
  await session.start();
  await stdio.start();
  logger.info({ url: url.href }, 'bridging stdio to the daemon');
  return { closed, close };
}
