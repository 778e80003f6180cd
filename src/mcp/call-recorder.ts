// One log line and one metrics update per tool call, whatever path the call took (handled by a
// tool, or refused by the SDK's argument validation). Only names, outcomes and durations are
// recorded: never code, arguments, results or PII.

import type { Logger } from '../util/logger.js';
import { InFlight } from './in-flight.js';
import type { CallOutcome } from './mcp-types.js';

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
    if (call.tool === 'execute_code' && call.outcome !== 'invalid') {
      const h = this.#executeLatency;
      h.count++;
      h.sum_ms += call.duration_ms;
      LATENCY_BUCKETS_MS.forEach((le, i) => {
        if (call.duration_ms <= le) h.buckets[i] = (h.buckets[i] ?? 0) + 1;
      });
      h.buckets[LATENCY_BUCKETS_MS.length] = h.count;
    }
    const level = call.outcome === 'internal' ? 'error' : call.outcome === 'ok' ? 'info' : 'warn';
    this.#logger[level]({ ...call, duration_ms: Math.round(call.duration_ms * 100) / 100 }, 'tool call');
  }

  /** Calls by tool and outcome. */
  calls(): { tool: string; outcome: CallOutcome; count: number }[] {
    return [...this.#calls].map(([key, count]) => {
      const [tool = '', outcome = 'ok'] = key.split('\u0000');
      return { tool, outcome: outcome as CallOutcome, count };
    });
  }

  /** Counts by outcome over all tools. */
  byOutcome(): Partial<Record<CallOutcome, number>> {
    const out: Partial<Record<CallOutcome, number>> = {};
    for (const { outcome, count } of this.calls()) out[outcome] = (out[outcome] ?? 0) + count;
    return out;
  }

  executeLatency(): Readonly<Histogram> {
    return { ...this.#executeLatency, buckets: [...this.#executeLatency.buckets] };
  }
}
