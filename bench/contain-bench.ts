// `contain`: 16 agents on one real daemon, first alone, then while one attacker runs the issue-33
// attackers (load-test-contain.ts: stripper traps with and without `language`, vault bytes, a
// stateless skills/list flood over 48 skills of 900 KB, Python finalizers after the answer).
// Bystanders pace themselves (a trivial call every 200 ms; one of them in Python), /healthz is
// fetched every 100 ms, and the daemon's and every process under it are sampled every 500 ms.
// Targets (issue 33): bystander p99 <= 250 ms, /healthz p99 <= 250 ms, no bystander failure,
// daemon and every sandbox process under the RSS bounds docs/shared-budgets.md states.
//
//   npm run build && node dist/bench/run.js contain    (CONTAIN_SECONDS=60: 30 s per phase;
//   CONTAIN_ATTACKERS=stripper,vault,skills,python: only those attackers)

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { BenchRow, BenchSection } from './bench-types.js';
import { CONTAIN_LIMITS, processTreeRss, pythonFinalizers, saveLargeSkills, skillsListFloodProcess, stripperTraps, vaultBytes } from './load-test-contain.js';
import type { AttackCount } from './load-test-contain.js';
import { percentile, round } from './stats.js';

/** The bounds docs/shared-budgets.md states for this load, MiB. */
export const DAEMON_RSS_BOUND_MB = 1024;
export const SANDBOX_RSS_BOUND_MB = 1024;
const TARGET_MS = 250;
const AGENTS = 16;

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const tokenOf = (name: string): string => `${name}-token-${'0123456789abcdef'.repeat(2)}`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function start(home: string, names: string[]): Promise<{ pid: number; url: string; base: string; stop(): Promise<void> }> {
  const config = path.join(home, 'config.json');
  const permissions = { workspace: 'read-write', skills: 'read-write', tools: ['*'], net: [] };
  writeFileSync(config, JSON.stringify({ agents: names.map((name) => ({ name, token: tokenOf(name), permissions })), sandbox: { processes: 2, pythonProcesses: 1 }, limits: CONTAIN_LIMITS }));
  const env = { PATH: process.env['PATH'] ?? '', HOME: home, CODE_EXEC_WORKSPACE_DIR: path.join(home, 'workspace'), CODE_EXEC_SKILLS_DIR: path.join(home, 'skills'), CODE_EXEC_SEMANTIC_SEARCH: 'false' };
  const proc = spawn(process.execPath, [path.join(REPO, 'bin', 'code-execution-mcp.js'), 'serve', '--port', '0', '--config', config, '--log-level', 'info'], { cwd: REPO, env, stdio: ['ignore', 'ignore', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: proc.stderr }).on('line', (text) => {
      try {
        const entry = JSON.parse(text) as Record<string, unknown>;
        if (entry['msg'] === 'listening') resolve(String(entry['url']));
      } catch {
        // not a log line
      }
    });
    proc.once('exit', (code) => reject(new Error(`daemon exited with ${code}`)));
  });
  return { pid: proc.pid as number, url, base: url.replace(/\/mcp$/, ''), stop: () => new Promise((resolve) => (proc.once('exit', () => resolve()), proc.kill('SIGTERM'))) };
}

async function connect(url: string, agent: string): Promise<Client> {
  const c = new Client({ name: `contain-${agent}`, version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${tokenOf(agent)}` } } }));
  return c;
}

interface Phase {
  js: number[];
  python: number[];
  healthz: number[];
  failures: string[];
  daemonMb: number;
  sandboxMb: number;
}

/** One paced bystander: a trivial call every 200 ms, in its language; any wrong answer is a failure. */
async function bystander(c: Client, python: boolean, phase: () => Phase, until: () => boolean): Promise<void> {
  while (!until()) {
    const t = performance.now();
    const p = phase();
    try {
      const r = await c.callTool({ name: 'execute_code', arguments: python ? { code: 'result = 1 + 1', language: 'python' } : { code: 'return 1 + 1' } }, undefined, { timeout: 120_000 });
      if ((r.structuredContent as { result?: unknown } | undefined)?.result !== 2) p.failures.push(JSON.stringify(r.structuredContent ?? r).slice(0, 160));
    } catch (error) {
      p.failures.push(error instanceof Error ? error.message : String(error));
    }
    (python ? p.python : p.js).push(performance.now() - t);
    await sleep(200);
  }
}

export const containBench: BenchSection = {
  group: 'contain',
  async run(progress) {
    const seconds = Number(process.env['CONTAIN_SECONDS'] ?? 60);
    const home = mkdtempSync(path.join(tmpdir(), 'cem-contain-'));
    const names = Array.from({ length: AGENTS }, (_, i) => `agent${i}`);
    const daemon = await start(home, [...names, 'attacker']);
    const phases: Record<string, Phase> = {};
    let current: Phase = { js: [], python: [], healthz: [], failures: [], daemonMb: 0, sandboxMb: 0 };
    const sampler = setInterval(() => {
      const { daemon: mb, children } = processTreeRss(daemon.pid);
      current.daemonMb = Math.max(current.daemonMb, mb);
      current.sandboxMb = Math.max(current.sandboxMb, ...children.values());
    }, 500);
    const counts: Record<string, AttackCount> = {};
    try {
      const clients = await Promise.all(names.map((n) => connect(daemon.url, n)));
      const attacker = await connect(daemon.url, 'attacker');
      progress('contain: saving 48 skills of 900 KB for the skills/list flood, warming Python');
      await saveLargeSkills(attacker, 48);
      await clients[AGENTS - 1]?.callTool({ name: 'execute_code', arguments: { code: 'result = 1 + 1', language: 'python' } }, undefined, { timeout: 300_000 });
      for (const name of ['alone', 'with attackers']) {
        current = { js: [], python: [], healthz: [], failures: [], daemonMb: 0, sandboxMb: 0 };
        phases[name] = current;
        const deadline = performance.now() + (seconds * 1000) / 2;
        const until = (): boolean => performance.now() >= deadline;
        progress(`contain: ${AGENTS} agents ${name} for ${seconds / 2} s (load ${loadavg()[0]?.toFixed(1)})`);
        const attacks: Promise<void>[] = [];
        if (name === 'with attackers') {
          for (const kind of ['stripper traps', 'vault bytes', 'skills/list flood', 'python finalizers']) counts[kind] = { calls: 0, refused: 0 };
          const [traps, vault, finalizers] = await Promise.all([connect(daemon.url, 'attacker'), connect(daemon.url, 'attacker'), connect(daemon.url, 'attacker')]);
          const only = process.env['CONTAIN_ATTACKERS']?.split(',');
          const run = (kind: string, attack: (count: AttackCount) => Promise<void>): void => {
            if (only === undefined || only.some((o) => kind.startsWith(o))) attacks.push(attack(counts[kind] as AttackCount));
          };
          run('stripper traps', (c) => stripperTraps(traps, until, c));
          run('vault bytes', (c) => vaultBytes(vault, until, c));
          run('skills/list flood', (c) => skillsListFloodProcess(daemon.url, tokenOf('attacker'), seconds / 2, c));
          run('python finalizers', (c) => pythonFinalizers(finalizers, until, c));
        }
        const phase = current;
        const health = (async () => {
          while (!until()) {
            const t = performance.now();
            const r = await fetch(`${daemon.base}/healthz`).catch((e: unknown) => e as Error);
            if (r instanceof Error || r.status !== 200) phase.failures.push(`healthz ${r instanceof Error ? r.message : r.status}`);
            else await r.arrayBuffer();
            phase.healthz.push(performance.now() - t);
            await sleep(100);
          }
        })();
        await Promise.all([...clients.map((c, i) => bystander(c, i === AGENTS - 1, () => phase, until)), health]);
        await Promise.race([Promise.allSettled(attacks), sleep(60_000)]);
      }
    } finally {
      clearInterval(sampler);
      await daemon.stop();
      rmSync(home, { recursive: true, force: true });
    }
    const load = round(loadavg()[0] ?? 0, 1);
    const rows: BenchRow[] = [];
    for (const [name, p] of Object.entries(phases)) {
      const attacked = name === 'with attackers';
      const target = <T extends BenchRow>(row: T, text: string, met: boolean): T => (attacked ? { ...row, target: text, met } : row);
      const js99 = round(percentile(p.js, 99));
      const py99 = round(percentile(p.python, 99));
      const h99 = round(percentile(p.healthz, 99));
      rows.push(target({ group: 'contain', name: `bystander JS trivial call p99, ${name}`, value: js99, unit: 'ms', extra: { calls: p.js.length, p50: round(percentile(p.js, 50)), load_avg: load } }, `<= ${TARGET_MS} ms`, js99 <= TARGET_MS));
      rows.push(target({ group: 'contain', name: `bystander Python trivial call p99, ${name}`, value: py99, unit: 'ms', extra: { calls: p.python.length, p50: round(percentile(p.python, 50)) } }, `<= ${TARGET_MS} ms`, py99 <= TARGET_MS));
      rows.push(target({ group: 'contain', name: `/healthz p99, ${name}`, value: h99, unit: 'ms', extra: { requests: p.healthz.length } }, `<= ${TARGET_MS} ms`, h99 <= TARGET_MS));
      rows.push(target({ group: 'contain', name: `bystander failures, ${name}`, value: p.failures.length, unit: 'failures' }, '0', p.failures.length === 0));
      rows.push(target({ group: 'contain', name: `daemon RSS max, ${name}`, value: round(p.daemonMb, 0), unit: 'MB' }, `<= ${DAEMON_RSS_BOUND_MB} MB`, p.daemonMb <= DAEMON_RSS_BOUND_MB));
      rows.push(target({ group: 'contain', name: `largest sandbox process RSS max, ${name}`, value: round(p.sandboxMb, 0), unit: 'MB' }, `<= ${SANDBOX_RSS_BOUND_MB} MB`, p.sandboxMb <= SANDBOX_RSS_BOUND_MB));
      if (p.failures.length > 0) progress(`contain: ${name}: first failures: ${p.failures.slice(0, 3).join(' | ')}`);
    }
    for (const [kind, c] of Object.entries(counts)) rows.push({ group: 'contain', name: `attacker: ${kind}, calls (refused or failed)`, value: c.calls, unit: 'calls', extra: { refused: c.refused } });
    return rows;
  },
};
