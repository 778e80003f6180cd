// GET /healthz: whether the daemon serves, for anyone; live figures for its operator.
//
// Everyone (no token, or an agent's token) gets the public answer: the status and what is still
// warming, nothing more. Call counts, sessions, upstream server names and failure text (which can
// hold host paths) would let a stranger watch the daemon's agents, so they need the operator's
// token (the daemon's authToken, an agent with "permissions": {"operator": true}, or anyone on a
// daemon without tokens, where every caller is the local operator).
//
// Status: 'starting' until the sandbox pools serve (bind-port.ts answers then), 'ok' when a
// JavaScript sandbox process is ready and every upstream server is up (Python on demand, idle or
// still warming, is fine), 'degraded' otherwise with the problems named, 'draining' on shutdown.
// HTTP 503 when no JavaScript process can run code (starting, draining, down). The JSON shape is
// documented in docs/configuration.md.

import { allows } from '../../access/index.js';
import type { ExecutorStats } from '../../executor/executor-types.js';
import type { AgentIdentity, McpServices, SharedStoreHealth } from '../mcp-types.js';
import { optionalFeatures } from '../../util/optional-package.js';

export type HealthStatus = 'starting' | 'ok' | 'degraded' | 'draining';

/** Parts of the daemon not ready yet: 'javascript' while the pools start, 'python' while its interpreter snapshot is made. */
export type WarmingPart = 'javascript' | 'python';

/** What anyone may read. */
export interface PublicHealth {
  status: HealthStatus;
  /** What is still warming; absent when nothing is. */
  warming?: WarmingPart[];
  /** Only in the public answer of a daemon with tokens: where the figures are. */
  details?: string;
}

export interface ProcessHealth {
  /** Sandbox processes not dead (starting or ready). */
  alive: number;
  /** Sandbox processes ready to run code. */
  ready: number;
  /** Python on demand with no process running, by design: the next Python call starts one. */
  idle?: boolean;
}

/** Whether Python can start an interpreter at once (its memory snapshot exists), and when it will if not. */
export interface PythonReadiness {
  /** ready: the snapshot exists; warming: it is being made; cold: interpreters start without one (it could not be made); off: Python is disabled. */
  state: 'ready' | 'warming' | 'cold' | 'off';
  ready: boolean;
  /** While warming: seconds until it is expected to be ready (an estimate from the last make on this machine). */
  eta_s?: number;
}

/** The operator's answer. */
export interface HealthReport extends PublicHealth {
  version: string;
  uptime_s: number;
  sessions: number;
  connections: number;
  pool: Pick<ExecutorStats, 'processes' | 'threads' | 'busy' | 'queued' | 'process_restarts' | 'completed' | 'failed'>;
  /** By language kind ('js', 'python'); absent when the executor does not list its processes. */
  processes?: Record<string, ProcessHealth>;
  /** Absent when the daemon does not report it (an embedded test harness). */
  python?: PythonReadiness;
  upstream: { up: number; failed: number; connecting: number; servers: Record<string, string> };
  /** The shared store of a cluster (Redis); absent when the daemon keeps its state in memory. */
  store?: SharedStoreHealth;
  /** Each optional feature (tokenizer, redis, wordnet, encoder): 'on', or 'off: ' why and the install command. */
  optional: Record<string, string>;
  /** What makes the status 'degraded', one sentence each. */
  problems: string[];
}

/** The HTTP status and body of one /healthz answer. */
export interface HealthAnswer {
  status: number;
  body: PublicHealth | HealthReport;
}

/** Told to a caller without the operator's token, so a person knows what to send. */
const DETAILS_NEED_OPERATOR = "figures and problems need the operator's token (Authorization: Bearer <token>)";

/** What is installed does not change under a running daemon (a package added later needs a restart). */
let features: Record<string, string> | undefined;

interface ProcessListing {
  processes?: () => { kind: string; state: string }[];
}

/** Whether `agent` may read the daemon-wide figures (the same grant as /metrics). */
export function isOperator(agent: AgentIdentity | undefined): boolean {
  return agent !== undefined && allows(agent, { kind: 'operator' });
}

/** The answer while the pools start (bind-port.ts): the same for everyone. */
export function startingHealth(): HealthAnswer {
  return { status: 503, body: { status: 'starting', warming: ['javascript'] } };
}

/**
 * The answer to GET /healthz. `operator`: the caller presented the operator's token (or the daemon
 * has none); everyone else gets the status and what is warming only.
 */
export function healthReport(services: McpServices, figures: { sessions: number; connections: number; draining: boolean; operator: boolean; authRequired: boolean }): HealthAnswer {
  const full = operatorHealth(services, figures);
  if (figures.operator) return full;
  const { status, warming } = full.body;
  return { status: full.status, body: { status, ...(warming ? { warming } : {}), ...(figures.authRequired ? { details: DETAILS_NEED_OPERATOR } : {}) } };
}

/** The operator's answer, with every figure. */
export function operatorHealth(services: McpServices, figures: { sessions: number; connections: number; draining: boolean }): { status: number; body: HealthReport } {
  const pool = services.executor.stats();
  const problems: string[] = [];
  const listing = (services.executor as unknown as ProcessListing).processes?.();
  let processes: Record<string, ProcessHealth> | undefined;
  let jsReady = pool.processes > 0;
  if (listing) {
    processes = {};
    for (const p of listing) {
      const entry = (processes[p.kind] ??= { alive: 0, ready: 0 });
      if (p.state !== 'dead') entry.alive++;
      if (p.state === 'ready') entry.ready++;
    }
    jsReady = (processes['js']?.ready ?? 0) > 0;
    if (!jsReady) problems.push('no JavaScript sandbox process is ready: execute_code cannot run JavaScript now');
    // Python on demand: none running (idle) or one starting for a call is by design, not a problem.
    const onDemand = services.executor.health().python;
    if (onDemand?.idle) processes['python'] = { alive: 0, ready: 0, idle: true };
    const python = processes['python'];
    const byDesign = onDemand?.onDemand === true && onDemand.failedStartsInARow === 0;
    if (python && python.ready === 0 && !python.idle && !byDesign) problems.push('no Python sandbox process is ready (starting or restarting)');
  }

  const upstream = { up: 0, failed: 0, connecting: 0, servers: {} as Record<string, string> };
  for (const [name, s] of Object.entries(services.upstream?.status() ?? {})) {
    upstream.servers[name] = s.state;
    if (s.state === 'ready') upstream.up++;
    else if (s.state === 'failed' || s.state === 'closed') {
      upstream.failed++;
      problems.push(`upstream server "${name}" is ${s.state}${s.error ? `: ${s.error.slice(0, 200)}` : ''}`);
    } else upstream.connecting++;
  }

  // Redis down: code still runs, but PII tools and cross-daemon notices fail until it returns.
  // Still 200: every daemon shares the one Redis, and taking them all out of rotation helps no one.
  const store = services.sharedStore?.health();
  if (store && !store.up) problems.push(`the shared store (Redis at ${store.endpoint}) is unreachable${store.error ? ` (${store.error.slice(0, 200)})` : ''}: PII tools fail until it returns`);

  // Python still warming is not a problem: a call made meanwhile waits for it (sandbox_start_wait_ms).
  const python = services.pythonReadiness?.();
  const warming: WarmingPart[] = python?.state === 'warming' ? ['python'] : [];

  const status: HealthStatus = figures.draining ? 'draining' : problems.length > 0 ? 'degraded' : 'ok';
  const body: HealthReport = {
    status,
    ...(warming.length > 0 ? { warming } : {}),
    version: services.version,
    uptime_s: Math.round((services.now() - services.startedAtMs) / 1000),
    sessions: figures.sessions,
    connections: figures.connections,
    pool: { processes: pool.processes, threads: pool.threads, busy: pool.busy, queued: pool.queued, process_restarts: pool.process_restarts, completed: pool.completed, failed: pool.failed },
    ...(processes ? { processes } : {}),
    ...(python ? { python } : {}),
    upstream,
    ...(store ? { store } : {}),
    optional: (features ??= optionalFeatures()),
    problems,
  };
  return { status: figures.draining || !jsReady ? 503 : 200, body };
}
