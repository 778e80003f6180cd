// MCP front benchmark: trivial execute_code calls through the real daemon over Streamable HTTP
// (1, 16 and 64 concurrent sessions) and through the real `stdio` command, against the same run's
// in-process figure (executor.execute directly), so the protocol's overhead reads as a ratio.
// Phases run one after the other: on a 2-core machine concurrent phases would measure each other.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadConfig } from '../src/config/load-config.js';
import { startCoordinator } from '../src/daemon.js';
import { localAgent } from '../src/mcp/agents.js';
import { silentLogger } from '../src/util/logger.js';
import type { BenchRow, BenchSection } from './bench-types.js';
import { closeLeanSession, cpuSeconds, leanCallTool, openLeanSession, withChildren } from './http-lean-client.js';
import { load, round, summary } from './stats.js';

const here = path.dirname(fileURLToPath(import.meta.url));
// dist/bench/ → repository root
const REPO = path.resolve(here, '..', '..');
const BIN = path.join(REPO, 'bin', 'code-execution-mcp.js');
const TRIVIAL = { code: 'return 1' };
const WARMUP_CALLS = 200;
const HTTP_TARGET_CALLS_PER_S = 1000;
const HTTP_TARGET_P99_MS = 50;
/** Issue 14's target for the lean client at 16 sessions. */
const LEAN_TARGET_CALLS_PER_S = 1500;

interface Phase {
  name: string;
  sessions: number;
  inFlight: number;
  calls: number;
}

export const mcpBench: BenchSection = {
  group: 'mcp',
  async run(progress) {
    const home = mkdtempSync(path.join(tmpdir(), 'cem-mcp-bench-'));
    const env: Record<string, string> = {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? home,
      CODE_EXEC_WORKSPACE_DIR: path.join(home, 'workspace'),
      CODE_EXEC_SKILLS_DIR: path.join(home, 'skills'),
      CODE_EXEC_PYTHON_PROCESSES: '0',
      CODE_EXEC_MAX_QUEUED_CALLS: '10000',
    };
    const rows: BenchRow[] = [];
    try {
      progress('in-process baseline (executor.execute)');
      const baseline = await inProcess(env, [1, 16, 64]);
      for (const [inFlight, figures] of baseline) {
        rows.push({ group: 'mcp', name: `execute_code in process (executor.execute), ${inFlight} in flight`, value: figures.perSecond, unit: 'calls/s', extra: figures.extra });
      }
      const ratio = (inFlight: number, value: number): BenchRow['baseline'] => {
        const base = baseline.get(inFlight);
        return base ? { name: `execute_code in process (executor.execute), ${inFlight} in flight`, ratio: round(value / base.perSecond, 3) } : undefined;
      };

      progress('starting the daemon (serve --port 0)');
      const daemon = await startDaemon(env, path.join(home, 'port'));
      try {
        const phases: Phase[] = [
          { name: 'execute_code over Streamable HTTP, 1 session', sessions: 1, inFlight: 1, calls: 1000 },
          { name: 'execute_code over Streamable HTTP, 16 sessions', sessions: 16, inFlight: 16, calls: 4000 },
          { name: 'execute_code over Streamable HTTP, 64 sessions', sessions: 64, inFlight: 64, calls: 4000 },
        ];
        for (const phase of phases) {
          progress(phase.name);
          const clients = await Promise.all(Array.from({ length: phase.sessions }, () => httpClient(daemon.url)));
          const figures = await measure(phase.calls, phase.inFlight, (i) => call(clients[i % clients.length]!));
          await Promise.all(clients.map((c) => c.close()));
          const met = phase.sessions === 16 ? figures.perSecond >= HTTP_TARGET_CALLS_PER_S && (figures.extra['p99_ms'] ?? Infinity) < HTTP_TARGET_P99_MS : undefined;
          rows.push({
            group: 'mcp',
            name: phase.name,
            value: figures.perSecond,
            unit: 'calls/s',
            extra: figures.extra,
            ...(phase.sessions === 16 ? { target: `>= ${HTTP_TARGET_CALLS_PER_S} calls/s, p99 < ${HTTP_TARGET_P99_MS} ms`, met } : {}),
            ...withBaseline(ratio(phase.inFlight, figures.perSecond)),
          });
        }
        progress('execute_code over Streamable HTTP, 16 sessions, lean client (raw HTTP keep-alive)');
        rows.push(...(await leanPhase(daemon.url, daemon.pid, 16, 4000)));
      } finally {
        await daemon.stop();
      }

      for (const inFlight of [1, 16]) {
        progress(`stdio, ${inFlight} in flight`);
        const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'stdio'], env: { ...env, CODE_EXEC_LOG_LEVEL: 'warn' }, cwd: REPO, stderr: 'ignore' });
        const client = new Client({ name: 'mcp-bench', version: '1.0.0' });
        await client.connect(transport);
        try {
          const figures = await measure(inFlight === 1 ? 1000 : 3000, inFlight, () => call(client));
          rows.push({ group: 'mcp', name: `execute_code over stdio, ${inFlight} in flight`, value: figures.perSecond, unit: 'calls/s', extra: figures.extra, ...withBaseline(ratio(inFlight, figures.perSecond)) });
        } finally {
          await client.close();
        }
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
    return rows;
  },
};

interface Figures {
  perSecond: number;
  extra: Record<string, number>;
}

async function measure(calls: number, inFlight: number, fn: (i: number) => Promise<unknown>): Promise<Figures> {
  await load(WARMUP_CALLS, inFlight, fn);
  const { latencies, perSecond } = await load(calls, inFlight, fn);
  return { perSecond: round(perSecond, 1), extra: summary(latencies) };
}

function withBaseline(baseline: BenchRow['baseline']): Pick<BenchRow, 'baseline'> {
  return baseline ? { baseline } : {};
}

async function inProcess(env: Record<string, string>, inFlights: number[]): Promise<Map<number, Figures>> {
  const { config } = loadConfig({ env, cwd: REPO, adjustDefaults: (c) => (c.logLevel = 'silent') });
  const coordinator = await startCoordinator(config, silentLogger(), { watch: false });
  const agent = localAgent(config);
  const identity = { agent: agent.name, sessionId: 'bench', workspaceNamespace: '', permissions: agent.permissions };
  const out = new Map<number, Figures>();
  try {
    for (const inFlight of inFlights) {
      out.set(
        inFlight,
        await measure(inFlight === 1 ? 1000 : 4000, inFlight, async () => {
          const result = await coordinator.executor.execute({ code: TRIVIAL.code, language: 'javascript', timeoutSeconds: 30, memoryMb: 500 }, identity);
          if (!result.success) throw new Error(`baseline call failed: ${result.error ?? '?'}`);
        }),
      );
    }
  } finally {
    await coordinator.close();
  }
  return out;
}

/**
 * Pre-initialized sessions driven by raw HTTP with keep-alive (no SDK client on the load side), and
 * the CPU the daemon (coordinator and sandbox processes) spent per call during the phase.
 */
async function leanPhase(url: string, pid: number, sessions: number, calls: number): Promise<BenchRow[]> {
  const open = await Promise.all(Array.from({ length: sessions }, () => openLeanSession(url)));
  try {
    const fn = (i: number) => leanCallTool(open[i % open.length]!, 'execute_code', TRIVIAL);
    await load(WARMUP_CALLS, sessions, fn);
    const pids = await withChildren(pid);
    const cpu = async (ids: number[]) => (await Promise.all(ids.map(cpuSeconds))).reduce((a, b) => a + b, 0);
    const [coordBefore, sandboxBefore] = [await cpu([pid]), await cpu(pids.slice(1))];
    const { latencies, perSecond } = await load(calls, sessions, fn);
    const [coordAfter, sandboxAfter] = [await cpu([pid]), await cpu(pids.slice(1))];
    const extra = summary(latencies);
    const p99 = extra['p99_ms'] ?? Infinity;
    return [
      {
        group: 'mcp',
        name: 'execute_code over Streamable HTTP, 16 sessions, lean client',
        value: round(perSecond, 1),
        unit: 'calls/s',
        extra,
        target: `>= ${LEAN_TARGET_CALLS_PER_S} calls/s, p99 <= ${HTTP_TARGET_P99_MS} ms`,
        met: perSecond >= LEAN_TARGET_CALLS_PER_S && p99 <= HTTP_TARGET_P99_MS,
      },
      { group: 'mcp', name: 'daemon CPU per HTTP call: coordinator (lean client, 16 sessions)', value: round(((coordAfter - coordBefore) * 1e6) / calls, 0), unit: 'µs' },
      { group: 'mcp', name: 'daemon CPU per HTTP call: sandbox processes (lean client, 16 sessions)', value: round(((sandboxAfter - sandboxBefore) * 1e6) / calls, 0), unit: 'µs' },
    ];
  } finally {
    for (const s of open) closeLeanSession(s);
  }
}

async function call(client: Client): Promise<void> {
  const result = await client.callTool({ name: 'execute_code', arguments: TRIVIAL });
  if (result.isError) throw new Error(`execute_code failed: ${JSON.stringify(result.content)}`);
}

async function httpClient(url: string): Promise<Client> {
  const client = new Client({ name: 'mcp-bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

async function startDaemon(env: Record<string, string>, portFile: string): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const proc: ChildProcess = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--port-file', portFile], { cwd: REPO, env, stdio: ['ignore', 'ignore', 'ignore'] });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setInterval(() => {
      try {
        const text = readFileSync(portFile, 'utf8').trim();
        if (text !== '') {
          clearInterval(timer);
          resolve(Number(text));
        }
      } catch {
        // not written yet
      }
    }, 50);
    void exited.then(() => {
      clearInterval(timer);
      reject(new Error('the daemon exited before listening'));
    });
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    pid: proc.pid ?? 0,
    async stop() {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}
