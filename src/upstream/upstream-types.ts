// The contract of the upstream subsystem: what the catalog, the sandbox bridge and the MCP front
// see of the MCP servers this daemon is a client of. Kept apart so tests can swap in a fake.
import type { McpServerConfig } from '../config/config-types.js';
import type { Logger } from '../util/logger.js';

/** One tool of an upstream server, as that server lists it. */
export interface UpstreamTool {
  /** Name of the server in the `mcpServers` configuration. */
  server: string;
  /** Tool name as the server spells it. */
  name: string;
  /** Human-readable title, when the server gives one. */
  title?: string;
  /** The server's description; '' when it gives none. */
  description: string;
  /** JSON Schema of the arguments. */
  inputSchema: object;
  /** JSON Schema of `structuredContent`, when the tool declares one. */
  outputSchema?: object;
  /** MCP tool annotations (readOnlyHint, destructiveHint, ...). */
  annotations?: object;
}

/**
 * Where a server's connection stands:
 * - 'connecting': the first attempt is under way;
 * - 'ready': connected, tools listed, calls go through;
 * - 'reconnecting': was ready, the connection was lost, retrying with backoff (last tools kept);
 * - 'failed': never came up; still retried with backoff, the reason is in `error`;
 * - 'closed': the manager was closed.
 */
export type UpstreamState = 'connecting' | 'ready' | 'reconnecting' | 'failed' | 'closed';

/** How a server is reached. 'sse' is the legacy HTTP+SSE transport, used as a fallback. */
export type UpstreamTransportKind = 'stdio' | 'streamable-http' | 'sse';

export interface UpstreamServerStatus {
  state: UpstreamState;
  /** Tools currently listed (the last known list while reconnecting). */
  tools: number;
  /** Why the server is not ready, or the last error seen. */
  error?: string;
  /** Connection attempts after the first one. */
  restarts: number;
  /** `callTool` invocations for this server. */
  calls: number;
  /** Of those, the ones that threw. */
  failures: number;
  /** Wall-clock time of those calls, ms in all (a Prometheus _sum). */
  call_ms_total?: number;
  transport: UpstreamTransportKind;
  /** Process id of the child, for stdio servers that are running (the template of a per-caller server). */
  pid?: number;
  /** How many instances run: 'shared', 'per-agent' or 'per-workspace'. */
  instances_mode?: 'shared' | 'per-agent' | 'per-workspace';
  /** Per-caller instances running now ('per-agent' and 'per-workspace' only). */
  instances?: number;
  /** Calls waiting for a slot under `max_concurrency`. */
  waiting?: number;
}

/** Called with a server's new tool list each time it is (re)listed and differs from the last. */
export type ToolsChangedListener = (server: string, tools: UpstreamTool[] | null) => void;

export interface UpstreamBackoffOptions {
  /** First retry delay, ms. Default 250. */
  initialMs: number;
  /** Largest retry delay, ms. Default 30,000. */
  maxMs: number;
  /** A connection that stayed up this long resets the backoff, ms. Default 60,000. */
  resetAfterMs: number;
}

export interface UpstreamManagerOptions {
  /** Upstream servers by name, as in `mcpServers`. */
  servers: Readonly<Record<string, McpServerConfig>>;
  logger: Logger;
  /** See {@link ToolsChangedListener}. `null` is never passed today: last known tools are kept while down. */
  onToolsChanged?: ToolsChangedListener;
  /** Default timeout of one tool call, ms; a server's `timeout_ms` overrides it. Default 60,000. */
  callTimeoutMs?: number;
  /** Timeout of the MCP handshake and of listing tools, ms. Default 30,000. */
  connectTimeoutMs?: number;
  /** Reconnection backoff; doubles from `initialMs` to `maxMs` with ±20% jitter. */
  backoff?: Partial<UpstreamBackoffOptions>;
  /** Name and version this daemon announces to upstream servers. */
  clientInfo?: { name: string; version: string };
  /** Clock, ms; injectable for tests. Default `Date.now`. */
  now?: () => number;
  /** Idle time after which a per-agent or per-workspace instance is closed, ms. Default 600,000. */
  instanceIdleMs?: number;
  /** Per-agent or per-workspace instances of one server kept at once. Default 32. */
  maxInstances?: number;
}

export interface CallToolOptions {
  /** Aborts the call (also while it waits for an instance or a slot); the server is sent `notifications/cancelled`. */
  signal?: AbortSignal;
  /** Who the call is for: picks the instance of a per-agent or per-workspace server. Default: the local agent. */
  caller?: { agent: string; workspaceNamespace: string };
  /** Timeout of this call, ms. Default: the server's `timeout_ms`, else `callTimeoutMs`. */
  timeoutMs?: number;
}
