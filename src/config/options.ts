// Every scalar option, declared once: its key in the JSON file, its CODE_EXEC_* variable, its flag,
// its range and its documentation. Loading, validation and `--help` are all generated from here,
// so an option cannot be documented in one place and parsed differently in another.

import { TOOL_PROFILES } from './config-types.js';

export type OptionKind = 'int' | 'string' | 'bool' | 'list' | 'path' | 'enum';

export interface OptionSpec {
  /** Dotted key in the JSON file and in Config, e.g. 'limits.maxTimeoutSeconds'. */
  key: string;
  /** Environment variable. */
  env: string;
  /** Long flag, without the leading dashes. */
  flag: string;
  kind: OptionKind;
  /** Inclusive range for 'int'. */
  min?: number;
  max?: number;
  /** Accepted values for 'enum'. */
  values?: readonly string[];
  /** Placeholder shown in --help ('N', 'HOST', ...). */
  arg: string;
  /** One line: what it does and its unit. */
  doc: string;
  /** Default as shown in --help. */
  defaultText: string;
  /** Never echoed back in messages. */
  secret?: boolean;
  /** Shown in the help of these commands only; all of them when absent. */
  commands?: readonly CommandName[];
}

export type CommandName = 'serve' | 'stdio' | 'exec' | 'import-catalog';

const KIB = 1024;
const MIB = 1024 * KIB;

export const LOG_FORMATS = ['auto', 'json', 'text'] as const;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const OPTIONS: readonly OptionSpec[] = [
  { key: 'host', env: 'CODE_EXEC_HOST', flag: 'host', kind: 'string', arg: 'HOST', doc: 'Interface the HTTP daemon binds; a non-loopback address needs a token', defaultText: '127.0.0.1', commands: ['serve'] },
  { key: 'port', env: 'CODE_EXEC_PORT', flag: 'port', kind: 'int', min: 0, max: 65535, arg: 'N', doc: 'TCP port of the HTTP daemon; 0 picks a free one (the bound port is logged and written to --port-file)', defaultText: '7337', commands: ['serve'] },
  { key: 'authToken', env: 'CODE_EXEC_TOKEN', flag: 'token', kind: 'string', arg: 'TOKEN', doc: 'Bearer token: required by `serve` on HTTP (at least 16 characters), sent by `stdio --connect` to the daemon', defaultText: 'none', secret: true, commands: ['serve', 'stdio'] },
  { key: 'allowedHosts', env: 'CODE_EXEC_ALLOWED_HOSTS', flag: 'allowed-hosts', kind: 'list', arg: 'H1,H2', doc: 'Host header values accepted besides the bind address, localhost, 127.0.0.1 and [::1]', defaultText: 'none', commands: ['serve'] },
  { key: 'allowedOrigins', env: 'CODE_EXEC_ALLOWED_ORIGINS', flag: 'allowed-origins', kind: 'list', arg: 'O1,O2', doc: 'Origin header values accepted (browser clients), e.g. http://localhost:6274; loopback origins are accepted', defaultText: 'none', commands: ['serve'] },
  { key: 'maxBodyBytes', env: 'CODE_EXEC_MAX_BODY_BYTES', flag: 'max-body-bytes', kind: 'int', min: KIB, max: 1024 * MIB, arg: 'BYTES', doc: 'Largest HTTP request body, bytes; larger bodies get 413', defaultText: String(4 * MIB), commands: ['serve'] },

  { key: 'dataDir', env: 'CODE_EXEC_DATA_DIR', flag: 'data-dir', kind: 'path', arg: 'DIR', doc: 'Per-user data folder; skills/ and workspace/ default below it (created at start; upgrades never touch it)', defaultText: 'the repository when run from a clone; else ~/.local/share/code-execution-mcp (XDG_DATA_HOME), ~/Library/Application Support/code-execution-mcp, %LOCALAPPDATA%\\code-execution-mcp' },
  { key: 'catalogDir', env: 'CODE_EXEC_CATALOG_DIR', flag: 'catalog-dir', kind: 'path', arg: 'DIR', doc: 'Tool catalog folder (CATEGORY/TOOL.json)', defaultText: '<package>/catalog' },
  { key: 'skillsDir', env: 'CODE_EXEC_SKILLS_DIR', flag: 'skills-dir', kind: 'path', arg: 'DIR', doc: 'Skill store folder (NAME/index.js + SKILL.md)', defaultText: '<data-dir>/skills' },
  { key: 'workspaceDir', env: 'CODE_EXEC_WORKSPACE_DIR', flag: 'workspace-dir', kind: 'path', arg: 'DIR', doc: 'Workspace root; each agent sees its own namespace below it', defaultText: '<data-dir>/workspace' },

  { key: 'limits.defaultTimeoutSeconds', env: 'CODE_EXEC_DEFAULT_TIMEOUT_SECONDS', flag: 'default-timeout-seconds', kind: 'int', min: 1, max: 3600, arg: 'S', doc: 'timeout_seconds of execute_code when the caller gives none, seconds', defaultText: '30' },
  { key: 'limits.maxTimeoutSeconds', env: 'CODE_EXEC_MAX_TIMEOUT_SECONDS', flag: 'max-timeout-seconds', kind: 'int', min: 1, max: 3600, arg: 'S', doc: 'Largest timeout_seconds a caller may ask for, seconds', defaultText: '300' },
  { key: 'limits.defaultMemoryMb', env: 'CODE_EXEC_DEFAULT_MEMORY_MB', flag: 'default-memory-mb', kind: 'int', min: 16, max: 65536, arg: 'MB', doc: 'memory_mb of execute_code when the caller gives none, MiB', defaultText: '500' },
  { key: 'limits.maxMemoryMb', env: 'CODE_EXEC_MAX_MEMORY_MB', flag: 'max-memory-mb', kind: 'int', min: 16, max: 65536, arg: 'MB', doc: 'Largest memory_mb a caller may ask for, MiB', defaultText: '2048' },
  { key: 'limits.maxOutputChars', env: 'CODE_EXEC_MAX_OUTPUT_CHARS', flag: 'max-output-chars', kind: 'int', min: 100, max: 100_000_000, arg: 'N', doc: 'Characters of result plus output returned inline; the rest spills to a workspace file', defaultText: '20000' },
  { key: 'limits.maxCodeBytes', env: 'CODE_EXEC_MAX_CODE_BYTES', flag: 'max-code-bytes', kind: 'int', min: 1, max: 64 * MIB, arg: 'BYTES', doc: 'Largest code string accepted by execute_code, bytes', defaultText: String(MIB) },
  { key: 'limits.maxFileBytes', env: 'CODE_EXEC_MAX_FILE_BYTES', flag: 'max-file-bytes', kind: 'int', min: 1, max: 4096 * MIB, arg: 'BYTES', doc: 'Largest workspace file read or written, bytes', defaultText: String(50 * MIB) },
  { key: 'limits.maxFetchBytes', env: 'CODE_EXEC_MAX_FETCH_BYTES', flag: 'max-fetch-bytes', kind: 'int', min: 1, max: 1024 * MIB, arg: 'BYTES', doc: 'Largest body the sandbox fetch returns, bytes', defaultText: String(10 * MIB) },
  { key: 'limits.maxCallsInFlightPerAgent', env: 'CODE_EXEC_MAX_CALLS_IN_FLIGHT_PER_AGENT', flag: 'max-calls-in-flight-per-agent', kind: 'int', min: 0, max: 4096, arg: 'N', doc: "Calls of one agent running at once in each language's pool; 0 = the pool's slots minus one (at least 1) with agents configured, so one agent never holds them all; every slot with no agents", defaultText: '0' },
  { key: 'limits.maxQueuedPerAgent', env: 'CODE_EXEC_MAX_QUEUED_PER_AGENT', flag: 'max-queued-per-agent', kind: 'int', min: 0, max: 1_000_000, arg: 'N', doc: 'Calls of one agent waiting for a sandbox (per language); past it that agent alone gets OverloadedError', defaultText: '100' },
  { key: 'limits.defaultLanguage', env: 'CODE_EXEC_DEFAULT_LANGUAGE', flag: 'default-language', kind: 'enum', values: ['javascript', 'typescript', 'python'], arg: 'LANG', doc: 'Language of execute_code when the caller gives none and the code does not tell (it is detected first)', defaultText: 'javascript' },
  { key: 'limits.maxQueuedCalls', env: 'CODE_EXEC_MAX_QUEUED_CALLS', flag: 'max-queued-calls', kind: 'int', min: 1, max: 1_000_000, arg: 'N', doc: 'Calls waiting for a sandbox before new ones fail with OverloadedError', defaultText: '1000' },
  { key: 'limits.workspaceQuotaBytes', env: 'CODE_EXEC_WORKSPACE_QUOTA_BYTES', flag: 'workspace-quota-bytes', kind: 'int', min: 1, max: Number.MAX_SAFE_INTEGER, arg: 'BYTES', doc: 'Bytes one workspace namespace may hold; writes past it are refused', defaultText: String(1024 * MIB) },
  { key: 'limits.workspaceQuotaFiles', env: 'CODE_EXEC_WORKSPACE_QUOTA_FILES', flag: 'workspace-quota-files', kind: 'int', min: 1, max: 10_000_000, arg: 'N', doc: 'Files one workspace namespace may hold; new files past it are refused', defaultText: '10000' },
  { key: 'limits.skillQuotaCount', env: 'CODE_EXEC_SKILL_QUOTA_COUNT', flag: 'skill-quota-count', kind: 'int', min: 1, max: 1_000_000, arg: 'N', doc: 'Skills one agent may hold; saves past it are refused (the operator library on disk is not counted)', defaultText: '500' },
  { key: 'limits.skillQuotaBytes', env: 'CODE_EXEC_SKILL_QUOTA_BYTES', flag: 'skill-quota-bytes', kind: 'int', min: 1, max: Number.MAX_SAFE_INTEGER, arg: 'BYTES', doc: "Bytes one agent's skills may take (code plus SKILL.md); saves past it are refused", defaultText: String(64 * MIB) },
  { key: 'limits.outputFilesKept', env: 'CODE_EXEC_OUTPUT_FILES_KEPT', flag: 'output-files-kept', kind: 'int', min: 1, max: 1_000_000, arg: 'N', doc: 'execute_code spill files (outputs/execution-*.json) kept per namespace; the oldest go first', defaultText: '100' },
  { key: 'limits.outputFileMaxAgeHours', env: 'CODE_EXEC_OUTPUT_FILE_MAX_AGE_HOURS', flag: 'output-file-max-age-hours', kind: 'int', min: 1, max: 24 * 3650, arg: 'H', doc: 'Age after which execute_code spill files are removed, hours', defaultText: '24' },

  { key: 'sandbox.processes', env: 'CODE_EXEC_SANDBOX_PROCESSES', flag: 'sandbox-processes', kind: 'int', min: 1, max: 64, arg: 'N', doc: 'Sandbox processes, each hosting a worker pool (a fatal OOM kills only one)', defaultText: 'max(2, CPU cores)' },
  { key: 'sandbox.threadsPerProcess', env: 'CODE_EXEC_THREADS_PER_PROCESS', flag: 'threads-per-process', kind: 'int', min: 1, max: 64, arg: 'N', doc: 'Worker threads per sandbox process', defaultText: '1' },
  { key: 'sandbox.pythonProcesses', env: 'CODE_EXEC_PYTHON_PROCESSES', flag: 'python-processes', kind: 'int', min: 0, max: 16, arg: 'N', doc: 'Pyodide processes for Python at most (one interpreter each, bound to one agent at a time; started by the first Python call unless --python-warm); 0 disables Python', defaultText: '2' },
  { key: 'sandbox.pythonIdleSeconds', env: 'CODE_EXEC_PYTHON_IDLE_SECONDS', flag: 'python-idle-seconds', kind: 'int', min: 0, max: 7 * 86_400, arg: 'S', doc: 'A Python process idle this long exits, seconds (the next Python call starts one again, from the interpreter snapshot, in well under a second); 0 keeps them', defaultText: '300', commands: ['serve', 'stdio'] },
  { key: 'sandbox.pythonWarm', env: 'CODE_EXEC_PYTHON_WARM', flag: 'python-warm', kind: 'bool', arg: 'BOOL', doc: 'Start the Python processes with the daemon and keep them, each with a warm standby interpreter (no start-up on the first Python call; about 250 MB each); false: started on demand', defaultText: 'false', commands: ['serve', 'stdio'] },

  { key: 'pii.auto', env: 'CODE_EXEC_PII_AUTO', flag: 'pii-auto', kind: 'bool', arg: 'BOOL', doc: 'Tokenize PII in what execute_code and read_workspace_file return; restore tokens sent to upstream tools', defaultText: 'false' },
  { key: 'pii.maxVaultBytesPerAgent', env: 'CODE_EXEC_PII_MAX_VAULT_BYTES_PER_AGENT', flag: 'pii-max-vault-bytes-per-agent', kind: 'int', min: 4096, max: Number.MAX_SAFE_INTEGER, arg: 'BYTES', doc: "Bytes one agent's PII vault may hold (values issued within pii.tokenTtlSeconds, plus 160 per token), in memory, on disk and in Redis; new values past it are refused, tokens already issued still restore", defaultText: String(16 * MIB) },
  { key: 'pii.maxTokensPerSession', env: 'CODE_EXEC_PII_MAX_TOKENS_PER_SESSION', flag: 'pii-max-tokens-per-session', kind: 'int', min: 1, max: 10_000_000, arg: 'N', doc: 'No longer used: vaults are bounded in bytes by pii.maxVaultBytesPerAgent (accepted so existing configurations load)', defaultText: '100000' },
  { key: 'pii.tokenTtlSeconds', env: 'CODE_EXEC_PII_TOKEN_TTL_SECONDS', flag: 'pii-token-ttl-seconds', kind: 'int', min: 1, max: 366 * 86_400, arg: 'S', doc: 'How long a PII token restores, in any session of the agent that made it (across reconnects and restarts), after it was last issued, seconds', defaultText: '86400' },
  { key: 'pii.vaultDir', env: 'CODE_EXEC_PII_VAULT_DIR', flag: 'pii-vault-dir', kind: 'path', arg: 'DIR', doc: 'Folder of the agents\' PII vaults, sealed with a key kept beside them (vault.key), so tokens survive restarts', defaultText: '<data-dir>/pii-vaults' },
  { key: 'pii.sessionTtlSeconds', env: 'CODE_EXEC_PII_SESSION_TTL_SECONDS', flag: 'pii-session-ttl-seconds', kind: 'int', min: 1, max: 30 * 86_400, arg: 'S', doc: 'No longer used: PII vaults follow agents, and tokens last pii.tokenTtlSeconds (accepted so existing configurations load)', defaultText: '3600' },

  { key: 'server.sessionIdleSeconds', env: 'CODE_EXEC_SESSION_IDLE_SECONDS', flag: 'session-idle-seconds', kind: 'int', min: 1, max: 7 * 86_400, arg: 'S', doc: 'Idle time after which an HTTP MCP session is closed, seconds', defaultText: '1800', commands: ['serve'] },
  { key: 'server.maxSessions', env: 'CODE_EXEC_MAX_SESSIONS', flag: 'max-sessions', kind: 'int', min: 1, max: 100_000, arg: 'N', doc: 'Most HTTP MCP sessions open at once; more get 503', defaultText: '1000', commands: ['serve'] },
  { key: 'server.drainSeconds', env: 'CODE_EXEC_DRAIN_SECONDS', flag: 'drain-seconds', kind: 'int', min: 0, max: 600, arg: 'S', doc: 'On SIGINT/SIGTERM, how long calls in flight may finish before the daemon closes anyway, seconds', defaultText: '10', commands: ['serve', 'stdio'] },
  { key: 'server.progressIntervalMs', env: 'CODE_EXEC_PROGRESS_INTERVAL_MS', flag: 'progress-interval-ms', kind: 'int', min: 50, max: 60_000, arg: 'MS', doc: 'Interval of execute_code progress notifications (when the client sends a progress token), ms', defaultText: '1000', commands: ['serve', 'stdio'] },
  { key: 'server.toolProfile', env: 'CODE_EXEC_TOOL_PROFILE', flag: 'tool-profile', kind: 'enum', values: TOOL_PROFILES, arg: 'PROFILE', doc: 'MCP tools shown: seed (the 15 tools of the replaced server) or minimal (execute_code, search_tools, get_tool_definition; the rest from code)', defaultText: 'seed', commands: ['serve', 'stdio'] },
  { key: 'server.maxSessionsPerAgent', env: 'CODE_EXEC_MAX_SESSIONS_PER_AGENT', flag: 'max-sessions-per-agent', kind: 'int', min: 1, max: 100_000, arg: 'N', doc: 'Most HTTP MCP sessions one configured agent may hold open; past it that agent gets 429, others are not affected (without agents only --max-sessions applies)', defaultText: '64', commands: ['serve'] },
  { key: 'server.sessionBytesPerAgent', env: 'CODE_EXEC_SESSION_BYTES_PER_AGENT', flag: 'session-bytes-per-agent', kind: 'int', min: 1_048_576, max: 1_073_741_824, arg: 'BYTES', doc: 'Bytes one configured agent\'s HTTP sessions may hold on a daemon: 256 KiB per open session plus the SSE events kept for resumption; its oldest events go first, then its new sessions get 429', defaultText: '33554432', commands: ['serve'] },
  { key: 'server.maxConnections', env: 'CODE_EXEC_MAX_CONNECTIONS', flag: 'max-connections', kind: 'int', min: 1, max: 1_000_000, arg: 'N', doc: 'Most open HTTP connections; more get 503 with Retry-After and are closed', defaultText: '1024', commands: ['serve'] },
  { key: 'server.maxConnectionsPerAddress', env: 'CODE_EXEC_MAX_CONNECTIONS_PER_ADDRESS', flag: 'max-connections-per-address', kind: 'int', min: 1, max: 1_000_000, arg: 'N', doc: 'Most open HTTP connections from one remote address (local agents all come from 127.0.0.1)', defaultText: '512', commands: ['serve'] },
  { key: 'server.maxConnectionsPerAgent', env: 'CODE_EXEC_MAX_CONNECTIONS_PER_AGENT', flag: 'max-connections-per-agent', kind: 'int', min: 1, max: 1_000_000, arg: 'N', doc: 'Most open HTTP connections one configured agent may hold; its next request gets 503', defaultText: '128', commands: ['serve'] },
  { key: 'server.headersTimeoutSeconds', env: 'CODE_EXEC_HEADERS_TIMEOUT_SECONDS', flag: 'headers-timeout-seconds', kind: 'int', min: 1, max: 3600, arg: 'S', doc: 'Time a client has to send the headers of a request, seconds (then 408)', defaultText: '10', commands: ['serve'] },
  { key: 'server.bodyTimeoutSeconds', env: 'CODE_EXEC_BODY_TIMEOUT_SECONDS', flag: 'body-timeout-seconds', kind: 'int', min: 1, max: 3600, arg: 'S', doc: 'Time a client has to send a whole request body, seconds; a 10 s pause inside a body also ends it (408)', defaultText: '30', commands: ['serve'] },
  { key: 'server.keepAliveSeconds', env: 'CODE_EXEC_KEEP_ALIVE_SECONDS', flag: 'keep-alive-seconds', kind: 'int', min: 1, max: 3600, arg: 'S', doc: 'How long an idle keep-alive HTTP connection stays open, seconds', defaultText: '5', commands: ['serve'] },

  { key: 'redis', env: 'CODE_EXEC_REDIS', flag: 'redis', kind: 'string', arg: 'URL', doc: 'Redis shared by the daemons of a cluster (redis://[:PASSWORD@]HOST:PORT[/DB]): PII vaults, resumable streams and change notices live there; none keeps everything in this process', defaultText: 'none', secret: true, commands: ['serve', 'stdio'] },
  { key: 'redisKey', env: 'CODE_EXEC_REDIS_KEY', flag: 'redis-key', kind: 'string', arg: 'KEY', doc: 'AES-256 key sealing what the daemons keep in Redis (64 hex digits; the same on every daemon; required with --redis): openssl rand -hex 32', defaultText: 'none', secret: true, commands: ['serve', 'stdio'] },

  { key: 'clusterAddress', env: 'CODE_EXEC_CLUSTER_ADDRESS', flag: 'cluster-address', kind: 'string', arg: 'HOST:PORT', doc: "With --redis: this daemon's address exactly as the load balancer's upstream list writes it (session ids are minted to hash back to it)", defaultText: 'the bound host:port', commands: ['serve'] },

  { key: 'logFormat', env: 'CODE_EXEC_LOG_FORMAT', flag: 'log-format', kind: 'enum', values: LOG_FORMATS, arg: 'FORMAT', doc: 'Log lines on stderr: auto (human text on a terminal, JSON lines otherwise), json or text', defaultText: 'auto', commands: ['serve'] },
  { key: 'semanticSearch', env: 'CODE_EXEC_SEMANTIC_SEARCH', flag: 'semantic-search', kind: 'bool', arg: 'BOOL', doc: 'Re-rank search_tools with a sentence encoder (Universal Sentence Encoder lite in a worker thread, started by the first search: about 200 MB, catalogs up to 3,000 tools); false: lexical only', defaultText: 'true' },
  { key: 'logLevel', env: 'CODE_EXEC_LOG_LEVEL', flag: 'log-level', kind: 'enum', values: LOG_LEVELS, arg: 'LEVEL', doc: `Log level on stderr (${LOG_LEVELS.join(', ')})`, defaultText: 'info' },
];

/** Options that only the JSON file can carry (structured values). */
export const FILE_ONLY_OPTIONS: readonly { key: string; doc: string }[] = [
  { key: 'mcpServers', doc: 'Upstream MCP servers: { NAME: { "command", "args"?, "env"?, "cwd"? } | { "url", "headers"? } } (the shape MCP clients use)' },
  { key: 'agents', doc: 'Agents by bearer token: [{ "name", "token", "workspace"?, "permissions"?, "limits"?: { "maxCallsInFlight"?, "maxQueued"? } }]; each gets its own workspace namespace (its name, or "workspace": another agent\'s) and sandbox share; "permissions" as in defaultPermissions, missing fields taken from it' },
  { key: 'defaultPermissions', doc: 'Permissions of the local agent: { "workspace": none|read|read-write, "skills": none|read|read-write|publish (publish: also share skills in the library), "tools": ["SERVER.TOOL" patterns], "net": [hosts], "operator": true|false (daemon-wide figures: /metrics, /healthz details, every agent\'s stats) }' },
  { key: 'pii.flows', doc: 'PII flow rules: [{ "tools": "SERVER.TOOL pattern", "types": ["EMAIL", ...], "action": "allow"|"deny" }], first match wins' },
];

export function optionByKey(key: string): OptionSpec | undefined {
  return OPTIONS.find((o) => o.key === key);
}
