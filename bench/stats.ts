// Small measurement helpers shared by the benchmark sections.

import { readdirSync, readFileSync } from 'node:fs';

/** Percentile (0-100) of a list of numbers, nearest-rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export function round(v: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

/** Runs `fn` `total` times with `concurrency` in flight; returns per-call latencies (ms) and calls/s. */
export async function load(
  total: number,
  concurrency: number,
  fn: (i: number) => Promise<unknown>,
): Promise<{ latencies: number[]; perSecond: number; wallMs: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const lane = async (): Promise<void> => {
    while (next < total) {
      const i = next++;
      const t = performance.now();
      await fn(i);
      latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  const wallMs = performance.now() - started;
  return { latencies, perSecond: (total / wallMs) * 1000, wallMs };
}

export function summary(latencies: readonly number[]): Record<string, number> {
  return { p50_ms: round(percentile(latencies, 50), 3), p95_ms: round(percentile(latencies, 95), 3), p99_ms: round(percentile(latencies, 99), 3) };
}

/** Resident memory of a process in MB, from /proc (Linux). */
export async function rssMb(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const m = /VmRSS:\s+(\d+) kB/.exec(status);
    return m ? round(Number(m[1]) / 1024, 1) : 0;
  } catch {
    return 0;
  }
}

/** Deterministic PRNG (mulberry32): generated benchmark data is the same on every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The pids of `pid`'s descendants (from /proc; Linux only). */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(name)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const stack = [pid];
  while (stack.length > 0) {
    for (const child of parents.get(stack.pop() as number) ?? []) {
      out.push(child);
      stack.push(child);
    }
  }
  return out;
}
