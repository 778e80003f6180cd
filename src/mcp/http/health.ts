// GET /healthz: live figures a supervisor can act on. 'ok' when a JavaScript sandbox process is
// ready and every upstream server is up (Python started on demand and idle, `processes.python.idle`,
// is fine); 'degraded' (HTTP 503 when no JavaScript process can run
// code) otherwise, with the problems named. The JSON shape is documented in docs/configuration.md.

import type { ExecutorStats } from '../../executor/executor-types.js';
import type { McpServices, SharedStoreHealth } from '../mcp-types.js';
import { optionalFeatures } from '../../util/optional-package.js';

export type HealthStatus = 'ok' | 'degraded' | 'draining';

export interface ProcessHealth {
  /** Sandbox processes not dead (starting or ready). */
  alive: number;
  /** Sandbox processes ready to run code. */
  ready: number;
  /** Python on demand with no process running, by design: the next Python call starts one. */
  idle?: boolean;
}

export interface HealthReport {
  status: HealthStatus;
  version: string;
  uptime_s: number;
  sessions: number;
  connections: number;
  pool: Pick<ExecutorStats, 'processes' | 'threads' | 'busy' | 'queued' | 'process_restarts' | 'completed' | 'failed'>;
  /** By language kind ('js', 'python'); absent when the executor does not list its processes. */
  processes?: Record<string, ProcessHealth>;
  upstream: { up: number; failed: number; connecting: number; servers: Record<string, string> };
  /** The shared store of a cluster (Redis); absent when the daemon keeps its state in memory. */
  store?: SharedStoreHealth;
  /** Each optional feature (tokenizer, redis, wordnet, encoder): 'on', or 'off: ' why and the install command. */
  optional: Record<string, string>;
  /** What makes the status 'degraded', one sentence each. */
  problems: string[];
}

/** What is installed does not change under a running daemon (a package added later needs a restart). */
let features: Record<string, string> | undefined;

interface ProcessListing {
  processes?: () => { kind: string; state: string }[];
}

export function healthReport(services: McpServices, figures: { sessions: number; connections: number; draining: boolean }): { status: number; body: HealthReport } {
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

  const status: HealthStatus = figures.draining ? 'draining' : problems.length > 0 ? 'degraded' : 'ok';
  const body: HealthReport = {
    status,
    version: services.version,
    uptime_s: Math.round((services.now() - services.startedAtMs) / 1000),
    sessions: figures.sessions,
    connections: figures.connections,
    pool: { processes: pool.processes, threads: pool.threads, busy: pool.busy, queued: pool.queued, process_restarts: pool.process_restarts, completed: pool.completed, failed: pool.failed },
    ...(processes ? { processes } : {}),
    upstream,
    ...(store ? { store } : {}),
    optional: (features ??= optionalFeatures()),
    problems,
  };
  return { status: figures.draining || !jsReady ? 503 : 200, body };
}
