// GET /metrics in the Prometheus text format (version 0.0.4): calls by tool and outcome (and by
// agent), the execute_code latency histogram, pool gauges and counters, sessions, refused HTTP
// requests; execute_code by language and each language's sandbox processes; each upstream
// server's state, calls, errors and latency; memory (the coordinator's, each sandbox process's);
// and the build. These are every agent's figures, so only the operator may read them.

import { readFileSync } from 'node:fs';
import { decide, Grant } from '../../access/index.js';
import type { ExecutorHealth, ExecutorStats } from '../../executor/executor-types.js';
import { languageOfKind } from '../../executor/runtimes.js';
import type { UpstreamServerStatus } from '../../upstream/upstream-types.js';
import { LATENCY_BUCKETS_MS } from '../call-recorder.js';
import type { CallRecorder } from '../call-recorder.js';
import type { AgentIdentity } from '../mcp-types.js';

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Why the HTTP layer refused a request before MCP saw it. */
export type RefusalReason = 'host' | 'origin' | 'auth' | 'forbidden' | 'body_too_large' | 'parse' | 'session' | 'overloaded' | 'draining' | 'method' | 'not_found';

/**
 * Why `agent` may not read /metrics, or null when it may: the figures are every agent's, so they
 * need `permissions.operator` (the local agent and the `authToken` caller have it).
 */
export function metricsDenied(agent: AgentIdentity): string | null {
  const answer = decide(agent, "/metrics (every agent's figures)", { kind: 'operator' });
  return answer instanceof Grant ? null : `${answer.message}; get_execution_stats shows an agent its own figures`;
}

export interface MetricsSnapshot {
  recorder: CallRecorder;
  pool: ExecutorStats;
  sessionsOpen: number;
  sessionsCreated: number;
  refused: ReadonlyMap<RefusalReason, number>;
  uptimeSeconds: number;
  /** The package version, for code_exec_build_info. */
  version?: string;
  /** Per-language pool figures (executor.health()). */
  health?: ExecutorHealth;
  /** The sandbox processes, for their RSS (executor.processes(), when it lists them). */
  processes?: readonly { kind: string; pid: number | undefined }[];
  /** Upstream servers by name (upstream.status()). */
  upstream?: Readonly<Record<string, UpstreamServerStatus>>;
  /** Reads a process's resident memory, bytes (undefined when unknown); injectable for tests. */
  processRss?: (pid: number) => number | undefined;
}

/** Resident memory of a process from /proc (Linux), bytes; undefined elsewhere or when it is gone. */
export function procRss(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

export function renderMetrics(s: MetricsSnapshot): string {
  const out: string[] = [];
  const metric = (name: string, type: 'counter' | 'gauge' | 'histogram', help: string, samples: [labels: string, value: number][]): void => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of samples) out.push(`${name}${labels} ${formatValue(value)}`);
  };

  metric(
    'code_exec_tool_calls_total',
    'counter',
    'MCP tool calls by tool and outcome.',
    s.recorder.calls().map(({ tool, outcome, count }) => [`{tool="${escapeLabel(tool)}",outcome="${outcome}"}`, count]),
  );

  const byAgent: [string, number][] = [];
  for (const agent of s.recorder.agents()) {
    for (const [outcome, count] of Object.entries(s.recorder.byOutcome(agent))) byAgent.push([`{agent="${escapeLabel(agent)}",outcome="${outcome}"}`, count]);
  }
  metric('code_exec_agent_calls_total', 'counter', 'MCP tool calls by agent and outcome.', byAgent);

  const h = s.recorder.executeLatency();
  const buckets: [string, number][] = LATENCY_BUCKETS_MS.map((le, i) => [`{le="${formatValue(le / 1000)}"}`, h.buckets[i] ?? 0]);
  buckets.push(['{le="+Inf"}', h.count]);
  out.push('# HELP code_exec_execute_duration_seconds Wall-clock latency of execute_code calls, seconds.', '# TYPE code_exec_execute_duration_seconds histogram');
  for (const [labels, value] of buckets) out.push(`code_exec_execute_duration_seconds_bucket${labels} ${value}`);
  out.push(`code_exec_execute_duration_seconds_sum ${formatValue(h.sum_ms / 1000)}`, `code_exec_execute_duration_seconds_count ${h.count}`);

  const p = s.pool;
  metric('code_exec_pool_queue_depth', 'gauge', 'Calls waiting for a sandbox worker.', [['', p.queued]]);
  metric('code_exec_pool_workers', 'gauge', 'Sandbox worker threads.', [['', p.threads]]);
  metric('code_exec_pool_busy_workers', 'gauge', 'Sandbox worker threads running a call.', [['', p.busy]]);
  metric('code_exec_pool_processes', 'gauge', 'Sandbox processes.', [['', p.processes]]);
  metric('code_exec_pool_process_restarts_total', 'counter', 'Sandbox processes restarted after dying.', [['', p.process_restarts]]);
  metric('code_exec_pool_calls_total', 'counter', 'Calls the pool finished, by result.', [
    ['{result="completed"}', p.completed],
    ['{result="failed"}', p.failed],
    ['{result="timeout"}', p.timeouts],
    ['{result="memory"}', p.memory_kills],
    ['{result="cancelled"}', p.cancelled],
  ]);
  metric('code_exec_calls_in_flight', 'gauge', 'Tool calls being handled.', [['', s.recorder.inFlight]]);
  metric('code_exec_sessions', 'gauge', 'Open MCP sessions.', [['', s.sessionsOpen]]);
  metric('code_exec_sessions_created_total', 'counter', 'MCP sessions opened since start.', [['', s.sessionsCreated]]);
  metric(
    'code_exec_http_refused_total',
    'counter',
    'HTTP requests refused before MCP, by reason.',
    [...s.refused].map(([reason, count]) => [`{reason="${reason}"}`, count]),
  );
  metric('code_exec_uptime_seconds', 'gauge', 'Seconds since the daemon started.', [['', s.uptimeSeconds]]);
  renderOperatorView(s, metric);
  return `${out.join('\n')}\n`;
}

type MetricWriter = (name: string, type: 'counter' | 'gauge', help: string, samples: [labels: string, value: number][]) => void;

/** Languages, upstream servers, memory and build. */
function renderOperatorView(s: MetricsSnapshot, metric: MetricWriter): void {
  const languages = s.recorder.languages();
  metric('code_exec_language_calls_total', 'counter', 'execute_code calls that ran, by language.', languages.map((l) => [`{language="${escapeLabel(l.language)}"}`, l.calls]));
  metric('code_exec_language_failures_total', 'counter', 'execute_code calls that ran and failed, by language.', languages.map((l) => [`{language="${escapeLabel(l.language)}"}`, l.failures]));
  if (s.health) {
    const pools = Object.entries({ javascript: s.health.javascript, python: s.health.python }).filter((e): e is [string, NonNullable<(typeof e)[1]>] => e[1] !== undefined);
    metric('code_exec_language_processes', 'gauge', 'Sandbox processes by language and state (configured, alive, ready).', pools.flatMap(([language, p]) => [
      [`{language="${language}",state="configured"}`, p.processes] as [string, number],
      [`{language="${language}",state="alive"}`, p.alive] as [string, number],
      [`{language="${language}",state="ready"}`, p.ready] as [string, number],
    ]));
    metric('code_exec_language_queue_depth', 'gauge', 'Calls waiting for a sandbox, by language.', pools.map(([language, p]) => [`{language="${language}"}`, p.queued]));
  }

  const upstream = Object.entries(s.upstream ?? {});
  const server = (name: string): string => `{server="${escapeLabel(name)}"}`;
  metric('code_exec_upstream_up', 'gauge', 'Upstream MCP server ready (1) or not (0).', upstream.map(([name, u]) => [server(name), u.state === 'ready' ? 1 : 0]));
  metric('code_exec_upstream_tools', 'gauge', 'Tools an upstream server lists.', upstream.map(([name, u]) => [server(name), u.tools]));
  metric('code_exec_upstream_calls_total', 'counter', 'Calls to an upstream server.', upstream.map(([name, u]) => [server(name), u.calls]));
  metric('code_exec_upstream_errors_total', 'counter', 'Calls to an upstream server that failed.', upstream.map(([name, u]) => [server(name), u.failures]));
  metric('code_exec_upstream_call_duration_seconds_sum', 'counter', 'Wall-clock time of the calls to an upstream server, seconds in all (divide by calls_total for the mean).', upstream.map(([name, u]) => [server(name), (u.call_ms_total ?? 0) / 1000]));
  metric('code_exec_upstream_restarts_total', 'counter', 'Reconnections to an upstream server after the first connection.', upstream.map(([name, u]) => [server(name), u.restarts]));

  const memory = process.memoryUsage();
  metric('code_exec_coordinator_memory_bytes', 'gauge', 'Memory of the coordinator process, bytes.', [
    ['{type="rss"}', memory.rss],
    ['{type="heap_used"}', memory.heapUsed],
    ['{type="heap_total"}', memory.heapTotal],
    ['{type="external"}', memory.external],
  ]);
  const rssOf = s.processRss ?? procRss;
  const sandboxRss: [string, number][] = [];
  for (const p of s.processes ?? []) {
    const rss = p.pid === undefined ? undefined : rssOf(p.pid);
    if (rss !== undefined) sandboxRss.push([`{language="${escapeLabel(languageOfKind(p.kind) ?? p.kind)}",pid="${String(p.pid)}"}`, rss]);
  }
  metric('code_exec_sandbox_process_rss_bytes', 'gauge', 'Resident memory of each sandbox process, bytes.', sandboxRss);
  metric('code_exec_build_info', 'gauge', 'The running build: package version and Node.js version.', [[`{version="${escapeLabel(s.version ?? 'unknown')}",node="${escapeLabel(process.version)}"}`, 1]]);
}

function formatValue(value: number): string {
  return Number.isFinite(value) ? String(Math.round(value * 1e6) / 1e6) : value > 0 ? '+Inf' : '-Inf';
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
