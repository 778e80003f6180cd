// The coordinator's start-up: time from spawning `serve` (defaults, nothing called) to its first
// log line (modules loaded) and to its `listening` line (today after the sandbox pools are warm), and the coordinator's own RSS at rest (sandbox processes are counted apart,
// in the total of the process tree). BENCH_STARTUP_BASELINE=DIR runs the same measure, in the same
// run and alternating with this build, against another built checkout (e.g. `git worktree add
// /tmp/old 7386e3f && cd /tmp/old && npm ci && npm run build`), so the rows carry a ratio.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchRow, BenchSection } from './bench-types.js';
import { descendants, percentile, round } from './stats.js';

const RUNS = 3;
/** After `listening`, how long the daemon is left alone before its RSS is read, ms. */
const REST_MS = 3_000;
const LISTEN_TIMEOUT_MS = 60_000;
const TARGET_LISTEN_MS = 1_500;
const MB = 1024 * 1024;

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '..', '..');

interface Sample {
  /** To the first log line: modules loaded and configuration read, before any sandbox starts. */
  firstLogMs: number;
  listenMs: number;
  coordinatorMb: number;
  treeMb: number;
}

/** VmRSS of a process, bytes (0 when it is gone). */
function rssBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

async function measure(root: string): Promise<Sample> {
  const started = performance.now();
  const child = spawn(process.execPath, [path.join(root, 'bin', 'code-execution-mcp.js'), 'serve', '--port', '0', '--log-format', 'json'], {
    cwd: root,
    env: { ...process.env, CODE_EXEC_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    let firstLogMs = Number.NaN;
    const listenMs = await new Promise<number>((resolve, reject) => {
      let buffered = '';
      const timer = setTimeout(() => reject(new Error(`no "listening" line from ${root} within ${LISTEN_TIMEOUT_MS} ms`)), LISTEN_TIMEOUT_MS);
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk: string) => {
        buffered += chunk;
        if (Number.isNaN(firstLogMs) && buffered.includes('\n')) firstLogMs = performance.now() - started;
        if (/"msg":"listening"/.test(buffered)) {
          clearTimeout(timer);
          resolve(performance.now() - started);
          buffered = '';
        } else if (buffered.length > 1 << 20) buffered = buffered.slice(-4096);
      });
      child.once('exit', (code) => reject(new Error(`${root}: serve exited (${String(code)}) before listening`)));
    });
    await new Promise((resolve) => setTimeout(resolve, REST_MS));
    const pid = child.pid as number;
    const coordinator = rssBytes(pid);
    const tree = coordinator + descendants(pid).reduce((sum, p) => sum + rssBytes(p), 0);
    return { firstLogMs, listenMs, coordinatorMb: coordinator / MB, treeMb: tree / MB };
  } finally {
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

function rows(label: string, samples: readonly Sample[], base?: readonly Sample[]): BenchRow[] {
  const median = (pick: (s: Sample) => number, of: readonly Sample[]): number => round(percentile(of.map(pick).sort((a, b) => a - b), 50), 1);
  const ratio = (pick: (s: Sample) => number): { baseline?: { name: string; ratio: number } } =>
    base ? { baseline: { name: 'baseline checkout', ratio: round(median(pick, samples) / median(pick, base), 2) } } : {};
  const listen = median((s) => s.listenMs, samples);
  return [
    { group: 'startup', name: `${label}: serve to its first log line (modules loaded, before the pools)`, value: median((s) => s.firstLogMs, samples), unit: 'ms', ...ratio((s) => s.firstLogMs) },
    { group: 'startup', name: `${label}: serve to "listening" (median of ${samples.length})`, value: listen, unit: 'ms', extra: { min: round(Math.min(...samples.map((s) => s.listenMs)), 1) }, target: `<= ${TARGET_LISTEN_MS} ms`, met: listen <= TARGET_LISTEN_MS, ...ratio((s) => s.listenMs) },
    { group: 'startup', name: `${label}: coordinator RSS at rest`, value: median((s) => s.coordinatorMb, samples), unit: 'MB', ...ratio((s) => s.coordinatorMb) },
    { group: 'startup', name: `${label}: coordinator + sandbox processes RSS ${REST_MS / 1000} s after listening`, value: median((s) => s.treeMb, samples), unit: 'MB', ...ratio((s) => s.treeMb) },
  ];
}

export const startupBench: BenchSection = {
  group: 'startup',
  async run(progress) {
    const baselineRoot = process.env['BENCH_STARTUP_BASELINE'];
    const ours: Sample[] = [];
    const base: Sample[] = [];
    for (let i = 0; i < RUNS; i++) {
      if (baselineRoot) {
        base.push(await measure(path.resolve(baselineRoot)));
        progress(`baseline run ${i + 1}: ${JSON.stringify(base.at(-1))}`);
      }
      ours.push(await measure(ROOT));
      progress(`run ${i + 1}: ${JSON.stringify(ours.at(-1))}`);
    }
    return [...rows('this build', ours, baselineRoot ? base : undefined), ...(baselineRoot ? rows('baseline', base) : [])];
  },
};
