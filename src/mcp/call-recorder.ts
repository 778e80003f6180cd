// One log line and one metrics update per tool call, whatever path the call took (handled by a
// tool, or refused by the SDK's argument validation). Only names, outcomes and durations are
// recorded: never code, arguments, results or PII. Counters are kept daemon-wide (the operator's
// view) and per agent (what get_execution_stats shows an agent of itself).

import type { Logger } from '../util/logger.js';
import { InFlight } from './in-flight.js';
import type { CallOutcome } from './call-outcome.js';

/** Upper bounds of the execute_code latency histogram, milliseconds (Prometheus `le`, in seconds). */
export const LATENCY_BUCKETS_MS: readonly number[] = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000, 300_000];

export interface CallRecord {
  agent: string;
  session: string;
  tool: string;
  outcome: CallOutcome;
  duration_ms: number;
  /** Stable error code or error type, when the call failed. */
  error_code?: string;
  /** The name a client asked for, when it is not a tool (cut to 64 characters). */
  requested_tool?: string;
}

/** Recent execute_code durations kept per agent for its own latency percentiles. */
const AGENT_LATENCY_SAMPLES = 1_024;
/** Agents tracked separately; names come from the configuration, so this only guards a bug. */
const MAX_TRACKED_AGENTS = 10_000;

export interface AgentLatency {
  /** execute_code calls counted (all since start). */
  count: number;
  mean_ms: number;
  /** Percentiles over the most recent AGENT_LATENCY_SAMPLES calls. */
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
}

interface AgentFigures {
  calls: Map<string, number>;
  samples: number[];
  next: number;
  count: number;
  sumMs: number;
}

export interface Histogram {
  /** Cumulative counts per bucket of LATENCY_BUCKETS_MS, then +Inf. */
  buckets: number[];
  count: number;
  sum_ms: number;
}

export class CallRecorder {
  readonly #logger: Logger;
  readonly #calls = new Map<string, number>();
  readonly #executeLatency: Histogram = { buckets: new Array<number>(LATENCY_BUCKETS_MS.length + 1).fill(0), count: 0, sum_ms: 0 };
  readonly #inFlight = new InFlight();
  readonly #agents = new Map<string, AgentFigures>();
  readonly #languages = new Map<string, { calls: number; failures: number }>();

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** A call started; returns the function that ends it. */
  begin(): () => void {
    return this.#inFlight.begin();
  }

  get inFlight(): number {
    return this.#inFlight.count;
  }

  /** Resolves true when no tool handler is running, false when `timeoutMs` passed first. */
  waitIdle(timeoutMs: number): Promise<boolean> {
    return this.#inFlight.waitIdle(timeoutMs);
  }

  record(call: CallRecord): void {
    const key = `${call.tool}\u0000${call.outcome}`;
    this.#calls.set(key, (this.#calls.get(key) ?? 0) + 1);
    const agent = this.#agentFigures(call.agent);
    if (agent) agent.calls.set(key, (agent.calls.get(key) ?? 0) + 1);
    if (call.tool === 'execute_code' && call.outcome !== 'invalid') {
      if (agent) {
        agent.count++;
        agent.sumMs += call.duration_ms;
        agent.samples[agent.next] = call.duration_ms;
        agent.next = (agent.next + 1) % AGENT_LATENCY_SAMPLES;
      }
      const h = this.#executeLatency;
      h.count++;
      h.sum_ms += call.duration_ms;
      LATENCY_BUCKETS_MS.forEach((le, i) => {
        if (call.duration_ms <= le) h.buckets[i] = (h.buckets[i] ?? 0) + 1;
      });
      h.buckets[LATENCY_BUCKETS_MS.length] = h.count;
    }
    const level = call.outcome === 'internal' ? 'error' : call.outcome === 'ok' ? 'info' : 'warn';
    // The log names what the client asked for; the counters above keep the bounded label.
    const { requested_tool: requested, ...line } = call;
    const named = requested === undefined ? {} : { tool: requested, unknown_tool: true };
    this.#logger[level]({ ...line, ...named, duration_ms: Math.round(call.duration_ms * 100) / 100 }, 'tool call');
  }

  /** One execute_code call that ran, by the language it ran as (for /metrics). */
  recordLanguage(language: string, success: boolean): void {
    const figures = this.#languages.get(language) ?? { calls: 0, failures: 0 };
    figures.calls++;
    if (!success) figures.failures++;
    this.#languages.set(language, figures);
  }

  /** execute_code calls and failures by language, since start. */
  languages(): { language: string; calls: number; failures: number }[] {
    return [...this.#languages].map(([language, f]) => ({ language, ...f }));
  }

  #agentFigures(name: string): AgentFigures | undefined {
    let figures = this.#agents.get(name);
    if (!figures && this.#agents.size < MAX_TRACKED_AGENTS) {
      figures = { calls: new Map(), samples: [], next: 0, count: 0, sumMs: 0 };
      this.#agents.set(name, figures);
    }
    return figures;
  }

  /** Calls by tool and outcome: of every agent, or of one agent. */
  calls(agent?: string): { tool: string; outcome: CallOutcome; count: number }[] {
    const source = agent === undefined ? this.#calls : (this.#agents.get(agent)?.calls ?? new Map<string, number>());
    return [...source].map(([key, count]) => {
      const [tool = '', outcome = 'ok'] = key.split('\u0000');
      return { tool, outcome: outcome as CallOutcome, count };
    });
  }

  /** Counts by outcome over all tools: of every agent, or of one agent. */
  byOutcome(agent?: string): Partial<Record<CallOutcome, number>> {
    const out: Partial<Record<CallOutcome, number>> = {};
    for (const { outcome, count } of this.calls(agent)) out[outcome] = (out[outcome] ?? 0) + count;
    return out;
  }

  /** Agents that made calls, alphabetical. */
  agents(): string[] {
    return [...this.#agents.keys()].sort();
  }

  /** One agent's execute_code latency. */
  agentLatency(agent: string): AgentLatency {
    const figures = this.#agents.get(agent);
    if (!figures || figures.count === 0) return { count: 0, mean_ms: 0, p50_ms: 0, p95_ms: 0, p99_ms: 0 };
    const sorted = [...figures.samples].sort((a, b) => a - b);
    const at = (q: number): number => round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0);
    return { count: figures.count, mean_ms: round(figures.sumMs / figures.count), p50_ms: at(0.5), p95_ms: at(0.95), p99_ms: at(0.99) };
  }

  executeLatency(): Readonly<Histogram> {
    return { ...this.#executeLatency, buckets: [...this.#executeLatency.buckets] };
  }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
