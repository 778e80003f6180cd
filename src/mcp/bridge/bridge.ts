// `stdio --connect URL`: a message pump between a stdio MCP client (an agent launched by a
// stdio-only client) and the daemon's Streamable HTTP endpoint, so those agents share the
// daemon's pool, catalog and skills. Messages pass unchanged both ways. A client is started once
// and left running for days, so the bridge outlives its HTTP session: when the session is gone
// (idle expiry: 404; a daemon restart: connection refused, then 404) it opens a new one by
// replaying the client's own initialize, and retries the request that failed, once. When the
// daemon dies (kill -9), the broken event stream is noticed at once: a probe of /healthz that
// finds nobody answers the calls in flight with an error (not the client's own 60–90 s timeout),
// and the next request goes straight to recovery, so it is never refused with a false "may not
// have completed". The session and its recovery: stdio-bridge-session.ts; what a failure is and
// what the client is told: stdio-bridge-failures.ts.

import type { Readable, Writable } from 'node:stream';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage, JSONRPCNotification, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../util/logger.js';
import { META_PROTOCOL_VERSION } from './http/stateless.js';
import { readStatelessStream } from './http/stateless-stream-reader.js';
import { failureMessage } from './stdio-bridge-failures.js';
import { DaemonSession, writeToClient } from './stdio-bridge-session.js';

/** How long a lost daemon is waited for (connection refused) before a request fails, ms. */
export const DEFAULT_RECONNECT_WINDOW_MS = 30_000;
const METHOD_NOT_FOUND = -32601;

export interface BridgeOptions {
  url: string;
  token?: string | undefined;
  stdin: Readable;
  stdout: Writable;
  logger: Logger;
  /** How long a daemon that refuses connections is waited for when a session is being recovered, ms. */
  reconnectWindowMs?: number;
}

export interface Bridge {
  /** Resolves when either side has closed and the bridge has shut down. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/** What routing a client message needs: the daemon's address, the session, the client's stdio. */
interface Route {
  url: URL;
  token: string | undefined;
  stdio: StdioServerTransport;
  logger: Logger;
  session: DaemonSession;
}

export async function startBridge(options: BridgeOptions): Promise<Bridge> {
  const { logger } = options;
  const url = new URL(options.url);
  const stdio = new StdioServerTransport(options.stdin, options.stdout);
  const windowMs = options.reconnectWindowMs ?? DEFAULT_RECONNECT_WINDOW_MS;
  const session = new DaemonSession({ url, token: options.token, stdio, logger, windowMs });
  const route: Route = { url, token: options.token, stdio, logger, session };
  const close = (): Promise<void> => session.close();

  stdio.onmessage = (message: JSONRPCMessage) => fromClient(route, message);
  stdio.onerror = (error) => logger.warn({ err: error.message }, 'stdio error');
  stdio.onclose = () => void close();
  options.stdin.once('end', () => void close());

  await session.start();
  await stdio.start();
  logger.info({ url: url.href }, 'bridging stdio to the daemon');
  return { closed: session.closed, close };
}

/** Routes one message of the client: stateless to the daemon as is, else into the session, or answered here before initialize. */
function fromClient(route: Route, message: JSONRPCMessage): void {
  const { session } = route;
  const request = 'method' in message && 'id' in message ? (message as JSONRPCRequest) : undefined;
  // Revision 2026-07-28: each request stands alone (no session); it goes to the daemon as is.
  const statelessVersion = request?.params?._meta?.[META_PROTOCOL_VERSION];
  if (request && typeof statelessVersion === 'string') {
    void forwardStateless(route, request, statelessVersion);
    return;
  }
  if (request?.method === 'initialize') {
    session.noteInitialize(request);
  } else if ('method' in message && message.method === 'notifications/initialized') {
    session.noteInitialized();
  } else if (!session.hasInitialize) {
    // Before initialize there is no session to forward to: answer probes (server/discover and
    // the like) as the embedded server answers methods it does not know, and ping as ping.
    if (request) void answerLocally(route.stdio, request);
    return;
  }
  session.relay(message, request);
}

/** The headers of a stateless request: its revision, method and name travel outside the body. */
function statelessHeaders(request: JSONRPCRequest, version: string, token: string | undefined): Record<string, string> {
  const params = (request.params ?? {}) as Record<string, unknown>;
  const name = request.method === 'tools/call' ? params['name'] : request.method === 'resources/read' ? params['uri'] : undefined;
  return {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': version,
    'Mcp-Method': request.method,
    ...(typeof name === 'string' && { 'Mcp-Name': name }),
    ...(token && { Authorization: `Bearer ${token}` }),
  };
}

/** Sends a stateless request in a POST of its own and relays the answer (and the notifications streamed before it). */
async function forwardStateless(route: Route, request: JSONRPCRequest, version: string): Promise<void> {
  const { url, stdio, logger } = route;
  let answer: JSONRPCMessage;
  try {
    const res = await fetch(url, { method: 'POST', headers: statelessHeaders(request, version, route.token), body: JSON.stringify(request) });
    // The daemon streams the call's notifications (progress, log lines) before its answer.
    if (res.body && res.headers.get('content-type')?.includes('text/event-stream')) {
      const relay = (note: JSONRPCNotification): void => void writeToClient(stdio, logger, note);
      answer = { ...(await readStatelessStream(res.body, relay)), id: request.id } as JSONRPCMessage;
      await writeToClient(stdio, logger, answer);
      return;
    }
    const text = await res.text();
    try {
      answer = { ...(JSON.parse(text) as JSONRPCMessage), id: request.id } as JSONRPCMessage;
    } catch {
      throw new StreamableHTTPError(res.status, text);
    }
    if (!('result' in answer) && !('error' in answer)) throw new StreamableHTTPError(res.status, text);
  } catch (error) {
    answer = { jsonrpc: '2.0', id: request.id, error: { code: -32000, message: failureMessage(error, url.href) } };
  }
  await writeToClient(stdio, logger, answer);
}

function answerLocally(stdio: StdioServerTransport, request: JSONRPCRequest): Promise<void> {
  return stdio.send(
    request.method === 'ping'
      ? { jsonrpc: '2.0', id: request.id, result: {} }
      : { jsonrpc: '2.0', id: request.id, error: { code: METHOD_NOT_FOUND, message: 'Method not found' } },
  );
}
