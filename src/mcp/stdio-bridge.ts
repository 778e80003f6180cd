// `stdio --connect URL`: a message pump between a stdio MCP client (an agent launched by a
// stdio-only client) and the daemon's Streamable HTTP endpoint, so those agents share the
// daemon's pool, catalog and skills. Messages pass unchanged both ways. A client is started once
// and left running for days, so the bridge outlives its HTTP session: when the session is gone
// (idle expiry: 404; a daemon restart: connection refused, then 404) it opens a new one by
// replaying the client's own initialize, and retries the request that failed, once. When the
// daemon dies (kill -9), the broken event stream is noticed at once: a probe of /healthz that
// finds nobody answers the calls in flight with an error (not the client's own 60–90 s timeout),
// and the next request goes straight to recovery, so it is never refused with a false "may not
// have completed".

import type { Readable, Writable } from 'node:stream';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage, JSONRPCNotification, JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../util/logger.js';
import { META_PROTOCOL_VERSION } from './http/stateless.js';
import { readStatelessStream } from './http/stateless-stream-reader.js';

/** How long a lost daemon is waited for (connection refused) before a request fails, ms. */
export const DEFAULT_RECONNECT_WINDOW_MS = 30_000;
/** How long a replayed initialize may take, ms. */
const REINITIALIZE_TIMEOUT_MS = 30_000;
const METHOD_NOT_FOUND = -32601;
/** How long the liveness probe of a daemon whose stream broke may take, ms. */
const PROBE_TIMEOUT_MS = 1000;

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

type Waiter = { resolve: (message: JSONRPCMessage) => void; reject: (error: Error) => void };

export async function startBridge(options: BridgeOptions): Promise<Bridge> {
  const { logger } = options;
  const url = new URL(options.url);
  const windowMs = options.reconnectWindowMs ?? DEFAULT_RECONNECT_WINDOW_MS;
  const stdio = new StdioServerTransport(options.stdin, options.stdout);
  const initializeIds = new Set<RequestId>();
  /** Answers the bridge itself waits for (replayed initialize), by id. */
  const internal = new Map<RequestId, Waiter>();
  let clientInitialize: JSONRPCRequest | undefined;
  let clientInitialized = false;
  let protocolVersion: string | undefined;
  let recovering: Promise<void> | undefined;
  let replays = 0;
  let closing: Promise<void> | undefined;
  /** Client requests sent to the daemon and not answered yet, with the link that carries them. */
  const pending = new Map<RequestId, StreamableHTTPClientTransport>();

  /** Links whose daemon stopped answering: the next request recovers before it is sent. */
  const dead = new WeakSet<StreamableHTTPClientTransport>();
  let probing: Promise<void> | undefined;

  const newLink = (): StreamableHTTPClientTransport => {
    const created = new StreamableHTTPClientTransport(url, options.token ? { requestInit: { headers: { Authorization: `Bearer ${options.token}` } } } : {});
    created.onmessage = (message) => fromDaemon(message);
    created.onerror = (error) => {
      logger.debug({ err: error.message }, 'daemon connection error');
      // A stream broke (the SDK resumes it if the daemon is still there): find out whether it is.
      if (created === link && !dead.has(created)) probing ??= probe(created).finally(() => (probing = undefined));
    };
    return created;
  };
  let link = newLink();

  /** When the daemon behind `on` no longer answers at all, its calls in flight are answered now. */
  const probe = async (on: StreamableHTTPClientTransport): Promise<void> => {
    if (await daemonAnswers(url, options.token)) return;
    if (on !== link || closing) return;
    dead.add(on);
    logger.warn({ url: url.href, in_flight: [...pending.values()].filter((l) => l === on).length }, 'daemon stopped answering; failing the calls in flight');
    for (const [id, l] of pending) {
      if (l !== on) continue;
      pending.delete(id);
      void stdio.send({ jsonrpc: '2.0', id, error: { code: -32000, message: `the code-execution-mcp daemon at ${url.href} stopped while this request ran (its connection closed and it does not answer); it may not have completed: send it again once the daemon is back` } });
    }
  };

  const fromDaemon = (message: JSONRPCMessage): void => {
    if (('result' in message || 'error' in message) && message.id !== undefined) {
      const waiter = internal.get(message.id);
      if (waiter) {
        internal.delete(message.id);
        waiter.resolve(message);
        return;
      }
      pending.delete(message.id);
      if ('result' in message && initializeIds.delete(message.id)) learnVersion(message.result);
    }
    stdio.send(message).catch((error: unknown) => logger.warn({ err: error }, 'could not write to stdout'));
  };

  const learnVersion = (result: unknown): void => {
    const version = (result as { protocolVersion?: unknown }).protocolVersion;
    if (typeof version === 'string') {
      protocolVersion = version;
      link.setProtocolVersion(version);
    }
  };

  /** Sends on `on`, waiting out a daemon that refuses connections when `patient` (it is restarting). */
  const sendOn = async (on: StreamableHTTPClientTransport, message: JSONRPCMessage, patient: boolean): Promise<void> => {
    const deadline = Date.now() + windowMs;
    for (let delayMs = 100; ; delayMs = Math.min(delayMs * 2, 2000)) {
      try {
        await on.send(message);
        return;
      } catch (error) {
        // only a refused connection or a 503 (the daemon is still starting its pools) proves
        // nothing was delivered, so only then is a resend safe
        if (!patient || !(refused(error) || httpStatus(error) === 503) || Date.now() + delayMs > deadline || closing) throw error;
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
    }
  };

  /** Opens a new session by replaying the client's initialize (and notifications/initialized). */
  const recover = (lost: StreamableHTTPClientTransport): Promise<void> => {
    if (lost !== link) return Promise.resolve(); // another request already recovered it
    return (recovering ??= (async () => {
      const init = clientInitialize;
      if (!init) throw new Error('no initialize to replay');
      link = newLink();
      void lost.close().catch(() => undefined);
      lost.onmessage = undefined;
      abandon(lost);
      await link.start();
      const id = `bridge-reinitialize-${++replays}`;
      const answer = new Promise<JSONRPCMessage>((resolve, reject) => {
        internal.set(id, { resolve, reject });
        setTimeout(() => reject(new Error(`the daemon did not answer the replayed initialize within ${REINITIALIZE_TIMEOUT_MS / 1000} s`)), REINITIALIZE_TIMEOUT_MS).unref();
      });
      try {
        await sendOn(link, { ...init, id }, true);
        const reply = await answer;
        if ('error' in reply) throw new Error(`the daemon refused the replayed initialize: ${reply.error.message}`);
        if ('result' in reply) learnVersion(reply.result);
        else if (protocolVersion) link.setProtocolVersion(protocolVersion);
        if (clientInitialized) await link.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      } finally {
        internal.delete(id);
      }
      logger.info({ url: url.href, replays }, 'daemon session re-established');
    })().finally(() => (recovering = undefined)));
  };

  /**
   * Requests that were running in a session that is gone will never be answered: say so, rather
   * than leave the client waiting (whether the call ran is unknown, so it is not resent).
   */
  const abandon = (lost: StreamableHTTPClientTransport): void => {
    for (const [id, on] of pending) {
      if (on !== lost) continue;
      pending.delete(id);
      void stdio.send({ jsonrpc: '2.0', id, error: { code: -32000, message: `the daemon at ${url.href} lost the session while this request ran (it restarted or expired the session); it may not have completed: send it again` } });
    }
  };

  const forward = async (message: JSONRPCMessage): Promise<void> => {
    if (recovering) await recovering.catch(() => undefined);
    if (probing) await probing;
    const isInitialize = 'method' in message && message.method === 'initialize';
    // The daemon died since the last request: a new session first (waiting for the daemon to be
    // back), so this request is only sent to a daemon that answers.
    if (dead.has(link) && clientInitialize && !isInitialize) await recover(link);
    const on = link;
    const id = 'method' in message && 'id' in message ? message.id : undefined;
    if (id !== undefined) pending.set(id, on);
    try {
      await sendOn(on, message, false);
    } catch (error) {
      if (!clientInitialize || isInitialize || !(sessionLost(error) || refused(error))) throw error;
      logger.info({ url: url.href, reason: describe(error) }, 'daemon session lost; re-initializing');
      if (id !== undefined) pending.delete(id);
      await recover(on);
      if (id !== undefined) pending.set(id, link);
      await sendOn(link, message, true);
    }
  };

  const close = (): Promise<void> =>
    (closing ??= (async () => {
      for (const waiter of internal.values()) waiter.reject(new Error('bridge closed'));
      internal.clear();
      try {
        await link.terminateSession();
      } catch {
        // the daemon may be gone already
      }
      await Promise.allSettled([link.close(), stdio.close()]);
      resolveClosed();
    })());
  let resolveClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));

  stdio.onmessage = (message: JSONRPCMessage) => {
    const request = 'method' in message && 'id' in message ? (message as JSONRPCRequest) : undefined;
    // Revision 2026-07-28: each request stands alone (no session); it goes to the daemon as is.
    const statelessVersion = request?.params?._meta?.[META_PROTOCOL_VERSION];
    if (request && typeof statelessVersion === 'string') {
      void forwardStateless(request, statelessVersion);
      return;
    }
    if (request?.method === 'initialize') {
      clientInitialize = request;
      initializeIds.add(request.id);
    } else if ('method' in message && message.method === 'notifications/initialized') {
      clientInitialized = true;
    } else if (!clientInitialize) {
      // Before initialize there is no session to forward to: answer probes (server/discover and
      // the like) as the embedded server answers methods it does not know, and ping as ping.
      if (request) void answerLocally(request);
      return;
    }
    forward(message).catch((error: unknown) => {
      if (request) pending.delete(request.id);
      logger.warn({ err: describe(error), url: url.href, method: 'method' in message ? message.method : undefined }, 'daemon did not take a message');
      if (request) void stdio.send({ jsonrpc: '2.0', id: request.id, error: { code: -32000, message: failureMessage(error, url.href) } });
    });
  };
  const forwardStateless = async (request: JSONRPCRequest, version: string): Promise<void> => {
    const params = (request.params ?? {}) as Record<string, unknown>;
    const name = request.method === 'tools/call' ? params['name'] : request.method === 'resources/read' ? params['uri'] : undefined;
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': version,
      'Mcp-Method': request.method,
      ...(typeof name === 'string' && { 'Mcp-Name': name }),
      ...(options.token && { Authorization: `Bearer ${options.token}` }),
    };
    let answer: JSONRPCMessage;
    try {
      const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(request) });
      // The daemon streams the call's notifications (progress, log lines) before its answer.
      if (res.body && res.headers.get('content-type')?.includes('text/event-stream')) {
        const relay = (note: JSONRPCNotification): void => void stdio.send(note).catch((error: unknown) => logger.warn({ err: error }, 'could not write to stdout'));
        answer = { ...(await readStatelessStream(res.body, relay)), id: request.id } as JSONRPCMessage;
        await stdio.send(answer).catch((error: unknown) => logger.warn({ err: error }, 'could not write to stdout'));
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
    await stdio.send(answer).catch((error: unknown) => logger.warn({ err: error }, 'could not write to stdout'));
  };
  const answerLocally = (request: JSONRPCRequest): Promise<void> =>
    stdio.send(
      request.method === 'ping'
        ? { jsonrpc: '2.0', id: request.id, result: {} }
        : { jsonrpc: '2.0', id: request.id, error: { code: METHOD_NOT_FOUND, message: 'Method not found' } },
    );
  stdio.onerror = (error) => logger.warn({ err: error.message }, 'stdio error');
  stdio.onclose = () => void close();
  options.stdin.once('end', () => void close());

  await link.start();
  await stdio.start();
  logger.info({ url: url.href }, 'bridging stdio to the daemon');
  return { closed, close };
}

/**
 * False only when nothing listens at the daemon's address any more (connection refused): any HTTP
 * answer, or a slow one (PROBE_TIMEOUT_MS), leaves the stream to the SDK's own resumption.
 */
async function daemonAnswers(url: URL, token: string | undefined): Promise<boolean> {
  try {
    const res = await fetch(new URL('/healthz', url), { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS), ...(token ? { headers: { Authorization: `Bearer ${token}` } } : {}) });
    await res.body?.cancel();
    return true;
  } catch (error) {
    return !refused(error);
  }
}

function httpStatus(error: unknown): number | undefined {
  return error instanceof StreamableHTTPError && typeof error.code === 'number' && error.code > 0 ? error.code : undefined;
}

/** The daemon no longer knows the session: it expired when idle, or the daemon restarted. */
function sessionLost(error: unknown): boolean {
  return httpStatus(error) === 404;
}

/** Nothing listens on the port (yet): the daemon is stopped or restarting. */
function refused(error: unknown): boolean {
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 4; cause = cause.cause, depth++) {
    if ((cause as NodeJS.ErrnoException).code === 'ECONNREFUSED') return true;
  }
  return false;
}

/** The connection broke after the request went out: the daemon died or restarted under it. */
function dropped(error: unknown): boolean {
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 4; cause = cause.cause, depth++) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET') return true;
  }
  return false;
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
  return `${message}${cause}`;
}

/** What the client is told when a request could not be delivered: the cause and the fix. */
function failureMessage(error: unknown, href: string): string {
  const status = httpStatus(error);
  if (status === 401 || status === 403) {
    return `token refused by the daemon at ${href} (HTTP ${status}; check CODE_EXEC_TOKEN or --token: it must be the daemon's authToken or an agent's token)`;
  }
  if (status !== undefined) {
    return `the code-execution-mcp daemon at ${href} refused the request (HTTP ${status}: ${daemonMessage(error)})`;
  }
  if (dropped(error)) {
    return `the code-execution-mcp daemon at ${href} dropped the connection while this request ran (it stopped or restarted); it may not have completed: send it again`;
  }
  return `the code-execution-mcp daemon at ${href} did not answer (${describe(error)}); start it with "code-execution-mcp serve" or fix --connect`;
}

/** The JSON-RPC error message in a refused POST's body, when the daemon sent one. */
function daemonMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const start = text.indexOf('{');
  if (start >= 0) {
    try {
      const body: unknown = JSON.parse(text.slice(start));
      const message = (body as { error?: { message?: unknown } }).error?.message;
      if (typeof message === 'string') return message;
    } catch {
      // not JSON: fall through
    }
  }
  return text.replace(/^Streamable HTTP error: /, '');
}
