// How light Python is (issue 22): an interpreter from the memory snapshot beside a cold one, the
// first Python call of a fresh daemon (on demand beside --python-warm), `exec --language python`,
// the trivial call, the 1.4 MB data snippet beside the seed's own approach (CPython `exec` with
// restricted builtins, python3 here), and the daemon's memory at rest (coordinator plus every
// sandbox process) on demand beside --python-warm. Baselines are measured in the same run.

import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createExecutor, createHostApi } from '../src/executor/index.js';
import type { CallIdentity, ExecutionResult, PooledExecutor } from '../src/executor/index.js';
import { pythonSnapshotDir } from '../src/executor/python-pool.js';
import { silentLogger } from '../src/util/logger.js';
import { Workspace } from '../src/workspace/index.js';
import type { BenchRow, BenchSection } from './bench-types.js';
import { benchConfig } from './executor-bench.js';
import { DATA_PY, records } from './python-data.js';
import { closeLeanSession, leanCallTool, openLeanSession, withChildren } from './http-lean-client.js';
import { load, percentile, round, rssMb, summary } from './stats.js';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const cli = path.join(repo, 'bin', 'code-execution-mcp.js');
const identity: CallIdentity = { agent: 'bench', sessionId: 'bench', workspaceNamespace: '', permissions: { workspace: 'read-write', skills: 'read-write', tools: ['*'], net: [] } };

/** The seed's approach: the same snippet through CPython's exec with restricted builtins (no isolation). */
const SEED_RUNNER = `
import json, sys, time
raw = sys.stdin.read()
code = compile(${JSON.stringify(DATA_PY.split('\n').slice(1).join('\n'))}, '<sandbox>', 'exec')
safe = {k: __builtins__.__dict__[k] for k in ('len', 'range', 'sum', 'min', 'max', 'sorted', 'list', 'dict', 'str', 'int', 'float', 'enumerate', 'zip')}
times = []
for _ in range(int(sys.argv[1])):
    t = time.perf_counter()
    g = {'__builtins__': safe, 'json': json, 'raw': raw}
    exec(code, g)
    times.append((time.perf_counter() - t) * 1000)
times.sort()
print(json.dumps({'p50': times[len(times) // 2], 'count': g['result']['count']}))
`;

/** The seed's approach in python3, the JSON text on its stdin; its p50, ms. */
function seedRun(raw: string, runs: number): Promise<{ p50: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-c', SEED_RUNNER, String(runs)], { stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as { p50: number }) : reject(new Error(`python3 exited ${code}`))));
    child.stdin.end(raw);
  });
}

/** Runs a probe script of this folder in a process of its own; the JSON of its last output line. */
async function probe<T>(script: string, args: string[]): Promise<T> {
  const { stdout } = await run(process.execPath, [path.join(here, script), ...args], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').pop() as string) as T;
}

/** Pyodide alone on the data snippet (python-floor-probe.ts); its p50, ms. */
function floorRun(dir: string, runs: number): Promise<{ p50: number }> {
  return probe('python-floor-probe.js', [dir, String(runs)]);
}

function probeStart(dir: string | undefined): Promise<{ startupMs: number; fromSnapshot: boolean }> {
  return probe('python-start-probe.js', dir ? [dir] : []);
}

/** Spawns `serve` on a free port; resolves with its pid, URL and when it started. */
async function serve(dataDir: string, env: Record<string, string>): Promise<{ pid: number; url: string; startedAt: number; stop(): Promise<void> }> {
  const portFile = path.join(dataDir, 'port');
  rmSync(portFile, { force: true });
  const startedAt = performance.now();
  const child = spawn(process.execPath, [cli, 'serve', '--port', '0', '--port-file', portFile, '--data-dir', dataDir], {
    env: { ...process.env, CODE_EXEC_LOG_LEVEL: 'warn', CODE_EXEC_SEMANTIC_SEARCH: 'false', ...env },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const until = performance.now() + 120_000;
  while (!existsSync(portFile) || readFileSync(portFile, 'utf8').trim() === '') {
    if (performance.now() > until || child.exitCode !== null) throw new Error('the daemon did not start');
    await new Promise((r) => setTimeout(r, 20));
  }
  const url = `http://127.0.0.1:${readFileSync(portFile, 'utf8').trim()}/mcp`;
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return { pid: child.pid as number, url, startedAt, stop };
}

async function treeRssMb(pid: number): Promise<number> {
  let total = 0;
  for (const p of await withChildren(pid)) total += await rssMb(p);
  return round(total, 0);
}

async function healthy(url: string, python: number): Promise<void> {
  const until = performance.now() + 240_000;
  while (performance.now() < until) {
    const body = (await fetch(url.replace(/\/mcp$/, '/healthz')).then((r) => r.json()).catch(() => ({}))) as { processes?: Record<string, { ready: number }> };
    if ((body.processes?.['python']?.ready ?? 0) >= python && (body.processes?.['js']?.ready ?? 0) > 0) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** When the bench sends the first Python call of a fresh daemon on a new data folder, after it listens, ms (issue 35). */
const FIRST_CALL_AFTER_MS = 15_000;

export const pythonLightBench: BenchSection = {
  group: 'python-light',
  async run(progress) {
    const rows: BenchRow[] = [];
    const root = mkdtempSync(path.join(tmpdir(), 'cem-bench-light-'));
    const snapshots = pythonSnapshotDir({ dataDir: root });

    progress('python-light: interpreter start, from the snapshot beside cold (alternating, 3 each)');
    await probeStart(snapshots); // makes the snapshot
    const cold: number[] = [];
    const warm: number[] = [];
    for (let i = 0; i < 3; i++) {
      cold.push((await probeStart(undefined)).startupMs);
      const s = await probeStart(snapshots);
      if (!s.fromSnapshot) throw new Error('the snapshot was not used');
      warm.push(s.startupMs);
    }
    rows.push({ group: 'python-light', name: 'Pyodide interpreter start, cold (baseline)', value: round(percentile(cold, 50), 0), unit: 'ms', extra: summary(cold) });
    rows.push({ group: 'python-light', name: 'Pyodide interpreter start, from the memory snapshot', value: round(percentile(warm, 50), 0), unit: 'ms', extra: summary(warm), target: '<= 400 ms', met: percentile(warm, 50) <= 400, baseline: { name: 'cold', ratio: round(percentile(warm, 50) / percentile(cold, 50), 2) } });

    for (const [label, env] of [['on demand (default)', {}], ['--python-warm (baseline: the old start-up)', { CODE_EXEC_PYTHON_WARM: 'true' }]] as const) {
      progress(`python-light: fresh daemon, ${label}: memory at rest and first Python call`);
      const dataDir = mkdtempSync(path.join(root, 'daemon-'));
      const daemon = await serve(dataDir, { ...env, CODE_EXEC_DATA_DIR: dataDir });
      try {
        const listeningMs = performance.now() - daemon.startedAt;
        const onDemand = label.startsWith('on demand');
        // Warm: at rest means once its interpreters are up. On demand: 15 s after listening, when the
        // first Python call on a new data folder should find the snapshot made in the background.
        if (!onDemand) await healthy(daemon.url, 2);
        else await new Promise((r) => setTimeout(r, Math.max(0, FIRST_CALL_AFTER_MS - (performance.now() - daemon.startedAt - listeningMs))));
        const warming = ((await fetch(daemon.url.replace(/\/mcp$/, '/healthz')).then((r) => r.json()).catch(() => ({}))) as { warming?: string[] }).warming;
        const rest = await treeRssMb(daemon.pid);
        const primer = await openLeanSession(daemon.url);
        const t = performance.now();
        await leanCallTool(primer, 'execute_code', { code: 'result = 0', language: 'python', timeout_seconds: 120 });
        const firstMs = performance.now() - t;
        closeLeanSession(primer);
        if (onDemand) rows.push({ group: 'python-light', name: `first Python call of a fresh daemon on a new data folder, made ${FIRST_CALL_AFTER_MS / 1000} s after it listens, ${label}`, value: round(firstMs, 0), unit: 'ms', extra: { python_still_warming_then: warming?.includes('python') === true ? 1 : 0 }, target: '<= 1000 ms', met: firstMs <= 1000 });
        rows.push({ group: 'python-light', name: `daemon at rest, nothing called, ${label}: coordinator + every sandbox process (RSS)`, value: rest, unit: 'MB', target: onDemand ? '<= 250 MB' : undefined, met: onDemand ? rest <= 250 : undefined });
        rows.push({ group: 'python-light', name: `daemon spawn to its listening line, ${label}`, value: round(listeningMs, 0), unit: 'ms', target: onDemand ? '<= 1500 ms' : undefined, met: onDemand ? listeningMs <= 1500 : undefined });
      } finally {
        await daemon.stop();
      }
      if (label.startsWith('on demand')) {
        // A new data folder again, the Python call sent the moment the daemon listens: it waits for the background make.
        const fresh = await serve(mkdtempSync(path.join(root, 'daemon-')), env);
        try {
          const session = await openLeanSession(fresh.url);
          const t = performance.now();
          const answer = (await leanCallTool(session, 'execute_code', { code: 'result = 1 + 1', language: 'python', timeout_seconds: 120 })) as { structuredContent?: { sandbox_start_wait_ms?: number } };
          const callMs = performance.now() - t;
          closeLeanSession(session);
          rows.push({ group: 'python-light', name: `first Python call of a fresh daemon on a new data folder, made as soon as it listens, ${label}`, value: round(callMs, 0), unit: 'ms', extra: { sandbox_start_wait_ms: answer.structuredContent?.sandbox_start_wait_ms ?? 0 }, target: '<= 10000 ms', met: callMs <= 10_000 });
        } finally {
          await fresh.stop();
        }
      }
      // The first Python call of a fresh daemon whose data directory already holds the snapshot.
      const again = await serve(dataDir, { ...env, CODE_EXEC_DATA_DIR: dataDir });
      try {
        const session = await openLeanSession(again.url);
        const t = performance.now();
        await leanCallTool(session, 'execute_code', { code: 'result = 1 + 1', language: 'python', timeout_seconds: 120 });
        const callMs = performance.now() - t;
        closeLeanSession(session);
        // The call's own time, end to end as its client sees it (the daemon's start is the row above).
        const onDemand = label.startsWith('on demand');
        rows.push({ group: 'python-light', name: `first Python call of a fresh daemon, call sent to answer, ${label}`, value: round(callMs, 0), unit: 'ms', extra: { daemon_spawn_to_answer_ms: round(performance.now() - again.startedAt, 0) }, target: onDemand ? '<= 1000 ms' : undefined, met: onDemand ? callMs <= 1000 : undefined });
      } finally {
        await again.stop();
      }
    }

    progress('python-light: exec --language python on return 1 + 1 (wall)');
    const execMs: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      await new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, [cli, 'exec', '--language', 'python', '-'], { env: { ...process.env, CODE_EXEC_DATA_DIR: root }, stdio: ['pipe', 'ignore', 'ignore'] });
        child.stdin.end('return 1 + 1\n');
        child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`exec exited ${code}`))));
      });
      execMs.push(performance.now() - t);
    }
    rows.push({ group: 'python-light', name: 'exec --language python, return 1 + 1 (wall)', value: round(percentile(execMs, 50), 0), unit: 'ms', extra: summary(execMs), target: '<= 2000 ms', met: percentile(execMs, 50) <= 2000 });

    progress('python-light: trivial Python call and the 1.4 MB data snippet, beside the seed approach');
    const config = benchConfig(root, { processes: 1, pythonProcesses: 1 });
    const workspace = new Workspace({ root: config.workspaceDir, maxFileBytes: config.limits.maxFileBytes });
    const executor: PooledExecutor = await createExecutor({ config, hostApi: createHostApi({ config, workspace, logger: silentLogger() }), logger: silentLogger(), workspace });
    try {
      const call = (code: string, contextVars?: Record<string, unknown>): Promise<ExecutionResult> =>
        executor.execute({ code, language: 'python', timeoutSeconds: 120, memoryMb: 500, ...(contextVars ? { contextVars } : {}) }, identity).then((r) => {
          if (!r.success) throw new Error(`benchmark call failed: ${r.error_type}: ${r.error}`);
          return r;
        });
      await call('result = 1');
      await load(100, 1, () => call('result = 1'));
      const trivial = await load(500, 1, () => call('result = 1'));
      rows.push({ group: 'python-light', name: 'trivial Python call, 1 in flight (p50)', value: round(percentile(trivial.latencies, 50), 2), unit: 'ms', extra: summary(trivial.latencies), target: '<= 1 ms', met: percentile(trivial.latencies, 50) <= 1 });
      const raw = records();
      const data = await load(20, 1, () => call(DATA_PY, { raw }));
      const seed = await seedRun(raw, 20).catch(() => undefined);
      const ours = percentile(data.latencies, 50);
      const seedP50 = seed ? seed.p50 : NaN;
      rows.push({ group: 'python-light', name: `data snippet: ${(raw.length / 1e6).toFixed(1)} MB JSON in context_vars, json.loads + filter (p50)`, value: round(ours, 1), unit: 'ms', extra: summary(data.latencies), ...(seed ? { baseline: { name: "the seed's own exec (python3)", ratio: round(seedP50 / ours, 2) } } : {}), target: '>= 0.5x the seed', ...(seed ? { met: seedP50 / ours >= 0.5 } : {}) });
      if (seed) rows.push({ group: 'python-light', name: "data snippet, the seed's own approach (CPython exec, restricted builtins, no isolation) (p50)", value: round(seedP50, 1), unit: 'ms' });
      // What no Pyodide-based sandbox can beat: the snippet in a bare interpreter, the string already in Python.
      const floor = await floorRun(snapshots, 20).catch(() => undefined);
      if (floor) rows.push({ group: 'python-light', name: 'data snippet, Pyodide alone (the floor: no sandbox, IPC or clean-up around it) (p50)', value: round(floor.p50, 1), unit: 'ms', ...(seed ? { baseline: { name: "the seed's own exec (python3)", ratio: round(seedP50 / floor.p50, 2) } } : {}) });
    } finally {
      await executor.close();
    }
    return rows;
  },
};
