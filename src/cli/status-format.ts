// What `status` prints: one summary object built from /healthz and /metrics (the --json output),
// and its text form for a person.

import type { HealthReport, PublicHealth } from '../mcp/http/health.js';
import type { Sample } from './prometheus-text.js';
import { RUNTIMES } from '../executor/runtimes.js';
import { samples, valueOf } from './prometheus-text.js';

const MB = 1024 * 1024;

export interface LanguageStatus {
  language: string;
  processes?: { configured: number; alive: number; ready: number };
  queued?: number;
  calls: number;
  failures: number;
  /** RSS of this language's sandbox processes, MB each. */
  process_rss_mb: number[];
}

export interface UpstreamStatus {
  server: string;
  state: string;
  up?: boolean;
  tools?: number;
  calls?: number;
  errors?: number;
  mean_ms?: number;
}

/** What `status` shows: everything with the operator's token; the status, what warms and a note without it. */
export interface StatusSummary {
  url: string;
  status: HealthReport['status'];
  /** What is still warming ('python' while its interpreter snapshot is made). */
  warming?: HealthReport['warming'];
  version?: string;
  node?: string;
  uptime_s?: number;
  sessions?: number;
  connections?: number;
  pool?: HealthReport['pool'];
  /** Whether Python interpreters start at once, and when they will if not. */
  python?: HealthReport['python'];
  languages: LanguageStatus[];
  memory?: { coordinator_rss_mb: number; coordinator_heap_used_mb: number; sandbox_rss_mb: number };
  agents?: { agent: string; calls: number; by_outcome: Record<string, number> }[];
  upstreams: UpstreamStatus[];
  store?: HealthReport['store'];
  /** Optional features, 'on' or 'off: ' why (absent from daemons older than this field). */
  optional?: HealthReport['optional'];
  problems: string[];
  /** Why agents, memory and upstream calls are missing (no operator token, ...). */
  metrics_note?: string;
}

const mb = (bytes: number): number => Math.round((bytes / MB) * 10) / 10;

/** Whether /healthz answered with the operator's figures (a daemon with tokens tells others only its status). */
export function isFullReport(health: PublicHealth | HealthReport): health is HealthReport {
  return 'version' in health && 'pool' in health;
}

/** Told when /healthz gave only the public answer. */
export const NEEDS_OPERATOR_NOTE = "figures, problems, agents and upstream servers need the operator's token: pass --token or set CODE_EXEC_TOKEN";

export function statusSummary(url: string, health: PublicHealth | HealthReport, metrics: ReadonlyMap<string, Sample[]> | undefined, note: string | undefined): StatusSummary {
  if (!isFullReport(health)) return { url, status: health.status, ...(health.warming ? { warming: health.warming } : {}), languages: [], upstreams: [], problems: [], metrics_note: NEEDS_OPERATOR_NOTE };
  // Health lists processes by their runtime's kind ('js'); metrics and this summary name languages.
  const kinds: Record<string, string> = Object.fromEntries(RUNTIMES.map((row) => [row.process.kind, row.languages[0] ?? row.process.kind]));
  const names = new Set<string>(Object.keys(health.processes ?? {}).map((k) => kinds[k] ?? k));
  if (metrics) for (const s of samples(metrics, 'code_exec_language_calls_total')) names.add(s.labels['language'] ?? '');
  const languages: LanguageStatus[] = [...names].filter((n) => n !== '').map((language) => {
    const m = metrics;
    const processes = m && valueOf(m, 'code_exec_language_processes', { language, state: 'configured' }) !== undefined
      ? { configured: valueOf(m, 'code_exec_language_processes', { language, state: 'configured' }) ?? 0, alive: valueOf(m, 'code_exec_language_processes', { language, state: 'alive' }) ?? 0, ready: valueOf(m, 'code_exec_language_processes', { language, state: 'ready' }) ?? 0 }
      : undefined;
    const kind = Object.entries(kinds).find(([, v]) => v === language)?.[0] ?? language;
    const fromHealth = health.processes?.[kind];
    const queued = m ? valueOf(m, 'code_exec_language_queue_depth', { language }) : undefined;
    return {
      language,
      ...(processes ? { processes } : fromHealth ? { processes: { configured: fromHealth.alive, alive: fromHealth.alive, ready: fromHealth.ready } } : {}),
      ...(queued !== undefined ? { queued } : {}),
      calls: m ? (valueOf(m, 'code_exec_language_calls_total', { language }) ?? 0) : 0,
      failures: m ? (valueOf(m, 'code_exec_language_failures_total', { language }) ?? 0) : 0,
      process_rss_mb: m ? samples(m, 'code_exec_sandbox_process_rss_bytes').filter((s) => (kinds[s.labels['language'] ?? ''] ?? s.labels['language']) === language).map((s) => mb(s.value)) : [],
    };
  });

  const upstreams: UpstreamStatus[] = Object.entries(health.upstream.servers).map(([server, state]) => {
    const calls = metrics ? valueOf(metrics, 'code_exec_upstream_calls_total', { server }) : undefined;
    const sumS = metrics ? valueOf(metrics, 'code_exec_upstream_call_duration_seconds_sum', { server }) : undefined;
    const tools = metrics ? valueOf(metrics, 'code_exec_upstream_tools', { server }) : undefined;
    const errors = metrics ? valueOf(metrics, 'code_exec_upstream_errors_total', { server }) : undefined;
    return {
      server,
      state,
      ...(tools !== undefined ? { tools } : {}),
      ...(calls !== undefined ? { calls } : {}),
      ...(errors !== undefined ? { errors } : {}),
      ...(calls !== undefined && calls > 0 && sumS !== undefined ? { mean_ms: Math.round((sumS * 1000) / calls) } : {}),
    };
  });

  let agents: StatusSummary['agents'];
  let memory: StatusSummary['memory'];
  let node: string | undefined;
  if (metrics) {
    const byAgent = new Map<string, Record<string, number>>();
    for (const s of samples(metrics, 'code_exec_agent_calls_total')) {
      const agent = s.labels['agent'] ?? '';
      const outcomes = byAgent.get(agent) ?? {};
      outcomes[s.labels['outcome'] ?? ''] = s.value;
      byAgent.set(agent, outcomes);
    }
    agents = [...byAgent].map(([agent, by_outcome]) => ({ agent, calls: Object.values(by_outcome).reduce((a, b) => a + b, 0), by_outcome })).sort((a, b) => b.calls - a.calls);
    const rss = valueOf(metrics, 'code_exec_coordinator_memory_bytes', { type: 'rss' });
    if (rss !== undefined) {
      memory = {
        coordinator_rss_mb: mb(rss),
        coordinator_heap_used_mb: mb(valueOf(metrics, 'code_exec_coordinator_memory_bytes', { type: 'heap_used' }) ?? 0),
        sandbox_rss_mb: mb(samples(metrics, 'code_exec_sandbox_process_rss_bytes').reduce((sum, s) => sum + s.value, 0)),
      };
    }
    node = samples(metrics, 'code_exec_build_info')[0]?.labels['node'];
  }

  return {
    url,
    status: health.status,
    ...(health.warming ? { warming: health.warming } : {}),
    version: health.version,
    ...(node ? { node } : {}),
    uptime_s: health.uptime_s,
    sessions: health.sessions,
    connections: health.connections,
    pool: health.pool,
    ...(health.python ? { python: health.python } : {}),
    languages,
    ...(memory ? { memory } : {}),
    ...(agents ? { agents } : {}),
    upstreams,
    ...(health.store ? { store: health.store } : {}),
    ...(health.optional ? { optional: health.optional } : {}),
    problems: health.problems,
    ...(note ? { metrics_note: note } : {}),
  };
}

function duration(seconds: number): string {
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  return m > 0 ? `${m}m ${seconds % 60}s` : `${seconds}s`;
}

export function formatStatus(s: StatusSummary): string {
  const lines: string[] = [];
  const version = s.version !== undefined ? ` ${s.version}` : '';
  lines.push(`code-execution-mcp${version}${s.node ? ` (Node ${s.node})` : ''} at ${s.url}: ${s.status.toUpperCase()}${s.uptime_s !== undefined ? `, up ${duration(s.uptime_s)}` : ''}`);
  if (s.warming) lines.push(`  still warming: ${s.warming.join(', ')}`);
  if (!s.pool) {
    if (s.metrics_note) lines.push(`note: ${s.metrics_note}`);
    return `${lines.join('\n')}\n`;
  }
  lines.push(`  sessions ${s.sessions ?? 0}, connections ${s.connections ?? 0}; pool: ${s.pool.processes} processes, ${s.pool.threads} threads, ${s.pool.busy} busy, ${s.pool.queued} queued, ${s.pool.completed} completed, ${s.pool.failed} failed, ${s.pool.process_restarts} restarts`);
  if (s.python) lines.push(`  python: ${pythonLine(s.python)}`);
  if (s.problems.length > 0) {
    lines.push('problems:');
    for (const p of s.problems) lines.push(`  - ${p}`);
  }
  lines.push('languages:');
  for (const l of s.languages) {
    const procs = l.processes ? `${l.processes.ready}/${l.processes.configured} processes ready` : 'processes unknown';
    const rss = l.process_rss_mb.length > 0 ? `, RSS ${l.process_rss_mb.map((v) => `${v} MB`).join(' + ')}` : '';
    lines.push(`  ${l.language.padEnd(11)} ${procs}${l.queued ? `, ${l.queued} queued` : ''}; ${l.calls} calls, ${l.failures} failed${rss}`);
  }
  if (s.memory) lines.push(`memory: coordinator ${s.memory.coordinator_rss_mb} MB RSS (heap ${s.memory.coordinator_heap_used_mb} MB), sandbox processes ${s.memory.sandbox_rss_mb} MB`);
  if (s.agents) {
    lines.push(s.agents.length > 0 ? 'agents:' : 'agents: none has called a tool yet');
    for (const a of s.agents) {
      const outcomes = Object.entries(a.by_outcome).filter(([, n]) => n > 0).map(([o, n]) => `${n} ${o}`).join(', ');
      lines.push(`  ${a.agent.padEnd(16)} ${a.calls} calls (${outcomes})`);
    }
  }
  lines.push(s.upstreams.length > 0 ? 'upstream servers:' : 'upstream servers: none configured');
  for (const u of s.upstreams) {
    const figures = [u.tools !== undefined ? `${u.tools} tools` : '', u.calls !== undefined ? `${u.calls} calls` : '', u.errors !== undefined ? `${u.errors} errors` : '', u.mean_ms !== undefined ? `mean ${u.mean_ms} ms` : ''].filter((x) => x !== '');
    lines.push(`  ${u.server.padEnd(16)} ${u.state}${figures.length > 0 ? `; ${figures.join(', ')}` : ''}`);
  }
  if (s.store) lines.push(`shared store: Redis at ${s.store.endpoint}, ${s.store.up ? 'up' : `DOWN${s.store.error ? ` (${s.store.error})` : ''}`}`);
  if (s.optional) {
    lines.push('optional features:');
    for (const [feature, state] of Object.entries(s.optional)) lines.push(`  ${feature.padEnd(16)} ${state}`);
  }
  if (s.metrics_note) lines.push(`note: ${s.metrics_note}`);
  return `${lines.join('\n')}\n`;
}

/** Whether Python starts at once, for a person. */
function pythonLine(p: NonNullable<StatusSummary['python']>): string {
  switch (p.state) {
    case 'ready':
      return 'ready (an interpreter started from its snapshot)';
    case 'warming':
      return `warming: its interpreter snapshot is being made, then an interpreter started from it; ready in about ${p.eta_s ?? '?'} s (a Python call made now waits for it)`;
    case 'cold':
      return 'no interpreter snapshot (it could not be made; see the log): each Python process starts cold, in seconds';
    default:
      return 'off (sandbox.pythonProcesses is 0)';
  }
}
