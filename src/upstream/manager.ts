// The daemon's client side of MCP: one connection per configured upstream server, their live
// tool lists, and `callTool`, which checks the name and the arguments locally, forwards the
// caller's cancellation and timeout, and turns the MCP result into a plain value.
import type { Logger } from '../util/logger.js';
import { Backoff, DEFAULT_BACKOFF } from './backoff.js';
import { UpstreamConnection } from './connection.js';
import { DEFAULT_INSTANCE_IDLE_MS, DEFAULT_MAX_INSTANCES, LOCAL_CALLER, ServerInstances } from './server-instances.js';
import type { LimitRefusals } from './concurrency-limit.js';
import { convertToolResult } from './result.js';
import { ArgumentValidator } from './schema-validator.js';
import { mcpErrorCode, sdkClient } from './sdk-client.js';
import type { McpServerConfig } from '../config/config-types.js';
import { closestNames } from './suggest.js';
import { UpstreamError, qualifiedName } from './upstream-error.js';
import { isDaemonError } from '../util/daemon-error.js';
import type {
  CallToolOptions,
  ToolsChangedListener,
  UpstreamBackoffOptions,
  UpstreamManagerOptions,
  UpstreamServerStatus,
  UpstreamTool,
} from './upstream-types.js';

/** Default timeout of one upstream tool call, ms. */
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
/** Default timeout of the MCP handshake and of listing tools, ms. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
const DEFAULT_CLIENT_INFO = Object.freeze({ name: 'code-execution-mcp', version: '0.1.0' });

function positiveMs(value: number | undefined, fallback: number, option: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new RangeError(`${option} must be a positive number of milliseconds, got ${String(value)}`);
  }
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

interface Counters {
  calls: number;
  failures: number;
  /** Wall-clock time of those calls, ms (for /metrics). */
  totalMs: number;
}

export class UpstreamManager {
  /** Each server's shared connection, or the template that lists a per-caller server's tools. */
  readonly #connections = new Map<string, UpstreamConnection>();
  readonly #instances = new Map<string, ServerInstances>();
  readonly #counters = new Map<string, Counters>();
  readonly #validator: ArgumentValidator;
  readonly #logger: Logger;
  readonly #onToolsChanged: ToolsChangedListener | undefined;
  readonly #callTimeoutMs: number;
  readonly #serverTimeoutMs = new Map<string, number>();
  /** Each server's entry as configured, to tell a changed entry from an unchanged one. */
  readonly #configs = new Map<string, string>();
  readonly #add: (name: string, config: McpServerConfig) => void;
  #starting: Promise<void> | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: UpstreamManagerOptions) {
    this.#logger = options.logger.child({ subsystem: 'upstream' });
    this.#onToolsChanged = options.onToolsChanged;
    this.#callTimeoutMs = positiveMs(options.callTimeoutMs, DEFAULT_CALL_TIMEOUT_MS, 'callTimeoutMs');
    const connectTimeoutMs = positiveMs(options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS, 'connectTimeoutMs');
    const backoff: UpstreamBackoffOptions = {
      initialMs: positiveMs(options.backoff?.initialMs, DEFAULT_BACKOFF.initialMs, 'backoff.initialMs'),
      maxMs: positiveMs(options.backoff?.maxMs, DEFAULT_BACKOFF.maxMs, 'backoff.maxMs'),
      resetAfterMs: positiveMs(options.backoff?.resetAfterMs, DEFAULT_BACKOFF.resetAfterMs, 'backoff.resetAfterMs'),
    };
    const now = options.now ?? Date.now;
    const clientInfo = options.clientInfo ?? DEFAULT_CLIENT_INFO;
    this.#validator = new ArgumentValidator(this.#logger);
    this.#add = (name, config) => {
      this.#configs.set(name, JSON.stringify(config));
      // A bad timeout_ms makes the server 'failed' (see configProblem), never the constructor throw.
      const timeoutMs = typeof config === 'object' && config !== null ? config.timeout_ms : undefined;
      if (typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs > 0) this.#serverTimeoutMs.set(name, timeoutMs);
      // Also this server generation's identity: a replaced one's late tool list is ignored.
      const generation = { calls: 0, failures: 0, totalMs: 0 };
      this.#counters.set(name, generation);
      const instances = new ServerInstances({
        name,
        config,
        logger: this.#logger,
        idleMs: positiveMs(options.instanceIdleMs, DEFAULT_INSTANCE_IDLE_MS, 'instanceIdleMs'),
        maxInstances: options.maxInstances ?? DEFAULT_MAX_INSTANCES,
        now,
        connect: (instanceConfig, listsTools) =>
          new UpstreamConnection({
            name,
            config: instanceConfig,
            logger: this.#logger,
            clientInfo,
            connectTimeoutMs,
            backoff: new Backoff(backoff),
            resetAfterMs: backoff.resetAfterMs,
            now,
            // Per-caller instances list the same tools as the template: the catalog shows them once.
            // A retired server's late list must not bring back a removed or replaced server's tools.
            onTools: listsTools ? (tools) => this.#counters.get(name) === generation && this.#toolsChanged(name, tools) : () => undefined,
          }),
      });
      this.#instances.set(name, instances);
      this.#connections.set(name, instances.template);
    };
    for (const [name, config] of Object.entries(options.servers)) this.#add(name, config);
  }

  /**
   * Applies a new `mcpServers` (the configuration file changed): servers no longer listed are
   * closed and their tools leave the catalog; new ones start; a changed entry restarts its server.
   * Unchanged servers, their connections and calls in flight are left alone. Calls in flight on
   * a removed or changed server end with CONNECTION_LOST. Resolves once every new server is
   * ready or has failed (failures are retried in the background, as at start).
   */
  async reconfigure(servers: Readonly<Record<string, McpServerConfig>>): Promise<{ added: string[]; changed: string[]; removed: string[] }> {
    if (this.#closing) throw new Error('the upstream manager is closed');
    const added: string[] = [];
    const changed: string[] = [];
    const removed = [...this.#instances.keys()].filter((name) => !Object.hasOwn(servers, name));
    for (const [name, config] of Object.entries(servers)) {
      const before = this.#configs.get(name);
      if (before === undefined) added.push(name);
      else if (before !== JSON.stringify(config)) changed.push(name);
    }
    const retired = [...removed, ...changed].map((name) => this.#instances.get(name)).filter((i) => i !== undefined);
    for (const name of [...removed, ...changed]) {
      this.#instances.delete(name);
      this.#connections.delete(name);
      this.#configs.delete(name);
      this.#serverTimeoutMs.delete(name);
      this.#validator.prune(name, new Set());
    }
    for (const name of removed) {
      this.#counters.delete(name);
      this.#notify(name, null);
    }
    if (added.length + changed.length + removed.length > 0) {
      this.#logger.info({ code: 'UPSTREAM_RECONFIGURED', added, changed, removed }, 'upstream servers reconfigured');
    }
    await Promise.all(retired.map((i) => i.close()));
    for (const name of [...added, ...changed]) this.#add(name, servers[name] as McpServerConfig);
    await Promise.all([...added, ...changed].map((name) => this.#connections.get(name)?.start()));
    return { added, changed, removed };
  }

  /**
   * Connects to every server in parallel and lists their tools. Resolves when each server is
   * ready or has failed; a failure is logged once, shown in `status()` and retried in the
   * background, and never rejects this promise.
   */
  start(): Promise<void> {
    this.#starting ??= Promise.all([...this.#connections.values()].map((c) => c.start())).then(() => undefined);
    return this.#starting;
  }

  /** Tools of one server, or of all servers; the last known list while a server reconnects. */
  tools(server?: string): UpstreamTool[] {
    if (server !== undefined) return [...(this.#connections.get(server)?.tools ?? [])];
    return [...this.#connections.values()].flatMap((c) => c.tools);
  }

  status(): Record<string, UpstreamServerStatus> {
    const out: Record<string, UpstreamServerStatus> = {};
    for (const [name, instances] of this.#instances) {
      const counters = this.#counters.get(name) ?? { calls: 0, failures: 0, totalMs: 0 };
      out[name] = { ...instances.status(), calls: counters.calls, failures: counters.failures, call_ms_total: counters.totalMs };
    }
    return out;
  }

  /**
   * Calls `tool` on `server` and resolves to its result as a plain value: `structuredContent`
   * when given, else the text parsed as JSON when it parses, else the text; non-text blocks
   * become described objects. Throws UpstreamError: UNKNOWN_TOOL, INVALID_ARGUMENT,
   * TOOL_ERROR, TIMEOUT, ABORTED, SERVER_UNAVAILABLE, CONNECTION_LOST or PROTOCOL_ERROR.
   */
  async callTool(server: string, tool: string, args: unknown, options: CallToolOptions = {}): Promise<unknown> {
    const instances = this.#instances.get(server);
    if (instances === undefined) throw this.#unknownServer(server, tool);
    const counters = this.#counters.get(server) ?? { calls: 0, failures: 0, totalMs: 0 };
    counters.calls++;
    const started = performance.now();
    try {
      // The template's tool list answers unknown tools before any instance is started for them.
      const template = instances.template;
      if (!template.tools.some((t) => t.name === tool)) {
        if (template.state !== 'ready' && template.tools.length === 0) throw template.unavailableError(tool);
        throw this.#unknownTool(template, tool);
      }
      const refuse: LimitRefusals = {
        full: (waiting) =>
          new UpstreamError('SERVER_UNAVAILABLE', `${qualifiedName(server, tool)} was not called: ${waiting} calls already wait for upstream server "${server}" (max_concurrency); try again shortly`, { server, tool }),
        aborted: (signal) => abortedError(server, tool, signal),
      };
      const { connection, release } = await instances.acquire(options.caller ?? LOCAL_CALLER, tool, options.signal, refuse);
      try {
        return await this.#call(connection, tool, args, options);
      } finally {
        release();
      }
    } catch (error) {
      counters.failures++;
      throw error;
    } finally {
      counters.totalMs += performance.now() - started;
    }
  }

  /** Closes every connection and instance and ends every child process. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= Promise.all([...this.#instances.values()].map((i) => i.close())).then(() => undefined);
    return this.#closing;
  }

  /** Closes per-caller instances idle for the idle time or more (also done on a timer); returns how many. */
  sweepIdleInstances(): number {
    let closed = 0;
    for (const instances of this.#instances.values()) closed += instances.sweepIdle();
    return closed;
  }

  async #call(connection: UpstreamConnection, tool: string, args: unknown, options: CallToolOptions): Promise<unknown> {
    const server = connection.name;
    const name = qualifiedName(server, tool);
    const definition = connection.tools.find((t) => t.name === tool) ?? this.#connections.get(server)?.tools.find((t) => t.name === tool);
    if (definition === undefined) {
      if (connection.state !== 'ready' && connection.tools.length === 0) throw connection.unavailableError(tool);
      throw this.#unknownTool(connection, tool);
    }
    const argsObject = args === undefined || args === null ? {} : args;
    if (!isRecord(argsObject)) {
      throw new UpstreamError('INVALID_ARGUMENT', `Invalid arguments for ${name}: arguments must be an object, got ${describeValue(args)}.`, {
        server,
        tool,
      });
    }
    this.#validator.check(definition, argsObject);
    const timeoutMs = positiveMs(options.timeoutMs, this.#serverTimeoutMs.get(server) ?? this.#callTimeoutMs, 'timeoutMs');
    const { signal } = options;
    if (signal?.aborted === true) throw abortedError(server, tool, signal);

    // The SDK never removes its abort listener; a per-call signal keeps a long-lived caller
    // signal (one execute_code run making many calls) free of leftover listeners.
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const result = await connection.call(tool, argsObject, controller.signal, timeoutMs);
      return convertToolResult(server, tool, result);
    } catch (error) {
      if (isDaemonError(error)) throw error;
      // The per-call signal aborts only through the caller's, and carries its reason.
      if (controller.signal.aborted) throw abortedError(server, tool, controller.signal);
      throw mapCallError(error, server, tool, timeoutMs);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  #unknownServer(server: string, tool: string): UpstreamError {
    const names = [...this.#connections.keys()];
    const close = closestNames(server, names);
    const known = names.length === 0 ? 'No upstream servers are configured.' : `Configured servers: ${names.join(', ')}.`;
    const hint = close.length === 0 ? '' : ` Did you mean ${close.map((n) => `"${n}"`).join(' or ')}?`;
    return new UpstreamError('UNKNOWN_TOOL', `Unknown upstream server "${server}" (calling ${qualifiedName(server, tool)}).${hint} ${known}`, {
      server,
      tool,
    });
  }

  #unknownTool(connection: UpstreamConnection, tool: string): UpstreamError {
    const server = connection.name;
    const here = closestNames(
      tool,
      connection.tools.map((t) => t.name),
    ).map((n) => qualifiedName(server, n));
    // The same tool on another server is a likely mix-up too.
    const elsewhere = [...this.#connections.values()]
      .filter((c) => c !== connection && c.tools.some((t) => t.name === tool))
      .map((c) => qualifiedName(c.name, tool));
    const suggestions = [...here, ...elsewhere].slice(0, 3);
    const hint = suggestions.length === 0 ? ` Its tools: ${connection.tools.map((t) => t.name).join(', ') || '(none)'}.` : ` Did you mean ${suggestions.join(' or ')}?`;
    return new UpstreamError('UNKNOWN_TOOL', `Unknown tool "${tool}" on upstream server "${server}".${hint}`, { server, tool });
  }

  #toolsChanged(server: string, tools: UpstreamTool[]): void {
    this.#validator.prune(server, new Set(tools.map((t) => t.name)));
    this.#notify(server, tools);
  }

  #notify(server: string, tools: UpstreamTool[] | null): void {
    if (this.#onToolsChanged === undefined) return;
    try {
      this.#onToolsChanged(server, tools === null ? null : [...tools]);
    } catch (error) {
      this.#logger.error({ code: 'UPSTREAM_LISTENER_FAILED', server, reason: (error as Error).message }, 'onToolsChanged listener threw');
    }
  }
}

function abortedError(server: string, tool: string, signal: AbortSignal): UpstreamError {
  const reason: unknown = signal.reason;
  const why = reason instanceof Error ? reason.message : reason === undefined ? '' : String(reason);
  const suffix = why === '' || why === 'This operation was aborted' ? '' : ` (${why})`;
  return new UpstreamError('ABORTED', `${qualifiedName(server, tool)} was cancelled${suffix}`, { server, tool, cause: reason });
}

function mapCallError(error: unknown, server: string, tool: string, timeoutMs: number): UpstreamError {
  const name = qualifiedName(server, tool);
  const details = { server, tool, cause: error };
  const code = mcpErrorCode(error);
  if (code !== undefined) {
    const { ErrorCode } = sdkClient();
    if (code === ErrorCode.RequestTimeout) {
      return new UpstreamError('TIMEOUT', `${name} timed out after ${timeoutMs} ms (the server was asked to cancel it)`, details);
    }
    if (code === ErrorCode.ConnectionClosed) {
      return new UpstreamError('CONNECTION_LOST', `Upstream server "${server}" closed the connection while ${name} was running; it is reconnecting, the call may be retried`, details);
    }
    return new UpstreamError('TOOL_ERROR', `${name} failed: ${(error as Error).message}`, details);
  }
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof Error && error.name.includes('ZodError')) {
    return new UpstreamError('PROTOCOL_ERROR', `${name} returned a result that is not valid MCP: ${message}`, details);
  }
  return new UpstreamError('CONNECTION_LOST', `${name} could not reach upstream server "${server}": ${message}`, details);
}
