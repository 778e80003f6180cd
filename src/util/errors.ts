// The daemon's error vocabulary, in one place: the closed set of codes its failures carry (what
// callers branch on: tool errors, sandbox `err.code`, HTTP bodies), the codes of its log warnings,
// and the names of its own error classes. The names guest code sees are a separate vocabulary
// (workers/kit/guest-errors.ts): a daemon error reaches a guest only as its code's row says
// (util/daemon-error.ts).
// test/util/error-vocabulary.test.ts reads src/ and fails on a code literal that is not here.

export { GUEST_ERROR, isGuestErrorName, timedOutText, timeoutError } from '../../workers/kit/guest-errors.js';
export type { GuestErrorName } from '../../workers/kit/guest-errors.js';

/** Every code a daemon failure may carry. Add a code here before using it. */
export const ERROR_CODES = [
  // Arguments and options
  'INVALID_ARGUMENT', // an argument is malformed (one spelling: not INVALID_ARGUMENTS)
  'INVALID_OPTION',
  'INVALID_NAME',
  'INVALID_URL',
  'CODE_TOO_LARGE',
  'TOO_LARGE',
  'TOO_MANY_REDIRECTS',
  'SYNTAX_ERROR',
  // Access
  'PERMISSION_DENIED', // the access check refused (src/access)
  'READ_ONLY',
  'NOT_OWNER',
  'PII_FLOW_REFUSED',
  'UNKNOWN_PII_TOKEN',
  // Workspace
  'PATH_INVALID',
  'PATH_OUTSIDE',
  'NOT_FOUND',
  'IS_DIRECTORY',
  'NOT_A_FILE',
  'QUOTA_EXCEEDED',
  'DISK_FULL',
  // Catalog and upstream tools
  'TOOL_NOT_FOUND',
  'CATEGORY_NOT_FOUND',
  'CATALOG_CLOSED',
  'UNKNOWN_TOOL',
  'UNKNOWN_SERVER',
  'UNKNOWN_METHOD',
  'SERVER_NOT_CONFIGURED',
  'SERVER_UNAVAILABLE',
  'CONNECTION_LOST',
  'PROTOCOL_ERROR',
  'TOOL_ERROR',
  'TIMEOUT',
  'ABORTED',
  'FETCH_FAILED',
  // Skills
  'SKILL_NOT_FOUND',
  'SKILL_INVALID',
  'NAME_CONFLICT',
  'IMPORT_NOT_ALLOWED',
  'IMPORT_CYCLE',
  'IMPORT_LANGUAGE',
  'IMPORT_CHANGED',
  'STORE_CLOSED',
  'SAVE_CONFLICT',
  'SAVE_FAILED',
  // Shared store (Redis)
  'STORE_UNAVAILABLE',
  'STORE_FULL',
  'STORE_CORRUPT',
  // Starting the daemon and the command line
  'USAGE',
  'CONFIG_INVALID',
  'DATA_DIR_UNWRITABLE',
  'STARTUP_REFUSED',
  // Anything unexpected (the daemon logged it)
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Stable codes of the daemon's log warnings and events (`logger.warn({ code }, ...)`). */
export const LOG_CODES = [
  'CATALOG_LISTENER_FAILED',
  'CATALOG_RELOAD_FAILED',
  'CATALOG_WATCH_ERROR',
  'CHANGE_NOTICE_LOST',
  'CONFIG_NEEDS_RESTART',
  'CONFIG_RELOAD_FAILED',
  'HOST_LINK_FRAME_TOO_LARGE',
  'HOST_LINK_REFUSED',
  'HOST_LINK_TOO_MANY',
  'JS_POOL_FAILED',
  'OPTIONAL_PACKAGE_MISSING',
  'OUTPUT_SPILL_FAILED',
  'PYTHON_POOL_FAILED',
  'PYTHON_READY',
  'PYTHON_SNAPSHOT_FAILED',
  'PYTHON_SNAPSHOT_HANDED_OVER',
  'PYTHON_SNAPSHOT_HURRIED',
  'PYTHON_SKILL_CHECK_FAILED',
  'REDIS_EVICTION_POLICY',
  'REDIS_UNAVAILABLE',
  'SANDBOX_FATAL',
  'SANDBOX_IDLE_EXIT',
  'SANDBOX_KILL_FAILED',
  'SANDBOX_PROCESS_EXIT',
  'SANDBOX_PROCESS_STOPPED',
  'SANDBOX_RECYCLE',
  'SANDBOX_RECYCLE_UNANSWERED',
  'SANDBOX_SEND_FAILED',
  'SANDBOX_SPAWN_FAILED',
  'SANDBOX_START_ABANDONED',
  'SANDBOX_START_FAILED',
  'SANDBOX_START_INTERRUPTED',
  'SANDBOX_UNRESPONSIVE',
  'SANDBOX_UNSTOPPABLE',
  'SKILL_DEBRIS_REMOVED',
  'SKILL_LISTENER_FAILED',
  'SKILL_METADATA_MISMATCH',
  'SKILL_READ_FAILED',
  'SKILL_RECONCILE_FAILED',
  'SKILL_RECOVERY_FAILED',
  'SKILL_RELOAD_FAILED',
  'SKILL_SAVE_FAILED',
  'SKILL_SAVE_RECOVERED',
  'SKILL_WATCH_ERROR',
  'UPSTREAM_CONFIG_INVALID',
  'UPSTREAM_DISCONNECTED',
  'UPSTREAM_INSTANCES_SHARE_STATE',
  'UPSTREAM_INSTANCE_IDLE',
  'UPSTREAM_INSTANCE_MEMORY',
  'UPSTREAM_INSTANCE_STARTED',
  'UPSTREAM_LISTENER_FAILED',
  'UPSTREAM_LIST_FAILED',
  'UPSTREAM_READY',
  'UPSTREAM_RECONFIGURED',
  'UPSTREAM_RECONNECTED',
  'UPSTREAM_RETRY_FAILED',
  'UPSTREAM_SCHEMA_INVALID',
  'UPSTREAM_SSE_FALLBACK',
  'UPSTREAM_START_FAILED',
  'UPSTREAM_STDERR',
  'UPSTREAM_TOOLS_RELISTED',
  'UPSTREAM_TRANSPORT_ERROR',
] as const;

export type LogCode = (typeof LOG_CODES)[number];

/**
 * The daemon's own error classes: DaemonError (util/daemon-error.ts) and the domains' subclasses of
 * it, each with a stable `code`. Internal: a guest never sees these names; it sees its code's row.
 */
export const DAEMON_ERROR_CLASSES = [
  'DaemonError',
  'CatalogError',
  'ConfigError',
  'DataDirError',
  'HostError',
  'Incompatible', // executor/detect-reading.ts: control flow inside the detector, never escapes it
  'PermissionDenied',
  'SkillError',
  'StartupError',
  'StoreError',
  'UpstreamError',
  'UsageError',
  'WorkspaceError',
] as const;

export type DaemonErrorClass = (typeof DAEMON_ERROR_CLASSES)[number];

const CODES: ReadonlySet<string> = new Set(ERROR_CODES);

/** Whether `code` is one of the daemon's failure codes. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && CODES.has(code);
}
