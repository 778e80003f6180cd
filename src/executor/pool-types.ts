// The types of a sandbox pool (sandbox-pool.ts): a call as the pool sees it, an agent's share,
// and the pool's options.

import type { HostReply, RunRequest, RuntimeProcess, SandboxProcessOptions } from '../../workers/kit/protocol.js';
import type { Logger } from '../util/logger.js';
import type { HostLinkServer } from './host-link-server.js';
import type { LaunchSandbox } from './sandbox-process.js';

export interface PoolCall {
  request: RunRequest;
  /** Set once the call was sent again after its process died before starting it. */
  requeued?: boolean;
  /** performance.now() deadline of the whole call. */
  deadline: number;
  signal?: AbortSignal;
  onHostCall(callId: number, method: string, args: unknown[], reply: (r: HostReply) => void): void;
  onOutput(lines: string[]): void;
  /** Set when the call waited for a sandbox to start: that wait, ms, is not the call's time. */
  startupWaitMs?: number;
}

/** One agent's share of a pool. */
export interface AgentLimits {
  /** Calls running at once. */
  maxInFlight: number;
  /** Calls waiting for a sandbox; past it the agent's new calls get OverloadedError. */
  maxQueued: number;
}

export interface SandboxPoolOptions {
  process: SandboxProcessOptions;
  /** The runtime's language and its name for people (its row in runtimes.ts), for messages. */
  language: string;
  label: string;
  count: number;
  /** Calls waiting in all; past it only agents holding at least an equal share are refused. */
  maxQueued: number;
  limits(agent: string): AgentLimits;
  log: Logger;
  /** Default RECYCLE_TIMEOUT_MS; tests shorten it. */
  recycleTimeoutMs?: number;
  /** Process launcher; tests pass one whose fork fails. */
  launch?: LaunchSandbox;
  /** Each worker thread's link to the coordinator: every call's one channel. */
  hostLink: HostLinkServer;
  /**
   * On demand (Python's row by default): no process at start; a call that no process can serve starts
   * one (up to `count`), and processes idle `idleExitMs` exit (0 or absent: they stay).
   */
  lazy?: boolean;
  idleExitMs?: number;
  /** How long a call may wait for a sandbox to start; default START_WAIT_MS. */
  startWaitMs?: number;
}

/** What tests and the bench tune of the JavaScript processes. */
export interface JsPoolTuning {
  /** Idle this long, threads drop what they cached (default a minute). */
  idleTrimMs?: number;
}

/** The JavaScript processes' options from a JsPoolTuning. */
export function jsTuning(pool: JsPoolTuning | undefined): Partial<SandboxProcessOptions> {
  return pool?.idleTrimMs ? { idleTrimMs: pool.idleTrimMs } : {};
}

/** How many processes of a runtime a daemon runs, and how they start and stop (from the config). */
export interface RuntimePoolPlan {
  /** What the row's `process` part leaves to the config: threads, heap, polling, standby, tuning. */
  process: Omit<SandboxProcessOptions, keyof RuntimeProcess>;
  /** Processes at most. */
  count: number;
  /** Slots the agents' shares are cut from (processes x threads). */
  slots: number;
  /** On demand: no process at start; a call that needs one starts it. */
  lazy?: boolean;
  /** On demand: a process idle this long exits, ms (0 or absent: they stay). */
  idleExitMs?: number;
  /** How long a call may wait for a sandbox to start, ms (default on-demand.ts START_WAIT_MS). */
  startWaitMs?: number;
}
