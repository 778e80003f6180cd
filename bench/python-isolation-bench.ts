// Python isolation figures, measured on real Python sandbox processes driven over their IPC
// protocol (the way the pool drives them): a new agent's first call on a process (recycle, then
// the call), the same agent's calls, the recycle itself, and another agent's calls while one
// agent crash-loops its own process. Pool-level figures (which process a call goes to) need the
// pool's dispatch; these are what a process gives that dispatch.

import type { BenchRow } from './bench-types.js';
import { load, percentile, round, rssMb, summary } from './stats.js';
import { PythonProcess } from '../test/python/process-driver.js';
import type { Finished } from '../test/python/process-driver.js';

const TRIVIAL = 'result = 1';
/** A call that kills its interpreter: deep recursion past the WebAssembly stack is fatal to Pyodide. */
export const CRASH = 'import sys\nsys.setrecursionlimit(10 ** 7)\ndef f(n):\n    return f(n + 1)\nf(0)';

function ok(f: Finished): Finished {
  if (!f.outcome.ok) throw new Error(`benchmark call failed: ${f.outcome.error.type}: ${f.outcome.error.message}`);
  return f;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function pythonIsolationRows(progress: (message: string) => void): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const push = (row: BenchRow): void => {
    rows.push(row);
    progress(`  ${row.name}: ${row.value} ${row.unit} ${JSON.stringify(row.extra ?? {})}`);
  };
  const proc = new PythonProcess();
  const other = new PythonProcess();
  try {
    await proc.ready;
    await other.ready;

    progress('python: recycle back to back (the standby is still warming: a cold start)');
    const cold: number[] = [];
    for (let i = 0; i < 3; i++) cold.push(await proc.recycle());
    push({ group: 'python', name: 'recycle back to back (waits for the standby to warm), p50', value: round(percentile(cold, 50), 0), unit: 'ms', extra: summary(cold) });
    /** How long a standby takes to warm on this machine now, with a margin. */
    const standbyWarmMs = 1.3 * Math.max(...cold);
    await sleep(standbyWarmMs);
    const pid = proc.pid;
    if (pid) push({ group: 'python', name: 'one Python sandbox process at rest, serving interpreter + warm standby (RSS)', value: await rssMb(pid), unit: 'MB' });

    progress('python: same-agent calls on one process');
    await load(50, 1, () => proc.run(TRIVIAL).then(ok));
    const same = await load(300, 1, () => proc.run(TRIVIAL).then(ok));
    push({ group: 'python', name: 'trivial Python call, same agent, one process, 1 in flight', value: round(same.perSecond, 0), unit: 'calls/s', extra: summary(same.latencies) });

    progress('python: a new agent on a process (recycle with a warm standby, then the call)');
    const firstCalls: number[] = [];
    const recycles: number[] = [];
    for (let i = 0; i < 5; i++) {
      // The standby is warm again once a cold start's time has passed.
      if (i > 0) await sleep(standbyWarmMs);
      const t = performance.now();
      recycles.push(await proc.recycle());
      ok(await proc.run(TRIVIAL, { agent: `agent-${i}` }));
      firstCalls.push(performance.now() - t);
    }
    push({
      group: 'python',
      name: "a new agent's first call on a process (recycle with warm standby + call), p50",
      value: round(percentile(firstCalls, 50), 1),
      unit: 'ms',
      extra: summary(firstCalls),
      target: '<= 100 ms',
      met: percentile(firstCalls, 50) <= 100,
    });
    push({ group: 'python', name: 'recycle with a warm standby (swap), p50', value: round(percentile(recycles, 50), 2), unit: 'ms', extra: summary(recycles) });

    progress("python: another agent's calls while one agent crash-loops its own process");
    await sleep(standbyWarmMs);
    let crashing = true;
    let crashes = 0;
    const crashTimes: number[] = [];
    const loop = (async () => {
      while (crashing) {
        const t = performance.now();
        const f = await proc.run(CRASH, { agent: 'crasher' });
        if (!f.outcome.ok) crashes++;
        crashTimes.push(performance.now() - t);
      }
    })();
    // The other agent calls for as long as it takes the crash loop to kill its interpreter 3 times.
    const latencies: number[] = [];
    while (crashes < 3 && latencies.length < 20_000) {
      const t = performance.now();
      ok(await other.run(TRIVIAL, { agent: 'victim' }));
      latencies.push(performance.now() - t);
    }
    const victim = { latencies };
    crashing = false;
    await loop;
    push({
      group: 'python',
      name: "another agent's trivial call while one agent crash-loops (its own process), p99",
      value: round(percentile(victim.latencies, 99), 1),
      unit: 'ms',
      extra: { ...summary(victim.latencies), calls: victim.latencies.length, max_ms: round(Math.max(...victim.latencies), 1), crashes, crash_call_p50_ms: round(percentile(crashTimes, 50), 0) },
      baseline: { name: 'same agent, no crash loop', ratio: round(percentile(victim.latencies, 50) / percentile(same.latencies, 50), 2) },
    });
  } finally {
    proc.close();
    other.close();
  }
  return rows;
}
