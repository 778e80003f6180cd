// The executor's contract: what the MCP front, the CLI and tests hand to it and get back.
// Kept apart from the implementation so an in-process fake can stand in where a test needs one.

import type { Permissions } from '../config/config-types.js';

export type Language = 'javascript' | 'typescript' | 'python';

/** Why a call ended. */
export type ErrorType =
  | 'SyntaxError'
  | 'TimeoutError'
  | 'MemoryLimitError'
  | 'CancelledError'
  | 'PermissionError'
  | 'SandboxCrashError'
  | 'OverloadedError'
  | 'ValidationError'
  | (string & {}); // guest errors keep their own class name: TypeError, ValueError, ...

export interface ExecutionRequest {
  code: string;
  language: Language;
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
  output_file?: string;
  context_savings?: ContextSavings;
  /** The language the code ran as (execute_code sets it: it may have been detected). */
  language?: Language;
}

/** Token accounting of one call (issue 4). */
export interface ContextSavings {
  tokens_in: number;
  tokens_out: number;
  tokens_saved: number;
}

export interface ExecuteOptions {
  signal?: AbortSignal;
  /** Called with each output line as it is written (progress streaming). */
  onOutput?: (line: string) => void;
}

export interface Executor {
  execute(request: ExecutionRequest, identity: CallIdentity, options?: ExecuteOptions): Promise<ExecutionResult>;
  stats(): ExecutorStats;
  close(): Promise<void>;
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
}

export interface HostCallContext {
  identity: CallIdentity;
  language: Language;
  /** Aborted when the call ends, times out or is cancelled. */
  signal: AbortSignal;
  /** Bytes/tokens the call pulled in from tools and workspace reads (context_savings). */
  account(direction: 'in', payload: unknown): void;
}

/** A failure the host API reports to the guest: it becomes a thrown error of this name in the sandbox. */
export class HostError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly errorName = 'Error',
  ) {
    super(message);
    this.name = errorName;
  }
}
