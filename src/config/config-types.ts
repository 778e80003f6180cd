// The daemon's configuration, declared once with its defaults. It is resolved once (file, then
// CODE_EXEC_* environment, then flags), frozen, and passed down; nothing reads process.env later.

/** What an agent may do with its workspace namespace. */
export type WorkspaceAccess = 'none' | 'read' | 'read-write';
/**
 * What an agent may do with skills: 'read' imports its own and published skills, 'read-write' also
 * saves and deletes its own, 'publish' also publishes its skills to the shared library.
 */
export type SkillsAccess = 'none' | 'read' | 'read-write' | 'publish';

/** Deno-style permissions of one agent. */
export interface Permissions {
  /** Workspace namespace access. Default 'read-write'. */
  workspace: WorkspaceAccess;
  /** Skill store access. Default 'read-write'. */
  skills: SkillsAccess;
  /** Upstream tool patterns `SERVER.TOOL`, `*` wildcards allowed (`github.*`). Default ['*']. */
  tools: readonly string[];
  /** Hosts the sandbox's `fetch` may reach (`api.example.com`, `*.example.com`, `host:port`). Default []. */
  net: readonly string[];
  /**
   * Daemon-wide figures (every agent's stats, `/metrics`). Default false for listed agents; the
   * local agent (no agents configured) and the `authToken` caller are the operator.
   */
  operator?: boolean;
}

export interface AgentConfig {
  /** Display name used in logs and stats. */
  name: string;
  /** Bearer token that identifies this agent on HTTP. */
  token: string;
  /** Sub-folder of the workspace root this agent sees as its own root. Default: the agent name. */
  workspace?: string;
  permissions: Permissions;
  /** This agent's own sandbox shares, instead of limits.maxCallsInFlightPerAgent / maxQueuedPerAgent. */
  limits?: AgentLimitsConfig;
}

/** Per-agent overrides of the sandbox shares (same meaning and units as the limits.* keys). */
export interface AgentLimitsConfig {
  maxCallsInFlight?: number;
  maxQueued?: number;
}

/**
 * How many instances of an upstream server run: one for everyone ('shared', the default), one per
 * agent ('per-agent': for stateful servers such as server-memory), or one per workspace namespace
 * ('per-workspace': agents that share a namespace share the instance).
 */
export type UpstreamInstances = 'shared' | 'per-agent' | 'per-workspace';

/** Options every upstream server takes besides how to reach it. */
export interface UpstreamCommon {
  /** Per-request timeout, ms. */
  timeout_ms?: number;
  /** Default 'shared'. */
  instances?: UpstreamInstances;
  /** Calls in flight to one instance at once; more wait their turn. Default: no limit. */
  max_concurrency?: number;
  /** Resident memory of one per-agent or per-workspace instance (its process tree), MiB; past it the instance is closed and the call refused. Default 512. */
  max_memory_mb?: number;
}

/** An upstream MCP server, in the shape MCP clients already use. */
export type McpServerConfig =
  | ({ command: string; args?: readonly string[]; env?: Readonly<Record<string, string>>; cwd?: string } & UpstreamCommon)
  | ({ url: string; headers?: Readonly<Record<string, string>> } & UpstreamCommon);

/** A PII flow rule: which PII types may reach which upstream tools. */
export interface PiiFlowRule {
  /** Tool pattern `SERVER.TOOL` with `*` wildcards. */
  tools: string;
  /** PII types (EMAIL, PHONE, ...) this rule speaks of; ['*'] for all. */
  types: readonly string[];
  action: 'allow' | 'deny';
}

export interface Config {
  /** Interface the HTTP daemon binds. Default '127.0.0.1'. */
  host: string;
  /** TCP port of the HTTP daemon; 0 picks a free one. Default 7337. */
  port: number;
  /** Bearer token required on HTTP when no agents are configured; required for non-loopback binds. */
  authToken?: string;
  /** Extra Host header values accepted besides the bind address and localhost. */
  allowedHosts: readonly string[];
  /** Origin header values accepted (browsers); none by default. */
  allowedOrigins: readonly string[];
  /** Largest HTTP request body, bytes. Default 4 MiB. */
  maxBodyBytes: number;

  /** Tool catalog folder. Default '<repo>/catalog'. */
  catalogDir: string;
  /**
   * Per-user data folder that skillsDir and workspaceDir default into: unset when run from a clone
   * (the repository's skills/ and workspace/), the platform's user data directory when installed.
   */
  dataDir?: string;
  /** Skill store folder. Default '<repo>/skills', or '<dataDir>/skills'. */
  skillsDir: string;
  /** Workspace root; each agent gets a namespace below it. Default '<repo>/workspace', or '<dataDir>/workspace'. */
  workspaceDir: string;

  limits: {
    /** Default wall-clock limit of one execute_code call, seconds. Default 30. */
    defaultTimeoutSeconds: number;
    /** Largest timeout_seconds a caller may ask for. Default 300. */
    maxTimeoutSeconds: number;
    /** Default memory limit of one call, MiB. Default 500. */
    defaultMemoryMb: number;
    /** Largest memory_mb a caller may ask for. Default 2048. */
    maxMemoryMb: number;
    /** Characters of result plus output returned inline before the rest spills to a file. Default 20,000. */
    maxOutputChars: number;
    /** Largest code string accepted, bytes. Default 1 MiB. */
    maxCodeBytes: number;
    /** Largest workspace file read or written, bytes. Default 50 MiB. */
    maxFileBytes: number;
    /** Largest fetch response body, bytes. Default 10 MiB. */
    maxFetchBytes: number;
    /**
     * Calls of one agent running (or sent ahead) at once, in each language's pool: a flood or busy
     * loops of one agent leave the other slots to others. 0 = that pool's slots (processes x
     * threads) minus one, at least 1, when agents are configured; every slot with no agents (one
     * local agent). Default 0. With `redis`, a non-zero limit (or an agent's own maxCallsInFlight)
     * holds across the daemons of the cluster; the automatic one stays per daemon.
     */
    maxCallsInFlightPerAgent: number;
    /** Calls of one agent waiting for a sandbox, per language; past it that agent alone gets OverloadedError. Default 100. */
    maxQueuedPerAgent: number;
    /** Language of execute_code when none is given and detection cannot tell. Default 'javascript'. */
    defaultLanguage: 'javascript' | 'typescript' | 'python';
    /** Calls waiting for a sandbox before new ones are refused. Default 1,000. */
    maxQueuedCalls: number;
    /** Bytes one workspace namespace may hold; a write past it is refused with a message. Default 1 GiB. */
    workspaceQuotaBytes: number;
    /** Files one workspace namespace may hold. Default 10,000. */
    workspaceQuotaFiles: number;
    /** Skills one agent may hold; a save past it is refused with a message. Default 500. */
    skillQuotaCount: number;
    /** Bytes one agent's skills may take (code plus SKILL.md); a save past it is refused. Default 64 MiB. */
    skillQuotaBytes: number;
    /** execute_code spill files (outputs/execution-*.json) kept per namespace; older ones are removed. Default 100. */
    outputFilesKept: number;
    /** Age after which spill files are removed, hours. Default 24. */
    outputFileMaxAgeHours: number;
  };

  sandbox: {
    /** Sandbox processes; each hosts a piscina pool and dies alone on a V8 fatal OOM. Default max(2, cores). */
    processes: number;
    /** Worker threads per sandbox process. 1 keeps memory attribution exact. Default 1. */
    threadsPerProcess: number;
    /** Pyodide worker processes for Python (at most; started on demand unless pythonWarm); 0 disables Python. Default 2. */
    pythonProcesses: number;
    /** An idle Python process exits after this long, seconds; 0 keeps them. Default 300. */
    pythonIdleSeconds?: number;
    /** Start the Python processes with the daemon and keep them (and a standby interpreter) warm. Default false. */
    pythonWarm?: boolean;
  };

  pii: {
    /** Tokenize what execute_code and read_workspace_file return, restore tokens sent to tools. Default false. */
    auto: boolean;
    /** Flow rules, checked in order; first match wins; no match allows. */
    flows: readonly PiiFlowRule[];
    /** No longer used (vaults are bounded in bytes: maxVaultBytesPerAgent); accepted so existing configurations load. Default 100,000. */
    maxTokensPerSession: number;
    /** Bytes one agent's vault may hold (values issued within tokenTtlSeconds, plus a per-token overhead), in memory, on disk and in Redis. Default 16 MiB. */
    maxVaultBytesPerAgent: number;
    /** No longer used (vaults follow agents; see tokenTtlSeconds); accepted so existing configurations load. Default 3,600. */
    sessionTtlSeconds: number;
    /** How long a PII token restores, in any session of its agent, after it was last issued, seconds. Default 86,400 (24 h). */
    tokenTtlSeconds: number;
    /** Folder of the agents' vault files (sealed), so tokens survive restarts; unset: memory only. Default '<dataDir>/pii-vaults' (from a clone '<repo>/.pii-vaults'). */
    vaultDir?: string;
  };

  /** Upstream MCP servers, by name. */
  mcpServers: Readonly<Record<string, McpServerConfig>>;
  /** Agents by bearer token; empty means one local agent with `defaultPermissions`. */
  agents: readonly AgentConfig[];
  /** Permissions of the local agent (stdio, exec, HTTP without agents). */
  defaultPermissions: Permissions;

  /**
   * MCP front: sessions, progress and shutdown. Always set by loadConfig; optional so configs
   * built by hand (tests of other subsystems) stay valid. Read it through `serverSettings()`.
   */
  server?: ServerConfig;

  /**
   * Redis URL shared by the daemons of a cluster: PII vaults, resumable SSE events and skill and
   * catalog change notices. Absent: everything stays in this process (the embedded default).
   */
  redis?: string;
  /** AES-256 key (64 hex digits) sealing PII values and vault secrets in Redis; required with `redis`, the same on every daemon. */
  redisKey?: string;
  /** With `redis`: this daemon's HOST:PORT as the load balancer's upstream list names it. Default: the bound host and port. */
  clusterAddress?: string;

  /**
   * search_tools re-ranks with a sentence encoder (src/catalog/embedding-client.ts), started by the
   * first search (about 200 MB); false keeps search lexical. Default true.
   */
  semanticSearch?: boolean;

  /** Log lines on stderr: 'auto' (human text on a terminal, JSON otherwise), 'json' or 'text'. Default 'auto'. */
  logFormat?: 'auto' | 'json' | 'text';

  /** pino level. Default 'info'. */
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

export interface ServerConfig {
  /** Idle time after which an HTTP MCP session is closed and its state dropped, seconds. Default 1,800. */
  sessionIdleSeconds: number;
  /** Most HTTP MCP sessions open at once; a new one past it is refused with 503. Default 1,000. */
  maxSessions: number;
  /** How long SIGINT/SIGTERM waits for calls in flight before closing anyway, seconds. Default 10. */
  drainSeconds: number;
  /** Interval of execute_code progress notifications when the client sent a progress token, ms. Default 1,000. */
  progressIntervalMs: number;
  /**
   * Which MCP tools tools/list shows: 'seed' (the replaced server's 15 tools, so its prompts work
   * unchanged) or 'minimal' (execute_code, search_tools, get_tool_definition; everything else is
   * reachable from code). Default 'seed'.
   */
  toolProfile: ToolProfile;
  /** Most HTTP MCP sessions one configured agent may hold open; past it that agent alone is refused (429). Without agents every client is the one local agent and only maxSessions applies. Default 64. */
  maxSessionsPerAgent: number;
  /**
   * Bytes one configured agent's HTTP sessions may hold on this daemon: each open session is
   * charged 256 KiB (what an idle one costs), plus the SSE events kept for resumption. Its own
   * oldest events make room first; then its new sessions are refused (429). Default 32 MiB.
   */
  sessionBytesPerAgent: number;
  /** Most open HTTP connections; a new one past it gets 503 and is closed. Default 1,024. */
  maxConnections: number;
  /** Most open HTTP connections from one remote address (all local agents share 127.0.0.1). Default 512. */
  maxConnectionsPerAddress: number;
  /** Most open HTTP connections one configured agent may hold (loopback agents share one address); idle ones are closed first to make room. Default 128. */
  maxConnectionsPerAgent: number;
  /** Time a client has to send a request's headers, seconds. Default 10. */
  headersTimeoutSeconds: number;
  /** Time a client has to send a whole request body (and at most this long between two chunks of it: 10 s), seconds. Default 30. */
  bodyTimeoutSeconds: number;
  /** How long an idle keep-alive connection stays open, seconds. Default 5. */
  keepAliveSeconds: number;
}

/** MCP tool sets a daemon can expose (server.toolProfile). */
export const TOOL_PROFILES = ['seed', 'minimal'] as const;
export type ToolProfile = (typeof TOOL_PROFILES)[number];
