// Load test with faults (not in CI): 16 agents share one real daemon, first alone, then while an
// attacker sends the inputs that used to stall or corrupt it (token-counting bombs, slow-body
// floods, runaway and process-killing code, session churn, a quota filler, and the issue-24
// attackers of load-test-attackers.ts: a 16 MB upstream argument with pii.flows on, a PII-tool
// flood, an SSE-buffer filler, a 600-connection holder on loopback; and issue 33's of
// load-test-contain.ts: stripper traps with and without `language`, vault bytes, a stateless
// skills/list flood, Python finalizers after the answer). Reports calls,
// failures by kind, p50/p99 and /healthz p99 per phase, coordinator RSS over time and lost writes
// (acknowledged versions not found afterwards: must be 0), as a table, bench/results/load-test.json
// and a chart, bench/results/load-test.svg.
//
//   npm run build && node dist/bench/load-test.js [--duration 60] [--agents 16]
//   npm run build && node dist/bench/load-test.js --stall-probe [--duration 20]
// The second form is the coordinator stall probe alone: one attacker reads a 256 KiB file without
// whitespace and returns 1 MB without whitespace, in a loop, while one bystander times a trivial
// call and GET /healthz (target: both under 250 ms p99).

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { percentile, round } from './stats.js';
import { loadTestChart } from './load-test-chart.js';
import { skillSaveFlood } from './load-test-skill-flood.js';
import { attackerConfig, connectionHolder, largeFlowCall, piiToolFlood, sseBufferFiller } from './load-test-attackers.js';
import { CONTAIN_LIMITS, pythonFinalizers, saveLargeSkills, skillsListFlood, stripperTraps, vaultBytes } from './load-test-contain.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(here, '..', '..');
const BIN = path.join(REPO, 'bin', 'code-execution-mcp.js');
const QUOTA_BYTES = 64 * 1024 * 1024;

interface PhaseStats {
  phase: string;
  calls: number;
  failures: Record<string, number>;
  latencies: number[];
  healthz: number[];
}

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const tokenOf = (name: string): string => `${name}-token-${'0123456789abcdef'.repeat(2)}`;

async function startDaemon(home: string, agents: string[]): Promise<{ pid: number; url: string; base: string; port: number; stop(): Promise<void> }> {
  const config = path.join(home, 'config.json');
  const permissions = { workspace: 'read-write', skills: 'read-write', tools: ['*'], net: [] };
  writeFileSync(config, JSON.stringify({ agents: agents.map((name) => ({ name, token: tokenOf(name), permissions })), limits: CONTAIN_LIMITS, ...attackerConfig() }));
  const env = {
    PATH: process.env['PATH'] ?? '',
    HOME: home,
    CODE_EXEC_WORKSPACE_DIR: path.join(home, 'workspace'),
    CODE_EXEC_SKILLS_DIR: path.join(home, 'skills'),
    CODE_EXEC_PYTHON_PROCESSES: '1',
    CODE_EXEC_LOG_LEVEL: 'warn',
    CODE_EXEC_WORKSPACE_QUOTA_BYTES: String(QUOTA_BYTES),
    CODE_EXEC_MAX_SESSIONS_PER_AGENT: '24',
    CODE_EXEC_BODY_TIMEOUT_SECONDS: '5',
  };
  const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--config', config, '--log-level', 'info'], { cwd: REPO, env, stdio: ['ignore', 'ignore', 'pipe'] });
  const line = await new Promise<Record<string, unknown>>((resolve, reject) => {
    createInterface({ input: proc.stderr }).on('line', (text) => {
      try {
        const entry = JSON.parse(text) as Record<string, unknown>;
        if (entry['msg'] === 'listening') resolve(entry);
      } catch {
        // not a log line
      }
    });
    proc.once('exit', (code) => reject(new Error(`daemon exited with ${code}`)));
  });
  const url = String(line['url']);
  return {
    pid: proc.pid!,
    url,
    base: url.replace(/\/mcp$/, ''),
    port: Number(line['port']),
    stop: () =>
      new Promise((resolve) => {
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}

async function client(url: string, agent: string): Promise<Client> {
  const c = new Client({ name: `load-${agent}`, version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${tokenOf(agent)}` } } }));
  return c;
}

function rssMb(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Math.round(Number(match[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

function failureKind(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/timed out|timeout/i.test(message)) return 'client_timeout';
  if (/429|503|overloaded/i.test(message)) return 'refused';
  return 'rpc_error';
}

/** One well-behaved agent: trivial calls, a small data job, listings, and versioned writes read back. */
async function agentLoop(c: Client, name: string, stats: () => PhaseStats, until: () => boolean, acked: Map<string, number>): Promise<void> {
  let version = 0;
  for (let i = 0; !until(); i++) {
    const s = stats();
    const t = performance.now();
    let kind: string | undefined;
    try {
      const op = i % 8;
      if (op < 4) {
        const r = await c.callTool({ name: 'execute_code', arguments: { code: 'return 1 + 1' } });
        if (r.isError || (r.structuredContent as { result?: unknown }).result !== 2) kind = 'wrong_result';
      } else if (op === 4) {
        const r = await c.callTool({ name: 'execute_code', arguments: { code: 'return Array.from({ length: 2000 }, (_, i) => ({ i, even: i % 2 === 0 })).filter((r) => r.even).length' } });
        if ((r.structuredContent as { result?: unknown }).result !== 1000) kind = 'wrong_result';
      } else if (op === 5) {
        const r = await c.callTool({ name: 'list_workspace_files', arguments: {} });
        if (r.isError) kind = 'tool_error';
      } else {
        const n = ++version;
        const content = `${name}:v${n}:${'d'.repeat(4096)}`;
        const w = await c.callTool({ name: 'write_workspace_file', arguments: { filename: 'versioned.txt', content } });
        if (w.isError) kind = 'write_refused';
        else {
          acked.set(name, n);
          const r = await c.callTool({ name: 'read_workspace_file', arguments: { filename: 'versioned.txt' } });
          if ((r.structuredContent as { content?: string }).content !== content) kind = 'lost_write';
        }
      }
    } catch (error) {
      kind = failureKind(error);
    }
    s.latencies.push(performance.now() - t);
    s.calls++;
    if (kind) s.failures[kind] = (s.failures[kind] ?? 0) + 1;
  }
}

async function healthLoop(base: string, stats: () => PhaseStats, until: () => boolean): Promise<void> {
  while (!until()) {
    const t = performance.now();
    const r = await fetch(`${base}/healthz`).catch(() => undefined);
    await r?.arrayBuffer();
    stats().healthz.push(performance.now() - t);
    await sleep(100);
  }
}

/** The attacker: every fault at once, each in its own loop. */
function faults(url: string, port: number, until: () => boolean): Promise<unknown>[] {
  const loops: Promise<unknown>[] = [];
  // Issue 24: coordinator CPU and shared budgets (bench/load-test-attackers.ts); first, so their
  // sessions open before the session churn takes the attacker's remaining ones.
  const attacker = (): Promise<Client> => client(url, 'attacker');
  loops.push(largeFlowCall(attacker, until), piiToolFlood(attacker, until), sseBufferFiller(attacker, until), connectionHolder(port, tokenOf('attacker'), until));
  // Issue 33: shared components that contain what a guest makes them do (load-test-contain.ts).
  const count = { calls: 0, refused: 0 };
  loops.push(
    attacker().then((c) => stripperTraps(c, until, count)),
    attacker().then((c) => vaultBytes(c, until, count)),
    attacker().then(async (c) => {
      await saveLargeSkills(c, 48);
      await skillsListFlood(url, tokenOf('attacker'), until, count);
    }),
    attacker().then((c) => pythonFinalizers(c, until, count)),
  );
  const guarded = async (fn: () => Promise<void>): Promise<void> => {
    while (!until()) await fn().catch(() => sleep(100));
  };
  loops.push(
    (async () => {
      const c = await client(url, 'attacker');
      const letters = Array.from({ length: 256 * 1024 }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26))).join('');
      await c.callTool({ name: 'write_workspace_file', arguments: { filename: 'nospace.txt', content: letters } });
      await guarded(async () => {
        await c.callTool({ name: 'execute_code', arguments: { code: "const s = read_file('nospace.txt'); return s + s + s + s", timeout_seconds: 60 } }, undefined, { timeout: 120_000 });
      });
    })(),
    (async () => {
      const c = await client(url, 'attacker');
      await guarded(async () => {
        await c.callTool({ name: 'execute_code', arguments: { code: 'for (;;) {}', timeout_seconds: 2 } });
        await c.callTool({ name: 'execute_code', arguments: { code: 'const a = []; for (;;) a.push(new Array(1e6).fill(1))', timeout_seconds: 10 } });
      });
    })(),
    (async () => {
      const c = await client(url, 'attacker');
      let i = 0;
      await guarded(async () => {
        const r = await c.callTool({ name: 'write_workspace_file', arguments: { filename: `fill/${i++ % 64}.bin`, content: 'z'.repeat(4 * 1024 * 1024) } });
        if (r.isError) await sleep(200);
      });
    })(),
    guarded(async () => {
      // Session churn: initialize and never close (the per-agent limit refuses the rest).
      await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${tokenOf('attacker')}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'churn', version: '1' } } }),
      }).then((r) => r.arrayBuffer());
      await sleep(50);
    }),
    (async () => {
      // Slow-body flood: 64 connections that send a header and one byte of body, reopened when closed.
      const open = new Set<Socket>();
      while (!until()) {
        while (open.size < 64 && !until()) {
          const s = connect(port, '127.0.0.1');
          s.on('error', () => undefined);
          s.once('close', () => open.delete(s));
          s.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`);
          open.add(s);
        }
        await sleep(250);
      }
      for (const s of open) s.destroy();
    })(),
  );
  loops.push(skillSaveFlood(() => client(url, 'attacker'), until));
  return loops;
}

async function stallProbe(durationS: number): Promise<void> {
  const home = mkdtempSync(path.join(tmpdir(), 'cem-stall-'));
  const daemon = await startDaemon(home, ['victim', 'attacker']);
  const stats: PhaseStats = { phase: 'stall probe', calls: 0, failures: {}, latencies: [], healthz: [] };
  let attacks = 0;
  try {
    const victim = await client(daemon.url, 'victim');
    const attacker = await client(daemon.url, 'attacker');
    const letters = Array.from({ length: 256 * 1024 }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26))).join('');
    await attacker.callTool({ name: 'write_workspace_file', arguments: { filename: 'nospace.txt', content: letters } });
    const deadline = performance.now() + durationS * 1000;
    const until = (): boolean => performance.now() >= deadline;
    const attack = (async () => {
      while (!until()) {
        await attacker.callTool({ name: 'execute_code', arguments: { code: "const s = read_file('nospace.txt'); return s + s + s + s", timeout_seconds: 60 } }, undefined, { timeout: 120_000 });
        attacks++;
      }
    })();
    const bystander = (async () => {
      while (!until()) {
        let t = performance.now();
        await (await fetch(`${daemon.base}/healthz`)).arrayBuffer();
        stats.healthz.push(performance.now() - t);
        t = performance.now();
        await victim.callTool({ name: 'execute_code', arguments: { code: 'return 1 + 1' } });
        stats.latencies.push(performance.now() - t);
        await sleep(20);
      }
    })();
    await Promise.all([attack, bystander]);
    await Promise.allSettled([victim.close(), attacker.close()]);
  } finally {
    await daemon.stop();
    rmSync(home, { recursive: true, force: true });
  }
  const row = {
    attacks,
    bystander_calls: stats.latencies.length,
    call_p50_ms: round(percentile(stats.latencies, 50)),
    call_p99_ms: round(percentile(stats.latencies, 99)),
    healthz_p50_ms: round(percentile(stats.healthz, 50)),
    healthz_p99_ms: round(percentile(stats.healthz, 99)),
  };
  process.stdout.write(
    `\n| stall probe (${durationS} s) | attacks | bystander calls | call p50 / p99 ms | /healthz p50 / p99 ms | target |\n|---|---|---|---|---|---|\n` +
      `| 256 KiB no-whitespace read + 1 MB result | ${row.attacks} | ${row.bystander_calls} | ${row.call_p50_ms} / ${row.call_p99_ms} | ${row.healthz_p50_ms} / ${row.healthz_p99_ms} | p99 < 250 ms: ${row.call_p99_ms < 250 && row.healthz_p99_ms < 250 ? 'MET' : 'MISSED'} |\n`,
  );
  const resultsDir = path.join(REPO, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(path.join(resultsDir, 'stall-probe.json'), `${JSON.stringify({ date: new Date().toISOString(), node: process.version, duration_s: durationS, ...row }, null, 2)}\n`);
}

async function main(): Promise<void> {
  if (process.argv.includes('--stall-probe')) return stallProbe(arg('duration', 20));
  const durationS = arg('duration', 60);
  const agentCount = arg('agents', 16);
  const home = mkdtempSync(path.join(tmpdir(), 'cem-load-'));
  const names = Array.from({ length: agentCount }, (_, i) => `agent${i}`);
  const daemon = await startDaemon(home, [...names, 'attacker']);
  const phases: PhaseStats[] = [];
  const rss: { t_s: number; rss_mb: number; phase: string }[] = [];
  const acked = new Map<string, number>();
  const started = performance.now();
  let current: PhaseStats = { phase: 'warmup', calls: 0, failures: {}, latencies: [], healthz: [] };
  const sampler = setInterval(() => rss.push({ t_s: round((performance.now() - started) / 1000, 1), rss_mb: rssMb(daemon.pid), phase: current.phase }), 1000);
  try {
    const clients = await Promise.all(names.map((n) => client(daemon.url, n)));
    for (const phase of ['no faults', 'with faults']) {
      current = { phase, calls: 0, failures: {}, latencies: [], healthz: [] };
      phases.push(current);
      const deadline = performance.now() + (durationS * 1000) / 2;
      const until = (): boolean => performance.now() >= deadline;
      process.stderr.write(`phase "${phase}" for ${durationS / 2} s\n`);
      const stats = (): PhaseStats => current;
      const attack = phase === 'with faults' ? faults(daemon.url, daemon.port, until) : [];
      await Promise.all([...clients.map((c, i) => agentLoop(c, names[i]!, stats, until, acked)), healthLoop(daemon.base, stats, until)]);
      await Promise.race([Promise.allSettled(attack), sleep(15_000)]);
    }
    await Promise.allSettled(clients.map((c) => c.close()));
  } finally {
    clearInterval(sampler);
    await daemon.stop();
  }
  // Lost writes: the version on disk must be at least the last one acknowledged.
  let lost = 0;
  for (const [name, version] of acked) {
    const text = (() => {
      try {
        return readFileSync(path.join(home, 'workspace', name, 'versioned.txt'), 'utf8');
      } catch {
        return '';
      }
    })();
    const onDisk = Number(/^[^:]+:v(\d+):/.exec(text)?.[1] ?? -1);
    if (onDisk < version) lost++;
  }
  for (const p of phases) lost += p.failures['lost_write'] ?? 0;
  rmSync(home, { recursive: true, force: true });

  const rows = phases.map((p) => ({
    phase: p.phase,
    calls: p.calls,
    failures: p.failures,
    p50_ms: round(percentile(p.latencies, 50)),
    p99_ms: round(percentile(p.latencies, 99)),
    healthz_p99_ms: round(percentile(p.healthz, 99)),
    rss_max_mb: Math.max(0, ...rss.filter((r) => r.phase === p.phase).map((r) => r.rss_mb)),
  }));
  const out = process.stdout;
  out.write('\n| phase | calls | failures by kind | p50 ms | p99 ms | /healthz p99 ms | coordinator RSS max MB |\n|---|---|---|---|---|---|---|\n');
  for (const r of rows) {
    const failures = Object.entries(r.failures).map(([k, v]) => `${k} ${v}`).join(', ') || 'none';
    out.write(`| ${r.phase} | ${r.calls} | ${failures} | ${r.p50_ms} | ${r.p99_ms} | ${r.healthz_p99_ms} | ${r.rss_max_mb} |\n`);
  }
  out.write(`\nlost writes: ${lost} (must be 0); agents: ${agentCount}; duration: ${durationS} s\n`);
  const resultsDir = path.join(REPO, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(path.join(resultsDir, 'load-test.svg'), loadTestChart(rss, rows, lost));
  out.write('wrote bench/results/load-test.json and bench/results/load-test.svg\n');
  writeFileSync(path.join(resultsDir, 'load-test.json'), `${JSON.stringify({ date: new Date().toISOString(), node: process.version, agents: agentCount, duration_s: durationS, lost_writes: lost, phases: rows, rss }, null, 2)}\n`);
  process.exitCode = lost === 0 ? 0 : 1;
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
