// One upstream MCP server, kept connected: connects (Streamable HTTP falling back to SSE for a
// URL), lists its tools page by page, follows `notifications/tools/list_changed`, notices when
// the connection dies (the child exits, the transport closes, an HTTP health check fails) and
// reconnects with backoff, keeping the last known tools meanwhile. Each connection attempt gets
// a generation number so that callbacks from a dead client never touch the live one.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '../config/config-types.js';
import type { Logger } from '../util/logger.js';
import type { Backoff } from './backoff.js';
import { listAllTools } from './tool-list.js';
import { configProblem, isStdioConfig, openHttp, openStdio, shouldFallBackToSse, terminateSession } from './transport.js';
import type { OpenedTransport } from './transport.js';
import { loadSdkClient, mcpErrorCode, sdkClient } from './sdk-client.js';
import { UpstreamError } from './upstream-error.js';
import type { UpstreamServerStatus, UpstreamState, UpstreamTool, UpstreamTransportKind } from './upstream-types.js';

/** Timeout of the ping that checks an HTTP connection after a transport error, ms. */
const PROBE_TIMEOUT_MS = 10_000;
/** Time given to an HTTP server to end its session on close, ms. */
const TERMINATE_SESSION_TIMEOUT_MS = 2_000;
/** Characters of a child's stderr quoted in an error. */
const MAX_STDERR_QUOTE_CHARS = 1_000;
/** Longest wait for a dead child's stderr to end before its tail is quoted, ms. */
const STDERR_DRAIN_MS = 1_000;

export interface ConnectionOptions {
  name: string;
  config: McpServerConfig;
  logger: Logger;
  clientInfo: { name: string; version: string };
  connectTimeoutMs: number;
  backoff: Backoff;
  /** A connection up this long resets the backoff, ms. */
  resetAfterMs: number;
  now: () => number;
  /** Called with the new tool list whenever it differs from the last one. */
  onTools: (tools: UpstreamTool[]) => void;
}

/** One live client; replaced wholesale on reconnect. */
interface Session {
  generation: number;
  client: Client;
  opened: OpenedTransport;
  listing: boolean;
  relist: boolean;
  probing: boolean;
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && (error as NodeJS.ErrnoException).syscall?.startsWith('spawn') === true) {
      return `command not found (${error.message})`;
    }
    return error.message;
  }
  return String(error);
}

/** Whether an error from a request means the connection itself is gone. */
function isConnectionError(error: unknown): boolean {
  const code = mcpErrorCode(error);
  if (code !== undefined) return code === sdkClient().ErrorCode.ConnectionClosed || code === sdkClient().ErrorCode.RequestTimeout;
  return true;
}

export class UpstreamConnection {
  readonly name: string;
  readonly #options: ConnectionOptions;
  readonly #logger: Logger;
  #state: UpstreamState = 'connecting';
  #error: string | undefined;
  #tools: readonly UpstreamTool[] = [];
  #toolsJson: string | undefined;
  #restarts = 0;
  #everReady = false;
  #readyAt = 0;
  #generation = 0;
  #session: Session | undefined;
  /** A client whose connect is in flight, so close() can cut it short. */
  #pending: Client | undefined;
  /** The transport of the latest connect, for the stderr of a child that died while starting. */
  #opening: OpenedTransport | undefined;
  #attempt: Promise<void> | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  /** Legacy SSE worked for this URL before: go straight to it on reconnect. */
  #preferSse = false;
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(options: ConnectionOptions) {
    this.name = options.name;
    this.#options = options;
    this.#logger = options.logger.child({ server: options.name });
  }

  get state(): UpstreamState {
    return this.#state;
  }

  get tools(): readonly UpstreamTool[] {
    return this.#tools;
  }

  get transportKind(): UpstreamTransportKind {
    if (isStdioConfig(this.#options.config)) return 'stdio';
    return this.#session?.opened.kind ?? (this.#preferSse ? 'sse' : 'streamable-http');
  }

  /** state, tools, error, restarts, transport and pid; the manager adds call counters. */
  status(): Omit<UpstreamServerStatus, 'calls' | 'failures'> {
    const out: Omit<UpstreamServerStatus, 'calls' | 'failures'> = {
      state: this.#state,
      tools: this.#tools.length,
      restarts: this.#restarts,
      transport: this.transportKind,
    };
    if (this.#error !== undefined) out.error = this.#error;
    const pid = this.#session?.opened.pid();
    if (pid !== null && pid !== undefined) out.pid = pid;
    return out;
  }

  /** First connection attempt; never rejects (a failure is in the status and retried). */
  start(): Promise<void> {
    if (this.#attempt !== undefined || this.#closed) return this.#attempt ?? Promise.resolve();
    const problem = configProblem(this.#options.config);
    if (problem !== undefined) {
      // Retrying cannot fix a configuration; say so once and stay failed.
      this.#state = 'failed';
      this.#error = `invalid configuration: ${problem}`;
      this.#logger.warn({ code: 'UPSTREAM_CONFIG_INVALID', reason: problem }, 'upstream server configuration is invalid; server skipped');
      return Promise.resolve();
    }
    return this.#runAttempt();
  }

  /** Sends `tools/call`; the caller maps errors. Throws 'SERVER_UNAVAILABLE' when not ready. */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal, timeoutMs: number): Promise<CallToolResult> {
    const session = this.#session;
    if (this.#state !== 'ready' || session === undefined) throw this.unavailableError(tool);
    try {
      return (await session.client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout: timeoutMs })) as CallToolResult;
    } catch (error) {
      // Over HTTP a dead server shows up only as a failed request: check whether it is alive.
      if (session.opened.kind !== 'stdio' && mcpErrorCode(error) === undefined) void this.#probe(session);
      throw error;
    }
  }

  unavailableError(tool?: string): UpstreamError {
    const why = this.#error === undefined ? '' : `: ${this.#error}`;
    const what: Record<UpstreamState, string> = {
      connecting: 'is still connecting; try again shortly',
      ready: 'is not connected',
      reconnecting: `lost its connection and is reconnecting${why}`,
      failed: `failed to start${why}`,
      closed: 'is closed (the daemon is shutting down)',
    };
    const details: { server: string; tool?: string } = { server: this.name };
    if (tool !== undefined) details.tool = tool;
    return new UpstreamError('SERVER_UNAVAILABLE', `Upstream server "${this.name}" ${what[this.#state]}`, details);
  }

  /** Stops retrying, closes the client and ends the child process. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closed = true;
    this.#state = 'closed';
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    const pending = this.#pending;
    const session = this.#session;
    this.#session = undefined;
    await Promise.all([
      pending === undefined ? undefined : closeQuietly(pending),
      session === undefined ? undefined : this.#closeSession(session, true),
    ]);
    // An attempt cut short by the close above settles quickly; wait so no child outlives close().
    await this.#attempt;
  }

  #runAttempt(): Promise<void> {
    const attempt = this.#connectOnce();
    this.#attempt = attempt;
    return attempt;
  }

  async #connectOnce(): Promise<void> {
    const generation = ++this.#generation;
    let session: Session | undefined;
    try {
      session = await this.#open(generation);
      if (this.#closed) return;
      this.#session = session;
      session.listing = true;
      let tools: UpstreamTool[];
      do {
        session.relist = false;
        tools = await listAllTools(session.client, this.name, this.#options.connectTimeoutMs);
      } while (session.relist && !this.#closed);
      session.listing = false;
      if (this.#closed) return;
      this.#setTools(tools);
      const recovered = this.#everReady;
      this.#state = 'ready';
      this.#error = undefined;
      this.#everReady = true;
      this.#readyAt = this.#options.now();
      if (recovered) {
        this.#logger.info({ code: 'UPSTREAM_RECONNECTED', tools: tools.length, restarts: this.#restarts }, 'upstream server reconnected');
      } else {
        this.#logger.info({ code: 'UPSTREAM_READY', tools: tools.length, transport: session.opened.kind }, 'upstream server ready');
      }
    } catch (error) {
      // The session is set only once connected; a failed connect has already closed its client.
      const opened = session?.opened ?? this.#opening;
      if (session !== undefined) {
        if (this.#session === session) this.#session = undefined;
        await this.#closeSession(session, false);
      }
      await opened?.stderrDrained(STDERR_DRAIN_MS);
      if (this.#closed) return;
      this.#failAttempt(error, opened);
    } finally {
      if (this.#closed && session !== undefined && this.#session !== session) await this.#closeSession(session, true);
    }
  }

  #failAttempt(error: unknown, opened: OpenedTransport | undefined): void {
    let reason = errorMessage(error);
    if (opened?.kind === 'stdio' && mcpErrorCode(error) === sdkClient().ErrorCode.ConnectionClosed) {
      reason = 'the server process exited while starting';
    }
    const stderr = opened?.stderrTail() ?? '';
    if (stderr !== '') reason += `; stderr: ${stderr.slice(-MAX_STDERR_QUOTE_CHARS)}`;
    this.#error = reason;
    if (!this.#everReady) {
      const first = this.#state === 'connecting';
      this.#state = 'failed';
      // Said once: retries of a server that never came up are logged at debug.
      if (first) this.#logger.warn({ code: 'UPSTREAM_START_FAILED', reason }, 'upstream server failed to start; retrying in the background');
      else this.#logger.debug({ code: 'UPSTREAM_RETRY_FAILED', reason, restarts: this.#restarts }, 'upstream server still not up');
    } else {
      this.#state = 'reconnecting';
      this.#logger.debug({ code: 'UPSTREAM_RETRY_FAILED', reason, restarts: this.#restarts }, 'upstream reconnect attempt failed');
    }
    this.#scheduleRetry();
  }

  async #open(generation: number): Promise<Session> {
    const { config } = this.#options;
    await loadSdkClient();
    if (isStdioConfig(config)) return this.#connect(generation, openStdio(this.name, config, this.#logger));
    if (!this.#preferSse) {
      try {
        return await this.#connect(generation, openHttp(config, 'streamable-http'));
      } catch (error) {
        if (!shouldFallBackToSse(error) || this.#closed) throw error;
        this.#logger.debug({ code: 'UPSTREAM_SSE_FALLBACK', reason: errorMessage(error) }, 'Streamable HTTP refused; trying the legacy SSE transport');
      }
    }
    const session = await this.#connect(generation, openHttp(config, 'sse'));
    this.#preferSse = true;
    return session;
  }

  async #connect(generation: number, opened: OpenedTransport): Promise<Session> {
    this.#opening = opened;
    const client = new (sdkClient().Client)(this.#options.clientInfo, { capabilities: {} });
    const session: Session = { generation, client, opened, listing: false, relist: false, probing: false };
    client.onclose = () => this.#lost(session, 'the connection closed');
    client.onerror = (error) => this.#onTransportError(session, error);
    client.setNotificationHandler(sdkClient().ToolListChangedNotificationSchema, () => this.#onListChanged(session));
    this.#pending = client;
    try {
      await client.connect(opened.transport, { timeout: this.#options.connectTimeoutMs });
    } catch (error) {
      await closeQuietly(client);
      throw error;
    } finally {
      if (this.#pending === client) this.#pending = undefined;
    }
    return session;
  }

  #setTools(tools: UpstreamTool[]): void {
    const json = JSON.stringify(tools);
    if (json === this.#toolsJson) return;
    this.#toolsJson = json;
    this.#tools = Object.freeze(tools);
    this.#options.onTools(tools);
  }

  #onListChanged(session: Session): void {
    if (this.#closed || session.generation !== this.#generation) return;
    // Still connecting (the first listing is yet to come) or a listing under way (it runs again).
    if (session.listing || this.#session !== session) {
      session.relist = true;
      return;
    }
    void this.#relist(session);
  }

  async #relist(session: Session): Promise<void> {
    session.listing = true;
    try {
      do {
        session.relist = false;
        const tools = await listAllTools(session.client, this.name, this.#options.connectTimeoutMs);
        if (this.#closed || this.#session !== session) return;
        this.#setTools(tools);
      } while (session.relist);
      this.#logger.debug({ code: 'UPSTREAM_TOOLS_RELISTED', tools: this.#tools.length }, 'upstream tool list changed');
    } catch (error) {
      if (this.#session === session) {
        this.#logger.warn({ code: 'UPSTREAM_LIST_FAILED', reason: errorMessage(error) }, 'could not re-list upstream tools; keeping the previous list');
      }
    } finally {
      session.listing = false;
    }
  }

  #onTransportError(session: Session, error: Error): void {
    if (this.#closed || this.#session !== session) return;
    this.#logger.debug({ code: 'UPSTREAM_TRANSPORT_ERROR', reason: errorMessage(error) }, 'upstream transport error');
    // A child's death is reported by onclose; over HTTP an error is the only sign, so probe.
    if (session.opened.kind !== 'stdio') void this.#probe(session);
  }

  async #probe(session: Session): Promise<void> {
    if (session.probing || this.#session !== session || this.#state !== 'ready') return;
    session.probing = true;
    try {
      await session.client.ping({ timeout: PROBE_TIMEOUT_MS });
    } catch (error) {
      if (isConnectionError(error)) this.#lost(session, `health check failed: ${errorMessage(error)}`);
    } finally {
      session.probing = false;
    }
  }

  #lost(session: Session, reason: string): void {
    if (this.#closed || this.#session !== session || this.#state !== 'ready') return;
    this.#session = undefined;
    this.#state = 'reconnecting';
    const why = session.opened.kind === 'stdio' ? `${reason} (the server process exited)` : reason;
    this.#error = why;
    // A server that stayed up a while starts over at the short delay; a crash loop backs off.
    if (this.#options.now() - this.#readyAt >= this.#options.resetAfterMs) this.#options.backoff.reset();
    void this.#afterLoss(session, why);
  }

  async #afterLoss(session: Session, why: string): Promise<void> {
    await this.#closeSession(session, false);
    await session.opened.stderrDrained(STDERR_DRAIN_MS);
    if (this.#closed) return;
    const stderr = session.opened.stderrTail();
    if (stderr !== '') this.#error = `${why}; stderr: ${stderr.slice(-MAX_STDERR_QUOTE_CHARS)}`;
    this.#logger.warn({ code: 'UPSTREAM_DISCONNECTED', reason: this.#error }, 'upstream server lost; reconnecting with backoff');
    this.#scheduleRetry();
  }

  #scheduleRetry(): void {
    if (this.#closed || this.#retryTimer !== undefined) return;
    const delay = this.#options.backoff.next();
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      if (this.#closed) return;
      this.#restarts++;
      void this.#runAttempt();
    }, delay);
    // Retries alone must not keep a one-shot process (exec, tests) alive.
    this.#retryTimer.unref();
  }

  async #closeSession(session: Session, polite: boolean): Promise<void> {
    if (polite) await terminateSession(session.opened.transport, TERMINATE_SESSION_TIMEOUT_MS);
    await closeQuietly(session.client);
  }
}

async function closeQuietly(closable: { close(): Promise<void> } | Transport): Promise<void> {
  try {
    await closable.close();
  } catch {
    // Closing is best effort; the first error has already been recorded.
  }
}
