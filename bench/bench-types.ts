// What every benchmark section returns, so bench/run.ts can print one table and write one JSON.

export interface BenchRow {
  /** Section: 'executor', 'mcp', 'catalog', 'skills', 'pii', 'python'. */
  group: string;
  /** What was measured, e.g. 'trivial call, 32 in flight'. */
  name: string;
  /** The figure. */
  value: number;
  /** 'calls/s', 'ms', 'MB', 'MB/s', '%', ... */
  unit: string;
  /** Extra figures (p95, p99, ...) keyed by label. */
  extra?: Record<string, number>;
  /** The target from the issue, human-readable ('>= 2500 calls/s'), when there is one. */
  target?: string;
  /** Whether the target was met; undefined when there is no target. */
  met?: boolean;
  /** Name of the same-run baseline this row compares with, and the ratio value/baseline. */
  baseline?: { name: string; ratio: number };
}

export interface BenchSection {
  group: string;
  run(progress: (message: string) => void): Promise<BenchRow[]>;
}
