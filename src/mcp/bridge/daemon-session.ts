// The bridge's session with the daemon (revision 2025-11-25): relays the client's messages over
// Streamable HTTP and the daemon's back, and keeps the session alive for a client that runs for
// days. Until the client's initialize is answered there is no session id, so what arrives
// meanwhile waits for it (one session per daemon start). When the session is gone (idle expiry:
// 404; a daemon restart: connection refused, then 404) a new one is opened by replaying the
// client's own initialize, and the request that failed is resent once; when the daemon dies
// (kill -9), a probe of /healthz that finds nobody answers the calls in flight at once, and the
// next request goes straight to recovery. Resending follows the one policy of failures.ts.

import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONRPCMessage, JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../../util/logger.js';
import { daemonAnswers, describe, refused, retrying, sessionLost } from './failures.js';

/** How long a replayed initialize may take, ms. */
const REINITIALIZE_TIMEOUT_MS = 30_000;

export interface SessionOptions {
  url: URL;
  token: string | undefined;
  logger: Logger;
  /** How long a daemon that refuses connections is waited for when a session is being recovered, ms. */
  windowMs: number;
  /** Writes to the client. */
  write: (message: JSONRPCMessage) => void;
}

type Waiter = { resolve: (message: JSONRPCMessage) => void; reject: (error: Error) => void };
type Link = StreamableHTTPClientTransport;

export class DaemonSession {
  readonly #options: SessionOptions;
  readonly #initializeIds = new Set<RequestId>();
  /** Answers the bridge itself waits for (replayed initialize), by id. */
  readonly #internal = new Map<RequestId, Waiter>();
  #clientInitialize: JSONRPCRequest | undefined;
  #clientInitialized = false;
  #protocolVersion: string | undefined;
  /** Settles when the client's initialize has been answered: the session exists, or with why it could not be opened. */
  #opened: Promise<unknown> = Promise.resolve(undefined);
  #open: (failure?: unknown) => void = () => undefined;
  #recovering: Promise<void> | undefined;
  #replays = 0;
  #closing: Promise<void> | undefined;
  /** Client requests sent to the daemon and not answered yet, with the link that carries them. */
  readonly #pending = new Map<RequestId, Link>();
  /** Links whose daemon stopped answering: the next request recovers before it is sent. */
  readonly #dead = new WeakSet<Link>();
  #probing: Promise<void> | undefined;
  #link: Link;

  constructor(options: SessionOptions) {
    this.#options = options;
    this.#link = this.#newLink();
  }

  /** True once the client sent initialize: before it there is no session to forward to. */
  get hasInitialize(): boolean {
    return this.#clientInitialize !== undefined;
  }

  start(): Promise<void> {
    return this.#link.start();
  }

  /** Relays one client message; throws (rejects) with why it could not be delivered. */
  async relay(message: JSONRPCMessage): Promise<void> {
    const request = 'method' in message && 'id' in message ? (message as JSONRPCRequest) : undefined;
    if (request?.method === 'initialize') {
      // Kept to replay when the session is lost; what follows waits for its answer.
      this.#clientInitialize = request;
      this.#initializeIds.add(request.id);
      this.#opened = new Promise((resolve) => (this.#open = resolve));
    } else {
      if ('method' in message && message.method === 'notifications/initialized') this.#clientInitialized = true;
      const failure = await this.#opened;
      if (failure !== undefined) throw failure;
    }
    try {
      await this.#forward(message, request);
    } catch (error) {
      if (request) this.#pending.delete(request.id);
      if (request?.method === 'initialize') this.#open(error);
      throw error;
    }
  }

  close(): Promise<void> {
    return (this.#closing ??= this.#shutDown());
  }

  async #shutDown(): Promise<void> {
    this.#open(new Error('the bridge closed before the daemon session was open'));
    for (const waiter of this.#internal.values()) waiter.reject(new Error('bridge closed'));
    this.#internal.clear();
    try {
      await this.#link.terminateSession();
    } catch {
      // the daemon may be gone already
    }
    await this.#link.close().catch(() => undefined);
  }

  #newLink(): Link {
    const { url, token, logger } = this.#options;
    const created = new StreamableHTTPClientTransport(url, token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {});
    created.onmessage = (message) => this.#fromDaemon(message);
    created.onerror = (error) => {
      logger.debug({ err: error.message }, 'daemon connection error');
      // A stream broke (the SDK resumes it if the daemon is still there): find out whether it is.
      if (created === this.#link && !this.#dead.has(created)) this.#probing ??= this.#probe(created).finally(() => (this.#probing = undefined));
    };
    return created;
  }

  /** When the daemon behind `on` no longer answers at all, its calls in flight are answered now. */
  async #probe(on: Link): Promise<void> {
    const { url, token, logger } = this.#options;
    if (await daemonAnswers(url, token)) return;
    if (on !== this.#link || this.#closing) return;
    this.#dead.add(on);
    logger.warn({ url: url.href, in_flight: [...this.#pending.values()].filter((l) => l === on).length }, 'daemon stopped answering; failing the calls in flight');
    this.#failInFlight(on, `the code-execution-mcp daemon at ${url.href} stopped while this request ran (its connection closed and it does not answer); it may not have completed: send it again once the daemon is back`);
  }

  /** Answers every request in flight on `on` with an error carrying `message` (whether it ran is unknown, so it is not resent). */
  #failInFlight(on: Link, message: string): void {
    for (const [id, l] of this.#pending) {
      if (l !== on) continue;
      this.#pending.delete(id);
      this.#options.write({ jsonrpc: '2.0', id, error: { code: -32000, message } });
    }
  }

  #fromDaemon(message: JSONRPCMessage): void {
    if (('result' in message || 'error' in message) && message.id !== undefined) {
      const waiter = this.#internal.get(message.id);
      if (waiter) {
        this.#internal.delete(message.id);
        waiter.resolve(message);
        return;
      }
      this.#pending.delete(message.id);
      if (this.#initializeIds.delete(message.id)) {
        if ('result' in message) this.#learnVersion(message.result);
        this.#open();
      }
    }
    this.#options.write(message);
  }

  #learnVersion(result: unknown): void {
    const version = (result as { protocolVersion?: unknown }).protocolVersion;
    if (typeof version === 'string') {
      this.#protocolVersion = version;
      this.#link.setProtocolVersion(version);
    }
  }

  /** Sends on `on`; when `patient`, a daemon that refuses connections (it is restarting) is waited for. */
  #sendOn(on: Link, message: JSONRPCMessage, patient: boolean): Promise<void> {
    return patient ? retrying(() => on.send(message), this.#options.windowMs, () => this.#closing !== undefined) : on.send(message);
  }

  async #forward(message: JSONRPCMessage, request: JSONRPCRequest | undefined): Promise<void> {
    if (this.#recovering) await this.#recovering.catch(() => undefined);
    if (this.#probing) await this.#probing;
    const isInitialize = request?.method === 'initialize';
    // The daemon died since the last request: a new session first (waiting for the daemon to be
    // back), so this request is only sent to a daemon that answers.
    if (this.#dead.has(this.#link) && this.#clientInitialize && !isInitialize) await this.#recover(this.#link);
    const on = this.#link;
    if (request) this.#pending.set(request.id, on);
    try {
      await this.#sendOn(on, message, false);
    } catch (error) {
      if (!this.#clientInitialize || isInitialize || !(sessionLost(error) || refused(error))) throw error;
      this.#options.logger.info({ url: this.#options.url.href, reason: describe(error) }, 'daemon session lost; re-initializing');
      if (request) this.#pending.delete(request.id);
      await this.#recover(on);
      if (request) this.#pending.set(request.id, this.#link);
      await this.#sendOn(this.#link, message, true);
    }
  }

  /** Opens a new session by replaying the client's initialize (and notifications/initialized). */
  #recover(lost: Link): Promise<void> {
    if (lost !== this.#link) return Promise.resolve(); // another request already recovered it
    return (this.#recovering ??= this.#reconnect(lost).finally(() => (this.#recovering = undefined)));
  }

  async #reconnect(lost: Link): Promise<void> {
    const init = this.#clientInitialize;
    if (!init) throw new Error('no initialize to replay');
    this.#link = this.#newLink();
    void lost.close().catch(() => undefined);
    lost.onmessage = undefined;
    // Requests that were running in the lost session will never be answered: say so.
    this.#failInFlight(lost, `the daemon at ${this.#options.url.href} lost the session while this request ran (it restarted or expired the session); it may not have completed: send it again`);
    await this.#link.start();
    await this.#replayInitialize(init);
    this.#options.logger.info({ url: this.#options.url.href, replays: this.#replays }, 'daemon session re-established');
  }

  async #replayInitialize(init: JSONRPCRequest): Promise<void> {
    const id = `bridge-reinitialize-${++this.#replays}`;
    const answer = new Promise<JSONRPCMessage>((resolve, reject) => {
      this.#internal.set(id, { resolve, reject });
      setTimeout(() => reject(new Error(`the daemon did not answer the replayed initialize within ${REINITIALIZE_TIMEOUT_MS / 1000} s`)), REINITIALIZE_TIMEOUT_MS).unref();
    });
    // When the send below fails, nothing awaits the answer; its timer must not reject unobserved
    // later (Node ends a process on an unhandled rejection). The await below still sees it.
    answer.catch(() => undefined);
    try {
      await this.#sendOn(this.#link, { ...init, id }, true);
      const reply = await answer;
      if ('error' in reply) throw new Error(`the daemon refused the replayed initialize: ${reply.error.message}`);
      if ('result' in reply) this.#learnVersion(reply.result);
      else if (this.#protocolVersion) this.#link.setProtocolVersion(this.#protocolVersion);
      if (this.#clientInitialized) await this.#link.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    } finally {
      this.#internal.delete(id);
    }
  }
}
