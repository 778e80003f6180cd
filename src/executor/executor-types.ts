// The executor's contract: what the MCP front, the CLI and tests hand to it and get back.
// Kept apart from the implementation so an in-process fake can stand in where a test needs one.

import type { ReadGrant } from '../../workers/kit/protocol.js';
import type { AccessSubject } from '../access/index.js';
import type { Permissions } from '../config/config-types.js';
import { DaemonError } from '../util/daemon-error.js';
import { GUEST_ERROR } from '../util/errors.js';
import type { ErrorCode, GuestErrorName } from '../util/errors.js';
import type { ResultPreview } from './result-budget.js';

export type Language = 'javascript' | 'typescript' | 'python';

/** Why a call ended. */
export type ErrorType =
  | GuestErrorName // the daemon's names (workers/kit/guest-errors.ts): TimeoutError, PermissionError, ...
  | (string & {}); // guest errors keep their own class name

/** Smallest memory_mb accepted, MiB: below it a sandbox cannot even start. */
export const MIN_MEMORY_MB = 16;

export interface ExecutionRequest {
  code: string;
  /** Omitted: the executor detects it from the code (call-language.ts), as execute_code's callers mostly leave it out. */
  language?: Language;
  /** Globals for the guest; must be JSON data. */
  contextVars?: Record<string, unknown>;
  timeoutSeconds: number;
  memoryMb: number;
}

/** Who is calling, resolved by the front before the call reaches the executor. */
export interface CallIdentity {
  /** Agent name (logs, stats). */
  agent: string;
  /** MCP session or API caller id: keys the PII vault. */
  sessionId: string;
  /** The agent's workspace namespace, relative to the workspace root ('' for the root). */
  workspaceNamespace: string;
  permissions: Permissions;
}

/** The caller as the access check (src/access) knows it. */
export function subjectOf(identity: CallIdentity): AccessSubject {
  return { name: identity.agent, workspaceNamespace: identity.workspaceNamespace, permissions: identity.permissions };
}

/** The result shape of execute_code, as the seed returns it plus our additions. */
export interface ExecutionResult {
  success: boolean;
  result: unknown;
  output: string[];
  execution_time_ms: number;
  error?: string;
  error_type?: ErrorType;
  traceback?: string;
  truncated?: boolean;
  /** When the result was cut: its type and how much of it `result` keeps (docs/results.md). */
  preview?: ResultPreview;
  output_file?: string;
  context_savings?: ContextSavings;
  /** The language the code ran as (it may have been detected); absent only when the request was refused before one was known. */
  language?: Language;
  /** How long the call waited for a sandbox (a Python interpreter) to start, ms; not in execution_time_ms nor timeout_seconds. */
  sandbox_start_wait_ms?: number;
}

/** Token accounting of one call (issue 4). */
export interface ContextSavings {
  tokens_in: number;
  tokens_out: number;
  tokens_saved: number;
  /** true when a figure was estimated (long or costly input), absent when exact. */
  estimated?: boolean;
}

export interface ExecuteOptions {
  signal?: AbortSignal;
  /** Called with each output line as it is written (progress streaming). */
  onOutput?: (line: string) => void;
}

export interface Executor {
  execute(request: ExecutionRequest, identity: CallIdentity, options?: ExecuteOptions): Promise<ExecutionResult>;
  stats(): ExecutorStats;
  /** Live figures of the sandbox processes, for /healthz (degraded, 503) and metrics. */
  health(): ExecutorHealth;
  /** Starts one sandbox of `language` ahead of its first call (an on-demand pool with none running); true once one is ready. */
  warm?(language: string): Promise<boolean>;
  close(): Promise<void>;
}

/** Live figures of one language's sandbox processes. */
export interface PoolHealth {
  /** Processes configured. */
  processes: number;
  /** Processes started and not dead (starting or ready). */
  alive: number;
  /** Processes warm and able to take calls (busy or not). */
  ready: number;
  starting: number;
  /** Ready processes replacing their interpreter for another agent (Python). */
  recycling: number;
  /** Ready, idle processes no agent's code ran in since they started or were recycled. */
  spares: number;
  /** Calls running or sent ahead. */
  busy: number;
  /** Calls waiting for a sandbox. */
  queued: number;
  queuedByAgent: Record<string, number>;
  inFlightByAgent: Record<string, number>;
  /** Processes replaced since start (deaths, failed starts, recycles by respawn). */
  restarts: number;
  /** Processes handed from one agent to another since start (recycled, or respawned when a recycle went unanswered). */
  recycles: number;
  /** Starts that failed since the last one that succeeded (back-off grows with it). */
  failedStartsInARow: number;
  /** At least one process is ready: calls of this language can run. */
  canRun: boolean;
  /** Processes start on demand (Python by default); `idle`: none is running, by design (the next call starts one). */
  onDemand?: boolean;
  idle?: boolean;
}

/**
 * 'ok': every configured process is ready. 'degraded': some are not (starting, restarting after a
 * crash, failing to start), or Python cannot run. 'down': JavaScript cannot run at all (answer 503).
 */
export type HealthStatus = 'ok' | 'degraded' | 'down';

export interface ExecutorHealth {
  status: HealthStatus;
  javascript: PoolHealth;
  /** Absent when Python is disabled (sandbox.pythonProcesses = 0). */
  python?: PoolHealth;
}

export interface LatencySummary {
  count: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  mean_ms: number;
}

export interface ExecutorStats {
  processes: number;
  threads: number;
  busy: number;
  queued: number;
  completed: number;
  failed: number;
  timeouts: number;
  memory_kills: number;
  cancelled: number;
  process_restarts: number;
  /** JavaScript calls that went straight to their worker thread over its link (the direct path). */
  direct_calls: number;
  latency: LatencySummary;
  by_outcome: Record<string, number>;
  /** Running token totals of context_savings, when a token counter is configured. */
  context_savings?: { calls: number; tokens_in: number; tokens_out: number; tokens_saved: number };
}

/**
 * The host side of the sandbox API: every power a guest has goes through here, so policy
 * (permissions, confinement, PII) lives in one place on the coordinator.
 * Arguments arrive as structured-clone data from the guest and must be validated.
 * The returned value must be JSON data (it is cloned back into the guest).
 */
export interface HostApi {
  call(method: string, args: readonly unknown[], ctx: HostCallContext): Promise<unknown>;
  /** Upstream tools this identity may call from code, as `server.tool`. */
  toolNames(identity: CallIdentity): string[];
  /** Whether this identity may use `fetch` at all. */
  fetchAllowed(identity: CallIdentity): boolean;
  /**
   * A grant to serve this identity's read_file calls inside the sandbox (no host round trip), or
   * undefined when every read must come here. Only a success is ever served there.
   */
  readGrant?(identity: CallIdentity): Promise<ReadGrant | undefined>;
}

export interface HostCallContext {
  identity: CallIdentity;
  language: Language;
  /** Aborted when the call ends, times out or is cancelled. */
  signal: AbortSignal;
  /** Bytes/tokens the call pulled in from tools and workspace reads (context_savings). */
  account(direction: 'in', payload: unknown): void;
}

/**
 * A refusal a sandbox method makes itself, naming the class the guest sees (a bad argument's
 * TypeError); every other failure is shown as its code's row says (util/daemon-error.ts).
 */
export class HostError extends DaemonError {
  constructor(code: ErrorCode, message: string, guestName: GuestErrorName = GUEST_ERROR.Error) {
    super(code, message, { guest: guestName });
    this.name = guestName; // it is the guest's error: it carries the guest's name
  }
}

/** The largest argument of one host call, characters: a file write, with a little room for its name. */
export function maxHostArgChars(limits: { maxFileBytes: number }): number {
  return limits.maxFileBytes + 64 * 1024;
}

/** What a sandbox pool counts over its life. */
export interface PoolCounters {
  processRestarts: number;
  /** Calls sent to a thread over its link (the direct path). */
  directCalls: number;
  workerReplacements: number;
  recycles: number;
}
