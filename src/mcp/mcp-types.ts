// The MCP front's contract: what one MCP server (one session) is built from. The composition root
// (src/daemon.ts) fills McpServices once; each session adds who is calling.

import type { Config, Permissions } from '../config/config-types.js';
import type { PythonReadiness } from '../executor/background-snapshot.js';
import type { Executor } from '../executor/executor-types.js';
import type { Logger } from '../util/logger.js';
import type { WorkspaceStore } from '../workspace/index.js';
import type { CallRecorder } from './call-recorder.js';
import type { SessionEventsFactory } from './http/event-store.js';
import type { OptionalServices } from './optional-services.js';

/** Who a session belongs to: the local agent, or an agent identified by its bearer token. */
export interface AgentIdentity {
  name: string;
  /** Workspace namespace relative to the workspace root; '' is the root itself. */
  workspaceNamespace: string;
  permissions: Permissions;
}

/** What leaves the daemon towards the model passes here (pii-boundary.ts): tokenized with pii.auto, unchanged otherwise. */
export interface PiiBoundary {
  /** True when outgoing data is tokenized. */
  readonly active: boolean;
  /** A text of any size (a long one is scanned in slices, yielding to the event loop). */
  outgoingText(text: string, session: SessionInfo): Promise<string>;
  /** A JSON value: every string inside it is tokenized. */
  outgoingValue(value: unknown, session: SessionInfo): Promise<unknown>;
}

/** One MCP session: an HTTP session, the stdio connection, or an in-memory test pair. */
export interface SessionInfo {
  /** MCP session id (HTTP) or a generated one (stdio): keys the PII vault. */
  sessionId: string;
  agent: AgentIdentity;
  transport: 'stdio' | 'http' | 'memory';
  /** Aborted when the session ends or the daemon shuts down: calls in flight are cancelled. */
  signal: AbortSignal;
}

/** The shared store of a cluster as /healthz reports it (the Redis connection gives one). */
export interface SharedStoreHealth {
  kind: 'redis';
  /** Where, without credentials. */
  endpoint: string;
  up: boolean;
  /** The last connection error while down. */
  error?: string;
}

/** The subsystems every session shares. */
export interface McpServices extends OptionalServices {
  config: Readonly<Config>;
  executor: Executor;
  workspace: WorkspaceStore;
  logger: Logger;
  recorder: CallRecorder;
  /** PII tokenization of what leaves the daemon (pii.auto); PASS_THROUGH_BOUNDARY otherwise. */
  boundary: PiiBoundary;
  version: string;
  /** Milliseconds clock for uptime and durations; injectable for tests. */
  now: () => number;
  startedAtMs: number;
  /** Open MCP sessions (HTTP daemon), for stats. */
  openSessions?: () => number;
  /** What one agent holds of the HTTP daemon's shared budgets (connections, sessions, stored events) and its shares; every agent's when no name is given. */
  agentUsage?: (agent?: string) => Record<string, unknown>;
  /** Where HTTP sessions keep their resumable SSE events; in memory when absent. */
  eventStores?: SessionEventsFactory;
  /** New HTTP session ids; behind a load balancer, ids it routes back to this daemon. randomUUID when absent. */
  mintSessionId?: () => string;
  /** Sessions per agent across the daemons of a cluster (server.maxSessionsPerAgent holds cluster-wide); absent when embedded. */
  clusterSessions?: {
    reportSessions(counts: () => ReadonlyMap<string, number>): void;
    sessionsOf(agent: string, local: number): Promise<number>;
  };
  /** The shared store of a cluster (Redis), for /healthz; absent when embedded. */
  sharedStore?: { health(): SharedStoreHealth };
  /** Whether Python interpreters can start at once (their snapshot exists), for /healthz; set by `serve` (src/executor/background-snapshot.ts). */
  pythonReadiness?: () => PythonReadiness;
  /** Called when an MCP session opens (the daemon loads what calls will need, off their path). */
  onSession?: () => void;
}
