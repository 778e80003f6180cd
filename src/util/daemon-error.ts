// The one daemon error type and the one table that says what each of its codes means on every
// surface: the name a guest sees (err.name, the Python exception class, error_type), the outcome an
// MCP tool call records, the HTTP status, and the hint a tool error ends with. Every surface (MCP
// tools and resources, the sandbox's host methods, HTTP, the command line) adapts an error with
// `adaptError` and nothing else, so a code means the same thing wherever it surfaces.
// test/util/daemon-error.test.ts fails on an `instanceof` over a daemon error class outside the
// file that defines it.

import { GUEST_ERROR, isGuestErrorName } from '../../workers/kit/guest-errors.js';
import type { GuestErrorName } from '../../workers/kit/guest-errors.js';
import type { ErrorCode } from './errors.js';

/**
 * How a tool call ended, for logs and metrics:
 * - 'ok': success;
 * - 'error': the tool ran and failed (guest code threw, file not found, ...);
 * - 'invalid': arguments rejected before the tool ran, or unknown tool;
 * - 'denied': the agent lacks a permission;
 * - 'timeout', 'memory', 'cancelled': execute_code limits and cancellation;
 * - 'overloaded': queue full;
 * - 'internal': a bug on our side (logged with its stack).
 */
export type CallOutcome = 'ok' | 'error' | 'invalid' | 'denied' | 'timeout' | 'memory' | 'cancelled' | 'overloaded' | 'internal';

export const CALL_OUTCOMES: readonly CallOutcome[] = ['ok', 'error', 'invalid', 'denied', 'timeout', 'memory', 'cancelled', 'overloaded', 'internal'];

/** What one code means on every surface. */
export interface ErrorRow {
  /** The name guest code sees. */
  readonly guest: GuestErrorName;
  /** How an MCP tool call that failed with it ended. */
  readonly outcome: CallOutcome;
  /** The HTTP status of an answer that failed with it. */
  readonly http: number;
  /** Whether a tool error names the tool ("read_workspace_file failed: ..."): refusals of a store the tool used. */
  readonly named?: true;
  /** What to do, appended to a tool error's message. */
  readonly hint?: string;
}

const row = (guest: GuestErrorName, outcome: CallOutcome, http: number, extra: { named?: true; hint?: string } = {}): ErrorRow => Object.freeze({ guest, outcome, http, ...extra });
const { Error: PLAIN, TypeError: TYPE, ValueError: VALUE, ImportError: IMPORT, PermissionError: PERMISSION, ToolError: TOOL } = GUEST_ERROR;
const named = { named: true } as const;

/** THE table: one row per code. Typed over every code, so a new code cannot be added without its row. */
export const ERROR_ROWS: Readonly<Record<ErrorCode, ErrorRow>> = Object.freeze({
  // Arguments and options
  INVALID_ARGUMENT: row(TYPE, 'invalid', 400),
  INVALID_OPTION: row(VALUE, 'invalid', 400),
  INVALID_NAME: row(VALUE, 'invalid', 400),
  INVALID_URL: row(TYPE, 'invalid', 400),
  CODE_TOO_LARGE: row(VALUE, 'invalid', 413),
  TOO_LARGE: row(GUEST_ERROR.WorkspaceError, 'error', 413, { ...named, hint: 'split the data into smaller files, or process it inside execute_code' }),
  TOO_MANY_REDIRECTS: row(TYPE, 'error', 502),
  SYNTAX_ERROR: row(VALUE, 'invalid', 400),
  // Access
  PERMISSION_DENIED: row(PERMISSION, 'denied', 403),
  READ_ONLY: row(PERMISSION, 'denied', 403),
  NOT_OWNER: row(PERMISSION, 'denied', 403),
  PII_FLOW_REFUSED: row(PERMISSION, 'denied', 403),
  UNKNOWN_PII_TOKEN: row(PERMISSION, 'denied', 403),
  // Workspace
  PATH_INVALID: row(GUEST_ERROR.WorkspaceError, 'error', 400, { ...named, hint: 'use a relative path such as "data/input.json"' }),
  PATH_OUTSIDE: row(PERMISSION, 'denied', 403, { ...named, hint: 'use a path relative to your workspace, without ".." or absolute paths' }),
  NOT_FOUND: row(GUEST_ERROR.FileNotFoundError, 'error', 404, { ...named, hint: 'call list_workspace_files to see the files that exist' }),
  IS_DIRECTORY: row(GUEST_ERROR.WorkspaceError, 'error', 400, { ...named, hint: 'pass a file name, or use list_workspace_files for a folder' }),
  NOT_A_FILE: row(GUEST_ERROR.WorkspaceError, 'error', 400, named),
  QUOTA_EXCEEDED: row(GUEST_ERROR.QuotaExceededError, 'error', 507, named),
  DISK_FULL: row(GUEST_ERROR.WorkspaceError, 'error', 507, named),
  // Catalog and upstream tools
  TOOL_NOT_FOUND: row(VALUE, 'error', 404),
  CATEGORY_NOT_FOUND: row(VALUE, 'error', 404),
  CATALOG_CLOSED: row(VALUE, 'error', 503),
  UNKNOWN_TOOL: row(TYPE, 'invalid', 404),
  UNKNOWN_SERVER: row(TYPE, 'invalid', 404),
  UNKNOWN_METHOD: row(PLAIN, 'invalid', 404),
  SERVER_NOT_CONFIGURED: row(TOOL, 'error', 404),
  SERVER_UNAVAILABLE: row(TOOL, 'error', 503),
  CONNECTION_LOST: row(TOOL, 'error', 502),
  PROTOCOL_ERROR: row(TOOL, 'error', 502),
  TOOL_ERROR: row(TOOL, 'error', 502),
  TIMEOUT: row(TOOL, 'error', 504),
  ABORTED: row(TOOL, 'cancelled', 499),
  FETCH_FAILED: row(TYPE, 'error', 502),
  // Skills
  SKILL_NOT_FOUND: row(IMPORT, 'error', 404),
  SKILL_INVALID: row(VALUE, 'error', 422),
  NAME_CONFLICT: row(VALUE, 'error', 409),
  IMPORT_NOT_ALLOWED: row(VALUE, 'error', 422),
  IMPORT_CYCLE: row(IMPORT, 'error', 422),
  IMPORT_LANGUAGE: row(VALUE, 'error', 422),
  IMPORT_CHANGED: row(IMPORT, 'error', 409),
  STORE_CLOSED: row(VALUE, 'error', 503),
  SAVE_CONFLICT: row(VALUE, 'error', 409),
  SAVE_FAILED: row(VALUE, 'error', 500),
  // Shared store (Redis): its message says what is unavailable and that it comes back.
  STORE_UNAVAILABLE: row(GUEST_ERROR.StoreError, 'error', 503, named),
  STORE_FULL: row(GUEST_ERROR.StoreError, 'error', 507, named),
  STORE_CORRUPT: row(GUEST_ERROR.StoreError, 'error', 500, named),
  // Starting the daemon and the command line
  USAGE: row(VALUE, 'invalid', 400),
  CONFIG_INVALID: row(PLAIN, 'invalid', 400),
  DATA_DIR_UNWRITABLE: row(PLAIN, 'invalid', 500),
  STARTUP_REFUSED: row(PLAIN, 'error', 500),
  // Anything unexpected (the daemon logged it)
  INTERNAL: row(PLAIN, 'internal', 500),
});

/**
 * The one error type of the daemon: a stable code whose row says what every surface shows, and a
 * message that says what was wrong and how to fix it. The domains' classes (SkillError,
 * WorkspaceError, ...) are this type with their own details.
 */
export class DaemonError extends Error {
  /** The name a guest sees, when the sandbox method that refused names it itself (a bad argument's TypeError). */
  readonly guestName: GuestErrorName | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: { guest?: GuestErrorName; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DaemonError';
    this.guestName = options.guest;
  }
}

export function isDaemonError(error: unknown, ...codes: ErrorCode[]): error is DaemonError {
  return error instanceof DaemonError && (codes.length === 0 || codes.includes(error.code));
}

/** An error as every surface shows it. */
export interface AdaptedError extends ErrorRow {
  code: ErrorCode;
  message: string;
  /** False for anything that is not a DaemonError: a bug, which the surface logs. */
  daemon: boolean;
}

/** THE adapter: what `error` is on every surface. Anything not a DaemonError is INTERNAL. */
export function adaptError(error: unknown): AdaptedError {
  if (error instanceof DaemonError) {
    const r = ERROR_ROWS[error.code];
    return { ...r, guest: error.guestName ?? r.guest, code: error.code, message: error.message, daemon: true };
  }
  const message = error instanceof Error ? error.message : String(error);
  // A guest-named error raised by host code (a TypeError of a bad argument) keeps its name.
  const guest = error instanceof Error && isGuestErrorName(error.name) ? error.name : GUEST_ERROR.Error;
  return { ...ERROR_ROWS.INTERNAL, guest, code: 'INTERNAL', message, daemon: false };
}

/** A tool error's text: the message, named by the tool and followed by the hint where the row says so. */
export function toolErrorText(adapted: AdaptedError, tool: string): string {
  if (!adapted.daemon) return `${tool} failed because of an internal error (${adapted.message}); the daemon logged it. Retry, and report it if it persists.`;
  if (!adapted.named) return adapted.message;
  return `${tool} failed: ${adapted.message}${adapted.hint ? `; ${adapted.hint}` : ''}`;
}
