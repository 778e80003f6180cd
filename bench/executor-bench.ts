// Executor benchmark: the real pool (sandbox processes, piscina, SES, fresh Compartment per call)
// against baselines measured in the same run (bare piscina, node:vm, a new Worker per call), so
// the ratios hold on a noisy shared machine.

import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Config } from '../src/config/config-types.js';
import { defaultConfig } from '../src/config/index.js';
import { createExecutor, createHostApi } from '../src/executor/index.js';
import type { CallIdentity, ExecutionRequest, PooledExecutor } from '../src/executor/index.js';
import { silentLogger } from '../src/util/logger.js';
import { Workspace } from '../src/workspace/index.js';
import type { BenchRow, BenchSection } from './bench-types.js';
import { load, percentile, round, rssMb, summary } from './stats.js';

const IDENTITY: CallIdentity = {
  agent: 'bench',
  sessionId: 'bench',
  workspaceNamespace: '',
  permissions: { workspace: 'read-write', skills: 'read-write', tools: ['*'], net: [] },
};

/** The embedded defaults with folders under `root`, a queue big enough for load tests, silent logs. */
export function benchConfig(root: string, sandbox: Partial<Config['sandbox']> = {}): Config {
  const config = defaultConfig(root);
  return {
    ...config,
    port: 0,
    limits: { ...config.limits, maxQueuedCalls: 10_000 },
    sandbox: { processes: 2, threadsPerProcess: 1, pythonProcesses: 0, ...sandbox },
    defaultPermissions: IDENTITY.permissions,
    logLevel: 'silent',
  };
}

async function startExecutor(root: string, sandbox: Partial<Config['sandbox']> = {}, toolNames: string[] = []): Promise<{ executor: PooledExecutor; workspace: Workspace }> {
  const config = benchConfig(root, sandbox);
  const workspace = new Workspace({ root: config.workspaceDir, maxFileBytes: config.limits.maxFileBytes });
  const hostApi = createHostApi({ config, workspace, logger: silentLogger(), toolNames: () => toolNames });
  // A daemon's threads give back their read caches after a minute without calls; here after a second,
  // so the at-rest row measures an idle daemon without the bench waiting a minute.
  const executor = await createExecutor({ config, hostApi, logger: silentLogger(), workspace, pool: { idleTrimMs: IDLE_TRIM_MS } });
  return { executor, workspace };
}

const call = (executor: PooledExecutor, code: string, extra: Partial<ExecutionRequest> = {}) =>
  executor.execute({ code, language: 'javascript', timeoutSeconds: 30, memoryMb: 500, ...extra }, IDENTITY).then((r) => {
    if (!r.success) throw new Error(`benchmark call failed: ${r.error_type}: ${r.error}`);
    return r;
  });

export const executorBench: BenchSection = {
  group: 'executor',
  async run(progress) {
    const rows: BenchRow[] = [];
    const root = mkdtempSync(path.join(tmpdir(), 'cem-bench-'));
    const { executor, workspace } = await startExecutor(root);
    try {
      // The data files are written first: a worker keeps a file's decoded text only once that
      // version is over 3 s old (read-cache.ts), as an agent's input files usually are.
      progress('executor: writing the data files');
      await workspace.namespace('').writeFile('bench/records.json', filterSource().data);
      for (let i = 0; i < COPIES; i++) await workspace.namespace('').writeFile(`bench/records-${i}.json`, filterSource().data);
      progress('executor: warming up');
      await load(300, 8, () => call(executor, 'return 1'));

      progress('executor: trivial calls, 1 in flight');
      const one = await load(2_000, 1, () => call(executor, 'return 1'));
      rows.push({ group: 'executor', name: 'trivial call, 1 in flight', value: round(one.perSecond, 0), unit: 'calls/s', extra: summary(one.latencies), target: 'p50 < 1 ms', met: percentile(one.latencies, 50) < 1 });

      progress('executor: trivial calls, 32 in flight');
      const cpuBefore = cpuMs(executor);
      const many = await load(8_000, 32, () => call(executor, 'return 1'));
      const cpu = cpuPerCall(cpuBefore, cpuMs(executor), 8_000);
      rows.push({ group: 'executor', name: 'trivial call, 32 in flight', value: round(many.perSecond, 0), unit: 'calls/s', extra: { ...summary(many.latencies), ...cpu }, target: '>= 2500 calls/s', met: many.perSecond >= 2500 });

      progress('executor: 10,000-record JSON filter from the workspace');
      const filter = await load(200, 2, () => call(executor, FILTER_CODE));
      rows.push({ group: 'executor', name: DATA_ROW, value: round(filter.perSecond, 0), unit: 'calls/s', extra: summary(filter.latencies) });
      // The same snippet when every read decodes its file afresh: 100 copies (140 MB) read in turn
      // overflow the worker threads' caches of decoded files (32 MB each), so no read hits them.
      progress('executor: the same filter, a different file each call (no cached read)');
      let copy = 0;
      const cold = await load(300, 2, () => call(executor, FILTER_CODE.replace('bench/records.json', `bench/records-${copy++ % COPIES}.json`)));
      rows.push({ group: 'executor', name: `${DATA_ROW}, a different file each call`, value: round(cold.perSecond, 0), unit: 'calls/s', extra: summary(cold.latencies) });
      // The same 1.4 MB of records passed with the call, as an agent passes data it already holds.
      progress('executor: the same filter, the data as context_vars');
      const records = filterSource().data;
      const viaContext = await load(200, 2, () => call(executor, CONTEXT_CODE, { contextVars: { data: records } }));
      rows.push({ group: 'executor', name: CONTEXT_ROW, value: round(viaContext.perSecond, 0), unit: 'calls/s', extra: summary(viaContext.latencies) });

      progress('executor: host call round trip (read_file of 1 KB from guest code)');
      await workspace.namespace('').writeFile('bench/one-kb.txt', 'x'.repeat(1024));
      // A call making READS reads against one making none: the difference per read is the round
      // trip guest -> worker -> pool host -> coordinator (workspace read) and back.
      const READS = 1_000;
      const withReads = `let n = 0; for (let i = 0; i < ${READS}; i++) n += read_file('bench/one-kb.txt').length; return n`;
      const without = `let n = 0; for (let i = 0; i < ${READS}; i++) n += 1024; return n`;
      const timeOf = async (code: string): Promise<number> => {
        const samples: number[] = [];
        for (let i = 0; i < 7; i++) {
          const t = performance.now();
          await call(executor, code);
          samples.push(performance.now() - t);
        }
        return percentile(samples, 50);
      };
      const perRead = ((await timeOf(withReads)) - (await timeOf(without))) / READS;
      rows.push({ group: 'executor', name: 'host call round trip: read_file of 1 KB from guest code', value: round(perRead * 1000, 0), unit: 'µs', target: '<= 100 µs', met: perRead * 1000 <= 100 });
      // read_file is served in the worker (workers/kit/fast-read.ts); list_files still goes
      // guest -> worker -> pool host -> coordinator and back: what every other host call costs.
      const withLists = `let n = 0; for (let i = 0; i < ${READS}; i++) n += list_files('bench').length; return n`;
      const perList = ((await timeOf(withLists)) - (await timeOf(without))) / READS;
      rows.push({ group: 'executor', name: 'host call round trip relayed to the coordinator: list_files', value: round(perList * 1000, 0), unit: 'µs' });

      progress('executor: TypeScript path');
      let tsN = 0;
      // Distinct source per call so the preprocessing cache does not hide the TypeScript cost.
      const ts = await load(1_000, 8, () => call(executor, `interface R { n: number }\nconst r: R = { n: ${tsN++} };\nreturn r.n as number;`, { language: 'typescript' }));
      rows.push({ group: 'executor', name: 'TypeScript call (types stripped, uncached), 8 in flight', value: round(ts.perSecond, 0), unit: 'calls/s', extra: summary(ts.latencies) });

      progress('executor: pool memory at rest');
      await new Promise((resolve) => setTimeout(resolve, 2 * IDLE_TRIM_MS));
      const pids = executor.processes().map((p) => p.pid).filter((p): p is number => p !== undefined);
      let sandboxMb = 0;
      for (const pid of pids) sandboxMb += await rssMb(pid);
      rows.push({ group: 'executor', name: `sandbox processes at rest (${pids.length} processes, RSS)`, value: round(sandboxMb, 1), unit: 'MB' });
      rows.push({ group: 'executor', name: 'coordinator at rest (RSS)', value: await rssMb(process.pid), unit: 'MB' });
    } finally {
      await executor.close();
    }

    progress('executor: trivial calls, 32 in flight, for an agent that may call 300 upstream tools');
    const toolNames = Array.from({ length: 300 }, (_, i) => `server${i % 12}.some_upstream_tool_${i}`);
    const manyTools = await startExecutor(root, {}, toolNames);
    try {
      await load(300, 8, () => call(manyTools.executor, 'return 1'));
      const withTools = await load(4_000, 32, () => call(manyTools.executor, 'return 1'));
      rows.push({ group: 'executor', name: 'trivial call, 32 in flight, agent with 300 upstream tools', value: round(withTools.perSecond, 0), unit: 'calls/s', extra: summary(withTools.latencies) });
    } finally {
      await manyTools.executor.close();
    }

    progress('executor: worker replacement after a timeout');
    const single = await startExecutor(root, { processes: 1 });
    try {
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await single.executor.execute({ code: 'for (;;) {}', language: 'javascript', timeoutSeconds: 0.2, memoryMb: 500 }, IDENTITY);
        if (r.error_type !== 'TimeoutError') throw new Error(`expected a timeout, got ${r.error_type}`);
        const t = performance.now();
        await call(single.executor, 'return 1');
        times.push(performance.now() - t);
      }
      rows.push({ group: 'executor', name: 'worker replacement after a timeout (next call latency, 1 process)', value: round(percentile(times, 50), 1), unit: 'ms', extra: { max_ms: round(Math.max(...times), 1) } });
    } finally {
      await single.executor.close();
    }

    rows.push(...(await naiveSesPool(progress, rows, filterSource())));
    rows.push(...(await baselines(progress, rows)));
    return rows;
  },
};

const IDLE_TRIM_MS = 1_000;

/** CPU used so far, ms: the sandbox processes' (every thread, from /proc; 0 where there is none) and this coordinator's. */
function cpuMs(executor: PooledExecutor): { sandbox: number; coordinator: number } {
  let sandbox = 0;
  for (const p of executor.processes()) {
    if (p.pid === undefined) continue;
    try {
      const fields = (readFileSync(`/proc/${p.pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
      sandbox += (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      // Not Linux, or the process is gone: its share is not counted.
    }
  }
  const u = process.cpuUsage();
  return { sandbox, coordinator: (u.user + u.system) / 1000 };
}

/** CPU per call, µs, between two `cpuMs` readings: on a shared machine steadier than calls/s. */
function cpuPerCall(a: { sandbox: number; coordinator: number }, b: { sandbox: number; coordinator: number }, calls: number): Record<string, number> {
  return { sandbox_cpu_us_per_call: round(((b.sandbox - a.sandbox) * 1000) / calls, 0), coordinator_cpu_us_per_call: round(((b.coordinator - a.coordinator) * 1000) / calls, 0) };
}
/** Copies of the data file for the uncached row: read in turn, 140 MB overflow every thread's cache. */
const COPIES = 100;
const DATA_ROW = '10,000-record JSON filter (read_file + filter)';
const CONTEXT_ROW = '10,000-record JSON filter, the 1.4 MB of data as context_vars';
/** The filter on a global `data` (context_vars here, the task's own string in the naive pool). */
const CONTEXT_CODE = "const records = JSON.parse(data);\nconst active = records.filter((d) => d.status === 'active' && d.score > 50);\nreturn { count: active.length, top: active.slice(0, 3).map((d) => d.id) };";
const FILTER_CODE = "const data = JSON.parse(read_file('bench/records.json'));\nconst active = data.filter((d) => d.status === 'active' && d.score > 50);\nreturn { count: active.length, top: active.slice(0, 3).map((d) => d.id) };";

function filterSource(): { code: string; data: string } {
  const records = Array.from({ length: 10_000 }, (_, i) => ({ id: i, status: i % 3 === 0 ? 'active' : 'inactive', score: i % 100, name: `user-${i}` }));
  return { code: FILTER_CODE, data: JSON.stringify(records) };
}

/**
 * The standing baseline of issue 14: piscina + a fresh SES Compartment per call with minimal
 * endowments, two threads (as the executor's two sandbox processes), the same snippets and
 * concurrency. The executor's rows get their ratio to it; targets: trivial >= 1.0x, data >= 0.8x.
 */
async function naiveSesPool(progress: (m: string) => void, rows: readonly BenchRow[], data: { code: string; data: string }): Promise<BenchRow[]> {
  progress('baseline: naive SES pool (piscina + fresh Compartment per call)');
  const here = path.dirname(fileURLToPath(import.meta.url));
  const pool = new Piscina({ filename: path.join(here, 'fixtures', 'naive-ses-worker.js'), minThreads: 2, maxThreads: 2 });
  const out: BenchRow[] = [];
  try {
    await load(300, 8, () => pool.run({ code: 'return 1' }));
    const one = await load(2_000, 1, () => pool.run({ code: 'return 1' }));
    const cpuBefore = process.cpuUsage();
    const many = await load(8_000, 32, () => pool.run({ code: 'return 1' }));
    const cpu = process.cpuUsage(cpuBefore);
    const filter = await load(200, 2, () => pool.run(data));
    const withData = await load(200, 2, () => pool.run({ code: CONTEXT_CODE, data: data.data }));
    out.push({ group: 'executor', name: 'baseline: naive SES pool, 1 in flight', value: round(one.perSecond, 0), unit: 'calls/s', extra: summary(one.latencies) });
    // CPU per call (its one process: main thread and pool threads) is the robust figure on a shared machine.
    out.push({ group: 'executor', name: 'baseline: naive SES pool, 32 in flight', value: round(many.perSecond, 0), unit: 'calls/s', extra: { ...summary(many.latencies), cpu_us_per_call: round((cpu.user + cpu.system) / 8_000, 0) } });
    out.push({ group: 'executor', name: 'baseline: naive SES pool, 10,000-record JSON filter', value: round(filter.perSecond, 0), unit: 'calls/s', extra: summary(filter.latencies) });
    out.push({ group: 'executor', name: 'baseline: naive SES pool, the filter with its data in the task', value: round(withData.perSecond, 0), unit: 'calls/s', extra: summary(withData.latencies) });
    const ours1 = rows.find((r) => r.name === 'trivial call, 1 in flight');
    const ours32 = rows.find((r) => r.name === 'trivial call, 32 in flight');
    const oursData = rows.find((r) => r.name === DATA_ROW);
    const ratio = (row: BenchRow, v: number): number => round(row.value / v, 3);
    // Ratios to the naive pool are the executor's headline targets; they replace bare piscina's.
    if (ours32) {
      const r = ratio(ours32, many.perSecond);
      Object.assign(ours32, { baseline: { name: 'naive SES pool, 32 in flight', ratio: r }, target: '>= 1.0x naive SES pool', met: r >= 1 });
    }
    if (oursData) {
      const r = ratio(oursData, filter.perSecond);
      Object.assign(oursData, { baseline: { name: 'naive SES pool, data snippet', ratio: r }, target: '>= 0.8x naive SES pool', met: r >= 0.8 });
    }
    const oursContext = rows.find((r) => r.name === CONTEXT_ROW);
    if (oursContext) {
      const r = ratio(oursContext, withData.perSecond);
      Object.assign(oursContext, { baseline: { name: 'naive SES pool, data in the task', ratio: r }, target: '>= 1.0x naive SES pool', met: r >= 1 });
    }
    const oursCold = rows.find((r) => r.name === `${DATA_ROW}, a different file each call`);
    if (oursCold) oursCold.baseline = { name: 'naive SES pool, data snippet', ratio: ratio(oursCold, filter.perSecond) };
    if (ours1) {
      const p50 = Number((ours1.extra as Record<string, unknown> | undefined)?.['p50_ms'] ?? NaN);
      // Issue 31: p50 with one in flight at most 1.2x the naive pool's, measured in the same run.
      const naiveP50 = percentile(one.latencies, 50);
      Object.assign(ours1, { baseline: { name: 'naive SES pool, 1 in flight', ratio: ratio(ours1, one.perSecond) }, extra: { ...(ours1.extra ?? {}), naive_p50_ms: round(naiveP50, 3) }, target: 'p50 <= 1.2x naive p50', met: p50 <= 1.2 * naiveP50 });
    }
  } finally {
    await pool.close();
  }
  return out;
}

async function baselines(progress: (m: string) => void, rows: readonly BenchRow[]): Promise<BenchRow[]> {
  const out: BenchRow[] = [];
  const ours32 = rows.find((r) => r.name === 'trivial call, 32 in flight');
  const ratio = (row: BenchRow | undefined, v: number) => (row ? round(row.value / v, 3) : 0);

  progress('baseline: bare piscina round trip (no SES, no process boundary)');
  const here = path.dirname(fileURLToPath(import.meta.url));
  const pool = new Piscina({ filename: path.join(here, 'fixtures', 'echo-worker.js'), minThreads: 2, maxThreads: 2 });
  try {
    await load(500, 8, (i) => pool.run({ n: i }));
    const b1 = await load(5_000, 1, (i) => pool.run({ n: i }));
    const b32 = await load(20_000, 32, (i) => pool.run({ n: i }));
    out.push({ group: 'executor', name: 'baseline: bare piscina, 1 in flight', value: round(b1.perSecond, 0), unit: 'calls/s', extra: summary(b1.latencies) });
    out.push({ group: 'executor', name: 'baseline: bare piscina, 32 in flight', value: round(b32.perSecond, 0), unit: 'calls/s', extra: summary(b32.latencies) });
    // The executor's rows carry their ratio to the naive SES pool; bare piscina's ratio is recorded here.
    out.push({ group: 'executor', name: 'executor / bare piscina, 32 in flight', value: ratio(ours32, b32.perSecond), unit: 'x' });
  } finally {
    await pool.close();
  }

  progress('baseline: node:vm, new context per call (in-process, unsafe)');
  const vmRun = await load(2_000, 1, async () => vm.runInNewContext('(function(){ return 1 })()', {}));
  out.push({ group: 'executor', name: 'baseline: node:vm new context per call', value: round(vmRun.perSecond, 0), unit: 'calls/s', extra: summary(vmRun.latencies) });

  progress('baseline: new Worker per call');
  const workerRun = await load(40, 1, () => new Promise<void>((resolve, reject) => {
    const w = new Worker('require("node:worker_threads").parentPort.postMessage(1)', { eval: true });
    w.once('message', () => void w.terminate().then(() => resolve()));
    w.once('error', reject);
  }));
  out.push({ group: 'executor', name: 'baseline: new Worker per call', value: round(workerRun.perSecond, 1), unit: 'calls/s', extra: summary(workerRun.latencies) });
  return out;
}
