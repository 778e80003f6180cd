// Python benchmark: calls through the real executor to Pyodide workers (warm pool), the cold start
// of one Pyodide sandbox process, the cost of another agent's call (full state sweep), and a
// 100,000-record filter in Python beside the same filter in JavaScript, in the same executor on
// the same workspace file, so the ratio holds on a noisy machine.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Config } from '../src/config/config-types.js';
import { createExecutor, createHostApi } from '../src/executor/index.js';
import type { CallIdentity, ExecutionRequest, ExecutionResult, PooledExecutor } from '../src/executor/index.js';
import { silentLogger } from '../src/util/logger.js';
import { Workspace } from '../src/workspace/index.js';
import type { BenchRow, BenchSection } from './bench-types.js';
import { benchConfig } from './executor-bench.js';
import { pythonIsolationRows } from './python-isolation-bench.js';
import { load, percentile, round, rssMb, summary } from './stats.js';

/** Pyodide loads in seconds; the first call of a fresh pool may wait this long for it. */
const START_TIMEOUT_S = 240;

const identity = (namespace = ''): CallIdentity => ({
  agent: namespace || 'bench',
  sessionId: 'bench',
  workspaceNamespace: namespace,
  permissions: { workspace: 'read-write', skills: 'read-write', tools: ['*'], net: [] },
});

async function start(root: string, sandbox: Partial<Config['sandbox']>): Promise<{ executor: PooledExecutor; workspace: Workspace; startedAt: number }> {
  const config = benchConfig(root, sandbox);
  const workspace = new Workspace({ root: config.workspaceDir, maxFileBytes: config.limits.maxFileBytes });
  const startedAt = performance.now();
  const executor = await createExecutor({ config, hostApi: createHostApi({ config, workspace, logger: silentLogger() }), logger: silentLogger(), workspace });
  return { executor, workspace, startedAt };
}

function call(executor: PooledExecutor, code: string, extra: Partial<ExecutionRequest> = {}, namespace = ''): Promise<ExecutionResult> {
  return executor.execute({ code, language: 'python', timeoutSeconds: 60, memoryMb: 500, ...extra }, identity(namespace)).then((r) => {
    if (!r.success) throw new Error(`benchmark call failed: ${r.error_type}: ${r.error}`);
    return r;
  });
}

const PY_FILTER = [
  "data = json.loads(read_file('bench/records-100k.json'))",
  "active = [d for d in data if d['status'] == 'active' and d['score'] > 50]",
  "result = {'count': len(active), 'top': [d['id'] for d in active[:3]]}",
].join('\n');
const JS_FILTER = [
  "const data = JSON.parse(read_file('bench/records-100k.json'));",
  "const active = data.filter((d) => d.status === 'active' && d.score > 50);",
  'return { count: active.length, top: active.slice(0, 3).map((d) => d.id) };',
].join('\n');

export const pythonBench: BenchSection = {
  group: 'python',
  async run(progress) {
    const rows: BenchRow[] = [];
    const root = mkdtempSync(path.join(tmpdir(), 'cem-bench-python-'));

    progress('python: cold start of one Pyodide sandbox process');
    const cold = await start(root, { processes: 1, pythonProcesses: 1 });
    try {
      await call(cold.executor, 'result = 1', { timeoutSeconds: START_TIMEOUT_S });
      const firstCallMs = performance.now() - cold.startedAt;
      const python = cold.executor.processes().find((p) => p.kind === 'python') as { pid?: number; startupMs?: number } | undefined;
      rows.push({
        group: 'python',
        name: 'cold start: Pyodide sandbox process start to ready',
        value: round(python?.startupMs ?? 0, 0),
        unit: 'ms',
        extra: { executor_start_to_first_call_ms: round(firstCallMs, 0) },
      });
      if (python?.pid) rows.push({ group: 'python', name: 'one Python sandbox process at rest (RSS)', value: await rssMb(python.pid), unit: 'MB' });
    } finally {
      await cold.executor.close();
    }

    progress('python: warm pool (2 Python processes)');
    const { executor, workspace } = await start(root, { processes: 1, pythonProcesses: 2 });
    try {
      await Promise.all([0, 1].map(() => call(executor, 'result = 1', { timeoutSeconds: START_TIMEOUT_S })));
      await load(100, 2, () => call(executor, 'result = 1'));

      progress('python: trivial calls, 1 in flight');
      const one = await load(500, 1, () => call(executor, 'result = 1'));
      // Issue 31's target: p50 <= 0.5 ms with one in flight.
      rows.push({ group: 'python', name: 'trivial Python call, 1 in flight', value: round(one.perSecond, 0), unit: 'calls/s', extra: summary(one.latencies), target: 'p50 <= 0.5 ms', met: percentile(one.latencies, 50) <= 0.5 });

      progress('python: trivial calls, 8 in flight');
      const many = await load(1_000, 8, () => call(executor, 'result = 1'));
      rows.push({ group: 'python', name: 'trivial Python call, 8 in flight (2 workers)', value: round(many.perSecond, 0), unit: 'calls/s', extra: summary(many.latencies) });

      progress('python: calls alternating between two agents (each bound to its own interpreter)');
      const alternating = await load(200, 1, (i) => call(executor, 'result = 1', {}, i % 2 === 0 ? 'agent-a' : 'agent-b'));
      rows.push({
        group: 'python',
        name: 'trivial Python call, two agents alternating, 1 in flight',
        value: round(alternating.perSecond, 0),
        unit: 'calls/s',
        extra: summary(alternating.latencies),
        baseline: { name: 'same agent', ratio: round(alternating.perSecond / one.perSecond, 2) },
      });

      progress('python: 100,000-record filter, Python beside JavaScript');
      const records = Array.from({ length: 100_000 }, (_, i) => ({ id: i, status: i % 3 === 0 ? 'active' : 'inactive', score: i % 100, name: `user-${i}` }));
      await workspace.namespace('').writeFile('bench/records-100k.json', JSON.stringify(records));
      const expected = records.filter((d) => d.status === 'active' && d.score > 50).length;
      const check = (r: ExecutionResult): void => {
        if ((r.result as { count?: number }).count !== expected) throw new Error(`filter gave ${JSON.stringify(r.result)}, expected count ${expected}`);
      };
      check(await call(executor, PY_FILTER));
      const js = await load(20, 1, async () => check(await executor.execute({ code: JS_FILTER, language: 'javascript', timeoutSeconds: 60, memoryMb: 500 }, identity())));
      const py = await load(20, 1, async () => check(await call(executor, PY_FILTER)));
      const jsP50 = percentile(js.latencies, 50);
      const pyP50 = percentile(py.latencies, 50);
      rows.push({ group: 'python', name: '100,000-record filter in JavaScript (read_file + parse + filter)', value: round(jsP50, 1), unit: 'ms', extra: summary(js.latencies) });
      rows.push({
        group: 'python',
        name: '100,000-record filter in Python (read_file + json.loads + comprehension)',
        value: round(pyP50, 1),
        unit: 'ms',
        extra: summary(py.latencies),
        baseline: { name: 'same filter in JavaScript', ratio: round(pyP50 / jsP50, 2) },
      });
    } finally {
      await executor.close();
    }
    rows.push(...(await pythonIsolationRows(progress)));
    return rows;
  },
};
