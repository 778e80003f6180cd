// The operator's view: /metrics with per-language, upstream, memory and build metrics, and the
// `status` command reading a running daemon (text and --json), with and without the operator's
// token, and against no daemon at all.

import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { parsePrometheus, valueOf } from '../../src/cli/prometheus-text.js';
import type { StatusSummary } from '../../src/cli/status-format.js';
import type { PythonReadiness } from '../../src/executor/background-snapshot.js';
import { CallRecorder } from '../../src/mcp/call-recorder.js';
import { renderMetrics } from '../../src/mcp/http/prometheus.js';
import type { UpstreamManager, UpstreamServerStatus } from '../../src/upstream/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { startHttpHarness } from '../fixtures/mcp/http-harness.js';
import type { HttpHarness } from '../fixtures/mcp/http-harness.js';

const TOKEN = 'status-operator-token-0123456789';

let h: HttpHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function runCli(argv: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await main({ argv, env, cwd: process.cwd(), stdin: new PassThrough(), stdout, stderr });
  return { code, stdout: out, stderr: err };
}

const UPSTREAM: Record<string, UpstreamServerStatus> = {
  github: { state: 'ready', tools: 12, restarts: 0, calls: 4, failures: 1, call_ms_total: 800, transport: 'stdio' },
  slack: { state: 'failed', tools: 0, restarts: 3, calls: 0, failures: 0, error: 'spawn slack-mcp ENOENT', transport: 'stdio' },
};

async function daemonWithFigures(): Promise<HttpHarness> {
  const harness = await startHttpHarness({ configure: (c) => (c.authToken = TOKEN) });
  // An upstream manager as the daemon sees it: only status() is read by /healthz and /metrics.
  harness.services.upstream = { status: () => UPSTREAM } as unknown as UpstreamManager;
  const client = await harness.connect(TOKEN);
  await client.callTool({ name: 'execute_code', arguments: { code: 'return 1', language: 'javascript' } });
  await client.callTool({ name: 'execute_code', arguments: { code: 'throw new Error("boom")', language: 'javascript' } });
  return harness;
}

describe('/metrics: the operator view', () => {
  it('has execute_code by language, upstream state, calls, errors and latency, memory and the build', async () => {
    h = await daemonWithFigures();
    const res = await fetch(`${h.base}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    const m = parsePrometheus(await res.text());
    expect(valueOf(m, 'code_exec_language_calls_total', { language: 'javascript' })).toBe(2);
    expect(valueOf(m, 'code_exec_language_failures_total', { language: 'javascript' })).toBe(1);
    expect(valueOf(m, 'code_exec_language_processes', { language: 'javascript', state: 'ready' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(m, 'code_exec_upstream_up', { server: 'github' })).toBe(1);
    expect(valueOf(m, 'code_exec_upstream_up', { server: 'slack' })).toBe(0);
    expect(valueOf(m, 'code_exec_upstream_calls_total', { server: 'github' })).toBe(4);
    expect(valueOf(m, 'code_exec_upstream_errors_total', { server: 'github' })).toBe(1);
    expect(valueOf(m, 'code_exec_upstream_call_duration_seconds_sum', { server: 'github' })).toBe(0.8);
    expect(valueOf(m, 'code_exec_coordinator_memory_bytes', { type: 'rss' })).toBeGreaterThan(10 * 1024 * 1024);
    expect(valueOf(m, 'code_exec_coordinator_memory_bytes', { type: 'heap_used' })).toBeGreaterThan(0);
    expect(valueOf(m, 'code_exec_build_info', { version: '0.0.0-test', node: process.version })).toBe(1);
  });

  it('reports each sandbox process RSS by language, and skips processes whose memory cannot be read', () => {
    const recorder = new CallRecorder(silentLogger());
    const pool = { processes: 2, threads: 2, busy: 0, queued: 0, completed: 0, failed: 0, timeouts: 0, memory_kills: 0, cancelled: 0, process_restarts: 0, direct_calls: 0, latency: { count: 0, p50_ms: 0, p95_ms: 0, p99_ms: 0, mean_ms: 0 }, by_outcome: {} };
    const text = renderMetrics({
      recorder,
      pool,
      sessionsOpen: 0,
      sessionsCreated: 0,
      refused: new Map(),
      uptimeSeconds: 1,
      processes: [{ kind: 'js', pid: 11 }, { kind: 'python', pid: 12 }, { kind: 'js', pid: undefined }, { kind: 'js', pid: 13 }],
      processRss: (pid) => (pid === 13 ? undefined : pid * 1_000_000),
    });
    const m = parsePrometheus(text);
    expect(m.get('code_exec_sandbox_process_rss_bytes')).toEqual([
      { labels: { language: 'javascript', pid: '11' }, value: 11_000_000 },
      { labels: { language: 'python', pid: '12' }, value: 12_000_000 },
    ]);
  });
});

describe('code-execution-mcp status', () => {
  it('prints health, pools, memory, agents and upstream servers readably', async () => {
    h = await daemonWithFigures();
    const r = await runCli(['status', '--url', h.url, '--token', TOKEN]);
    expect(r.stderr).toBe('');
    // slack is failed: the daemon is degraded, and status says so in its exit code too
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`^code-execution-mcp 0\\.0\\.0-test \\(Node ${process.version.replace(/\./g, '\\.')}\\) at ${h.base.replace(/\./g, '\\.')}: DEGRADED, up \\d+s\\n`));
    expect(r.stdout).toContain('upstream server "slack" is failed: spawn slack-mcp ENOENT');
    expect(r.stdout).toMatch(/ {2}javascript +\d+\/\d+ processes ready; 2 calls, 1 failed/);
    expect(r.stdout).toMatch(/memory: coordinator [\d.]+ MB RSS \(heap [\d.]+ MB\)/);
    expect(r.stdout).toMatch(/\nagents:\n {2}default +2 calls \(1 ok, 1 error\)\n/);
    expect(r.stdout).toMatch(/ {2}github +ready; 12 tools, 4 calls, 1 errors, mean 200 ms/);
    expect(r.stdout).toMatch(/ {2}slack +failed; 0 tools, 0 calls, 0 errors/);
  });

  it('--json prints one object with the same figures', async () => {
    h = await daemonWithFigures();
    const r = await runCli(['status', '--json'], { CODE_EXEC_PORT: new URL(h.base).port, CODE_EXEC_TOKEN: TOKEN });
    const s = JSON.parse(r.stdout) as StatusSummary;
    expect(s).toMatchObject({ url: h.base, status: 'degraded', version: '0.0.0-test', node: process.version, sessions: 1 });
    expect(s.languages.find((l) => l.language === 'javascript')).toMatchObject({ calls: 2, failures: 1 });
    expect(s.upstreams).toEqual([
      { server: 'github', state: 'ready', tools: 12, calls: 4, errors: 1, mean_ms: 200 },
      { server: 'slack', state: 'failed', tools: 0, calls: 0, errors: 0 },
    ]);
    expect(s.agents?.reduce((n, a) => n + a.calls, 0)).toBe(2);
    expect(s.memory?.coordinator_rss_mb).toBeGreaterThan(10);
    expect(s.metrics_note).toBeUndefined();
  });

  it('without the operator token shows only the status, and says what is missing and why', async () => {
    h = await daemonWithFigures();
    const r = await runCli(['status', '--url', h.base, '--json']);
    const s = JSON.parse(r.stdout) as StatusSummary;
    expect(s).toEqual({ url: h.base, status: 'degraded', languages: [], upstreams: [], problems: [], metrics_note: "figures, problems, agents and upstream servers need the operator's token: pass --token or set CODE_EXEC_TOKEN" });
    expect(r.code).toBe(1);
  });

  it('says whether Python is ready and, while its snapshot is made, when it will be; /healthz names it as warming', async () => {
    h = await startHttpHarness();
    let readiness: PythonReadiness = { state: 'warming', ready: false, eta_s: 7 };
    h.services.pythonReadiness = () => readiness;
    const health = (await (await fetch(`${h.base}/healthz`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ status: 'ok', warming: ['python'], python: { state: 'warming', ready: false, eta_s: 7 } });
    const warming = await runCli(['status', '--url', h.base]);
    expect(warming.code).toBe(0);
    expect(warming.stdout).toContain('  still warming: python\n');
    expect(warming.stdout).toContain('  python: warming: its interpreter snapshot is being made, then an interpreter started from it; ready in about 7 s (a Python call made now waits for it)\n');
    readiness = { state: 'ready', ready: true };
    const ready = await runCli(['status', '--url', h.base, '--json']);
    expect((JSON.parse(ready.stdout) as StatusSummary).python).toEqual({ state: 'ready', ready: true });
    expect(JSON.parse(ready.stdout)).not.toHaveProperty('warming');
  });

  it('exits 0 for a healthy daemon', async () => {
    h = await startHttpHarness();
    const r = await runCli(['status', '--url', `${h.base}/`]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(': OK, up ');
    expect(r.stdout).toContain('upstream servers: none configured');
  });

  it('says how to fix it when no daemon answers, and exits 1', async () => {
    h = await startHttpHarness();
    const port = new URL(h.base).port;
    await h.close();
    h = undefined;
    const r = await runCli(['status', '--url', `http://127.0.0.1:${port}`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`code-execution-mcp status: cannot reach a daemon at http://127.0.0.1:${port} (ECONNREFUSED): is it running? Start one with "code-execution-mcp serve", or point --url at it\n`);
  });

  it('bad usage exits 2 naming the flag; --help documents the flags', async () => {
    const bad = await runCli(['status', '--bogus']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("code-execution-mcp status: Unknown option '--bogus'");
    const url = await runCli(['status', '--url', 'ftp://x']);
    expect(url.code).toBe(2);
    expect(url.stderr).toContain('--url must be the daemon\'s address');
    const help = await runCli(['status', '--help']);
    expect(help.code).toBe(0);
    for (const flag of ['--url URL', '--token TOKEN', '--json']) expect(help.stdout).toContain(flag);
    const mainHelp = await runCli(['--help']);
    expect(mainHelp.stdout).toContain('code-execution-mcp status [--url URL] [--token TOKEN] [--json]');
  });
});
