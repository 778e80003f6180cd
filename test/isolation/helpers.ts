// Shared pieces of the multi-agent adversarial suite: the real daemon (`serve --port 0`) started
// with an agents config, SDK clients per agent token, and small wrappers that run code or tools.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { expect } from 'vitest';
import { scratch, startDaemon } from '../fixtures/mcp/cli.js';
import type { Daemon, Scratch } from '../fixtures/mcp/cli.js';

/** Pyodide loads in seconds on an idle machine and far slower on a busy one: hooks get this long. */
export const PYTHON_START_MS = 180_000;

export type Language = 'javascript' | 'python';

export interface AgentSpec {
  name: string;
  token: string;
  workspace?: string;
  permissions?: Record<string, unknown>;
}

/** An agent with full powers unless told otherwise; tokens are 16+ characters as the config asks. */
export function agent(name: string, permissions: Record<string, unknown> = {}, workspace?: string): AgentSpec {
  return {
    name,
    token: `isolation-${name}-token-0123456789abcdef`,
    permissions: { workspace: 'read-write', skills: 'read-write', tools: ['*'], ...permissions },
    ...(workspace === undefined ? {} : { workspace }),
  };
}

export const OPERATOR_TOKEN = 'isolation-operator-token-0123456789abcdef';

export interface IsolationDaemon {
  daemon: Daemon;
  home: Scratch;
  /** An SDK client holding the named agent's token (the operator's with 'operator'). */
  client(name: string): Promise<Client>;
  stop(): Promise<void>;
}

export interface DaemonOptions {
  agents: AgentSpec[];
  /** JavaScript sandbox processes; 1 puts every call on the same worker. */
  processes?: number;
  pythonProcesses?: number;
  /** Extra keys of the config file (mcpServers, limits...). */
  config?: Record<string, unknown>;
  /** Extra environment (CODE_EXEC_* options: unknown ones are ignored, so a test can run on older code). */
  env?: Record<string, string>;
}

/** Starts the daemon with these agents (and an operator `authToken`); every agent shares the pool. */
export async function startIsolationDaemon(options: DaemonOptions): Promise<IsolationDaemon> {
  const home = scratch();
  const file = home.writeConfig({
    authToken: OPERATOR_TOKEN,
    agents: options.agents,
    sandbox: { processes: options.processes ?? 1, threadsPerProcess: 1, pythonProcesses: options.pythonProcesses ?? 0 },
    ...options.config,
  });
  const env = { ...home.env, ...options.env, CODE_EXEC_CONFIG: file };
  delete (env as Record<string, string | undefined>)['CODE_EXEC_SANDBOX_PROCESSES'];
  delete (env as Record<string, string | undefined>)['CODE_EXEC_PYTHON_PROCESSES'];
  const daemon = await startDaemon(env);
  const tokens = new Map(options.agents.map((a) => [a.name, a.token]));
  tokens.set('operator', OPERATOR_TOKEN);
  const clients = new Map<string, Client>();
  return {
    daemon,
    home,
    async client(name: string) {
      const known = clients.get(name);
      if (known) return known;
      const token = tokens.get(name);
      if (token === undefined) throw new Error(`no agent named ${name}`);
      const client = await daemon.connect(token);
      clients.set(name, client);
      return client;
    },
    async stop() {
      await daemon.stop();
      home.remove();
    },
  };
}

/** What execute_code answers, as the structured result. */
export interface RunResult {
  success: boolean;
  result?: unknown;
  output?: string[];
  error?: string;
  error_type?: string;
  traceback?: string;
}

/** Runs code as this agent; the call must be answered (a tool result, not a protocol error). */
export async function run(client: Client, code: string, language: Language = 'javascript', timeoutSeconds = 20): Promise<RunResult> {
  const answer = await client.callTool(
    { name: 'execute_code', arguments: { code, language, timeout_seconds: timeoutSeconds } },
    undefined,
    { timeout: (timeoutSeconds + 40) * 1000 },
  );
  const structured = answer.structuredContent as RunResult | undefined;
  if (structured === undefined) return { success: false, error: text(answer), error_type: 'ToolError' };
  return structured;
}

/** Runs code that must succeed, and returns its result. */
export async function value(client: Client, code: string, language: Language = 'javascript'): Promise<unknown> {
  const r = await run(client, code, language);
  expect(r.success, `${r.error_type}: ${r.error}\n${r.traceback ?? ''}`).toBe(true);
  return r.result;
}

export interface ToolAnswer {
  isError: boolean;
  structured: Record<string, unknown> | undefined;
  text: string;
}

/** Calls an MCP tool as this agent. */
export async function tool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
  const answer = await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
  return { isError: answer.isError === true, structured: answer.structuredContent as Record<string, unknown> | undefined, text: text(answer) };
}

function text(answer: Record<string, unknown>): string {
  const content = Array.isArray(answer['content']) ? (answer['content'] as { type?: string; text?: string }[]) : [];
  return content.map((c) => c.text ?? '').join('\n');
}

/** Everything the attacker can read back: its workspace files' contents, listed recursively. */
export async function loot(client: Client, language: Language = 'javascript'): Promise<string> {
  const code =
    language === 'python'
      ? 'out = []\ndef walk(p):\n    for f in list_files(p):\n        q = f if p == "." else p + "/" + f\n        try:\n            out.append(q + "=" + read_file(q))\n        except Exception:\n            walk(q)\nwalk(".")\nresult = "\\n".join(out)'
      : 'const out = []; const walk = (p) => { for (const f of list_files(p)) { const q = p === "." ? f : p + "/" + f; try { out.push(q + "=" + read_file(q)) } catch { walk(q) } } }; walk("."); return out.join("\\n")';
  const r = await run(client, code, language);
  return JSON.stringify(r);
}

/** Asserts the attacker's haul holds none of the secrets. */
export function expectNoSecret(haul: unknown, secrets: readonly string[]): void {
  const flat = typeof haul === 'string' ? haul : JSON.stringify(haul);
  for (const secret of secrets) {
    const at = flat.indexOf(secret);
    const excerpt = at < 0 ? '' : flat.slice(Math.max(0, at - 300), at + secret.length + 100);
    expect(at, `the attacker's loot holds ${secret}: ...${excerpt}...`).toBe(-1);
  }
}

/** Polls until check() is true, at most timeoutMs (upstream servers connect after the daemon listens). */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Waits until this agent's code sees tools.SERVER for every server named and each server is up:
 * a tool may be listed while its server (or the agent's instance of it) is still starting, and a
 * call then fails with "still starting; try again in a moment". The probe names a tool no server
 * has, so a server that is up refuses it without any upstream traffic.
 */
export async function waitForServers(client: Client, names: readonly string[]): Promise<void> {
  const code = `for (const n of ${JSON.stringify(names)}) {
  if (tools[n] === undefined) return false;
  try { await tools[n].__cem_readiness_probe__({}); } catch (e) { if (/still starting|cannot be called/.test(String(e && e.message))) return false; }
}
return true;`;
  await waitUntil(async () => (await run(client, code)).result === true, 60_000, `upstream servers ${names.join(', ')}`);
}
