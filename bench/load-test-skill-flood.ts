// The skill-save flood of the load test's fault phase: one agent saves skills of 200 KB under new
// names as fast as it can, from code (save_skill in a loop) and over MCP. Before each agent had a
// share of the skill store, this stored without limit and kept every skill's code in the
// coordinator's heap; now saves past limits.skillQuotaCount / limits.skillQuotaBytes are refused
// before their code is parsed. `skillSaveFlood` is the attacker loop (hooked into load-test.ts);
// run alone, this file measures the coordinator's RSS and a bystander's trivial-call p99 during it:
//
//   npm run build && node dist/bench/load-test-skill-flood.js [--duration 20]

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { percentile, round } from './stats.js';

/** What one flood did: saves acknowledged and refused (with the first refusal's message). */
export interface FloodReport {
  saved: number;
  refused: number;
  firstRefusal?: string;
}

const SKILL_BYTES = 200_000;

/** The attacker loop: saves until `until()`, alternating a batch from code and a save over MCP. */
export async function skillSaveFlood(connect: () => Promise<Client>, until: () => boolean, report: FloodReport = { saved: 0, refused: 0 }): Promise<FloodReport> {
  const c = await connect();
  const run = `${Date.now().toString(36)}`;
  const note = (ok: boolean, message?: string): void => {
    if (ok) report.saved++;
    else {
      report.refused++;
      report.firstRefusal ??= message;
    }
  };
  for (let i = 0; !until(); i++) {
    try {
      if (i % 2 === 0) {
        const code = `const out = []; for (let k = 0; k < 8; k++) { try { save_skill('flood_${run}_${i}_' + k, 'export const blob = ' + JSON.stringify('f'.repeat(${SKILL_BYTES})) + ';'); out.push(''); } catch (e) { out.push(e.message); } } return out;`;
        const r = await c.callTool({ name: 'execute_code', arguments: { code, timeout_seconds: 60 } }, undefined, { timeout: 120_000 });
        const outcomes = ((r.structuredContent as { result?: unknown } | undefined)?.result ?? []) as string[];
        for (const o of Array.isArray(outcomes) ? outcomes : []) note(o === '', o);
      } else {
        const code = `export const blob = ${JSON.stringify('m'.repeat(SKILL_BYTES))};\n`;
        const r = await c.callTool({ name: 'save_skill', arguments: { name: `flood_${run}_mcp_${i}`, code } }, undefined, { timeout: 120_000 });
        const text = ((r.content as { text?: string }[] | undefined) ?? []).map((p) => p.text ?? '').join(' ');
        note(r.isError !== true, text);
      }
    } catch (error) {
      note(false, error instanceof Error ? error.message : String(error));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  await c.close().catch(() => undefined);
  return report;
}

const tokenOf = (name: string): string => `${name}-token-${'0123456789abcdef'.repeat(2)}`;

async function connectAs(url: string, agent: string): Promise<Client> {
  const c = new Client({ name: `flood-${agent}`, version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${tokenOf(agent)}` } } }));
  return c;
}

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 1024) : 0;
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--duration');
  const durationS = i >= 0 ? Number(process.argv[i + 1]) : 20;
  const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  const home = mkdtempSync(path.join(tmpdir(), 'cem-skill-flood-'));
  const permissions = { workspace: 'read-write', skills: 'read-write', tools: ['*'], net: [] };
  const config = path.join(home, 'config.json');
  writeFileSync(config, JSON.stringify({ agents: ['victim', 'attacker'].map((name) => ({ name, token: tokenOf(name), permissions })) }));
  const env = { PATH: process.env['PATH'] ?? '', HOME: home, CODE_EXEC_WORKSPACE_DIR: path.join(home, 'workspace'), CODE_EXEC_SKILLS_DIR: path.join(home, 'skills'), CODE_EXEC_PYTHON_PROCESSES: '0', CODE_EXEC_SANDBOX_PROCESSES: '2' };
  const proc = spawn(process.execPath, [path.join(repo, 'bin', 'code-execution-mcp.js'), 'serve', '--port', '0', '--config', config, '--log-level', 'info'], { cwd: repo, env, stdio: ['ignore', 'ignore', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: proc.stderr! }).on('line', (text) => {
      try {
        const entry = JSON.parse(text) as Record<string, unknown>;
        if (entry['msg'] === 'listening') resolve(String(entry['url']));
      } catch {
        // not a log line
      }
    });
    proc.once('exit', (code) => reject(new Error(`daemon exited with ${code}`)));
  });
  try {
    const victim = await connectAs(url, 'victim');
    const deadline = performance.now() + durationS * 1000;
    const until = (): boolean => performance.now() >= deadline;
    const rss: number[] = [];
    const sampler = setInterval(() => rss.push(rssMb(proc.pid!)), 500);
    const latencies: number[] = [];
    const bystander = (async () => {
      while (!until()) {
        const t = performance.now();
        await victim.callTool({ name: 'execute_code', arguments: { code: 'return 1 + 1' } });
        latencies.push(performance.now() - t);
      }
    })();
    const [flood] = await Promise.all([skillSaveFlood(() => connectAs(url, 'attacker'), until), bystander]);
    clearInterval(sampler);
    await victim.close();
    const out = { duration_s: durationS, saved: flood.saved, refused: flood.refused, first_refusal: flood.firstRefusal?.slice(0, 200), coordinator_rss_max_mb: Math.max(...rss), coordinator_rss_end_mb: rss.at(-1), bystander_calls: latencies.length, bystander_p50_ms: round(percentile(latencies, 50)), bystander_p99_ms: round(percentile(latencies, 99)) };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  } finally {
    proc.kill('SIGTERM');
    await new Promise((resolve) => proc.once('exit', resolve));
    rmSync(home, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
