// GET /metrics in the Prometheus text format (version 0.0.4): calls by tool and outcome (and by
// agent), the execute_code latency histogram, pool gauges and counters, sessions, refused HTTP
// requests. These are every agent's figures, so only the operator may read them.

import type { ExecutorStats } from '../../executor/executor-types.js';
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
  if (agent.permissions.operator === true) return null;
  return `permission denied: /metrics shows every agent's figures and needs the operator permission; agent "${agent.name}" does not have it. Use the authToken, or set "permissions": {"operator": true} on an agent in the daemon's configuration; get_execution_stats shows an agent its own figures`;
}

export interface MetricsSnapshot {
  recorder: CallRecorder;
  pool: ExecutorStats;
  sessionsOpen: number;
  sessionsCreated: number;
  refused: ReadonlyMap<RefusalReason, number>;
  uptimeSeconds: number;
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
  return `${out.join('\n')}\n`;
}

function formatValue(value: number): string {
  return Number.isFinite(value) ? String(Math.round(value * 1e6) / 1e6) : value > 0 ? '+Inf' : '-Inf';
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
