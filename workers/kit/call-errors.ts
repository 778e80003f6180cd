// The errors a call gets when it is stopped or never starts, written once for the pool host, the
// direct path's threads and the coordinator's handle on a process, so every path says the same.

import { timedOutText, timeoutError } from './guest-errors.js';
import type { AbortReason, ErrorInfo } from './protocol.js';

/** A call stopped while it ran (`reason`), or whose worker died (`err`); `replaced`: its worker was. */
export function stoppedCall(err: unknown, reason: AbortReason | undefined, limits: { timeoutMs: number; memoryMb: number; heapLimitMb: number }, replaced = true): ErrorInfo {
  const e = err as { name?: string; code?: string; message?: string };
  const after = replaced ? '; the worker was stopped and replaced' : '';
  switch (reason) {
    case 'timeout':
      return timeoutError(timedOutText(limits.timeoutMs, after));
    case 'cancelled':
    case 'shutdown':
      return notStarted(reason);
    case 'memory':
      return { type: 'MemoryLimitError', message: `the call used more than its memory_mb limit of ${limits.memoryMb} MB${after}` };
    default:
      break;
  }
  if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
    return { type: 'MemoryLimitError', message: `the call ran out of memory (the sandbox heap limit is ${limits.heapLimitMb} MB); the worker was replaced` };
  }
  return { type: 'SandboxCrashError', message: `the sandbox worker died: ${e?.message ?? String(err)}; it was replaced` };
}

/** A call stopped before any thread started it. */
export function notStarted(reason: AbortReason, timeoutMs?: number): ErrorInfo {
  if (reason === 'timeout') {
    return timeoutError(timedOutText(timeoutMs, ' while waiting for a sandbox thread'));
  }
  if (reason === 'shutdown') return { type: 'CancelledError', message: 'the daemon is shutting down' };
  if (reason === 'memory') return { type: 'MemoryLimitError', message: 'the call was stopped for memory before it started' };
  return { type: 'CancelledError', message: 'the call was cancelled by the client' };
}
