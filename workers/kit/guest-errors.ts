// The error class names sandboxed code sees (`err.name` in JavaScript, the exception class in
// Python) and that execute_code reports as `error_type`. They are the guest's vocabulary, kept apart
// from the daemon's own error classes (src/util/errors.ts): a daemon class never reaches a guest
// by its own name, it is adapted to one of these. Lives in workers/ because both sides need it and
// workers/ imports nothing from src/.

import type { ErrorInfo } from './protocol.js';

/** Every name the daemon itself gives a guest-facing error (guest code may throw its own too). */
export const GUEST_ERROR = Object.freeze({
  /** A plain failure with nothing more specific to say. */
  Error: 'Error',
  TypeError: 'TypeError',
  RangeError: 'RangeError',
  SyntaxError: 'SyntaxError',
  /** Python's name for a bad value; JavaScript guests see it too where the Python API is shared. */
  ValueError: 'ValueError',
  ImportError: 'ImportError',
  DataCloneError: 'DataCloneError',
  QuotaExceededError: 'QuotaExceededError',
  TypeMismatchError: 'TypeMismatchError',
  /** A permission refusal (the access check's PermissionDenied, a path outside the workspace). */
  PermissionError: 'PermissionError',
  FileNotFoundError: 'FileNotFoundError',
  /** A workspace refusal other than "not found" and "outside". */
  WorkspaceError: 'WorkspaceError',
  /** An upstream tool ran and failed, or could not be reached. */
  ToolError: 'ToolError',
  /** The call's time limit passed (made only by `timeoutError`). */
  TimeoutError: 'TimeoutError',
  MemoryLimitError: 'MemoryLimitError',
  CancelledError: 'CancelledError',
  SandboxCrashError: 'SandboxCrashError',
  OverloadedError: 'OverloadedError',
  ValidationError: 'ValidationError',
  /** A cluster's shared store (Redis) did not answer for a call that needs it. */
  StoreError: 'StoreError',
} as const);

export type GuestErrorName = (typeof GUEST_ERROR)[keyof typeof GUEST_ERROR];

const NAMES: ReadonlySet<string> = new Set(Object.values(GUEST_ERROR));

/** Whether `name` is one of the daemon's guest-facing names. */
export function isGuestErrorName(name: string): name is GuestErrorName {
  return NAMES.has(name);
}

/**
 * THE maker of a timeout: every path that stops a call for time (a worker, the pool, a queue, a
 * cluster slot) reports it as this, with `message` saying which limit and where it was waiting.
 */
export function timeoutError(message: string): ErrorInfo & { type: 'TimeoutError' } {
  return { type: GUEST_ERROR.TimeoutError, message };
}

/** "execution timed out after N seconds" (or without the figure when there is none), then `rest`. */
export function timedOutText(timeoutMs: number | undefined, rest = ''): string {
  return `execution timed out${timeoutMs ? ` after ${timeoutMs / 1000} seconds` : ''}${rest}`;
}
