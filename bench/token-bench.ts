// `npm run bench -- tokens`: what a client really loads into the model's context, counted with the
// o200k tokenizer as a real MCP client receives it: this server's own tools/list per tool profile
// (measured, output schemas included, Python on as configured by default) and the server's
// instructions, and one discovery (a summary search plus one definition, the text blocks the model
// reads) over the real catalog of 333 tools harvested from 27 public MCP servers, against loading
// every one of those definitions up front.
//
// A discovery is measured in two states of those servers. "connected": configured and running,
// the state in which their live tools are in the catalog at all (the upstream manager's status is
// the only stand-in: 27 real servers are not started for a token count). "not configured": the
// same entries with nobody's server behind them, each result then saying why and how to fix it.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { Config, ToolProfile } from '../src/config/config-types.js';
import { defaultConfig } from '../src/config/index.js';
import { createMcpSession } from '../src/mcp/create-server.js';
import { startCoordinator } from '../src/daemon.js';
import type { UpstreamManager, UpstreamServerStatus } from '../src/upstream/index.js';
import { silentLogger } from '../src/util/logger.js';
import type { BenchRow, BenchSection } from './bench-types.js';
import { loadQueries, loadRealCatalog } from './search-eval.js';
import { round } from './stats.js';

const GROUP = 'tokens';
const TARGETS: Record<ToolProfile, number> = { seed: 2_000, minimal: 700 };
const DISCOVERY_TARGET = 450;
const PROGRESSIVE_SHARE_TARGET = 2;
type ServerState = 'connected' | 'not configured';

function textOf(result: unknown): string {
  return ((result as { content?: { text?: string }[] }).content ?? [])[0]?.text ?? '';
}

/** The upstream manager's answer when every harvested server is configured and ready. */
function allReady(servers: readonly string[]): UpstreamManager {
  const ready: UpstreamServerStatus = { state: 'ready', tools: 0, restarts: 0, calls: 0, failures: 0 } as UpstreamServerStatus;
  return { status: () => Object.fromEntries(servers.map((s) => [s, ready])) } as unknown as UpstreamManager;
}

async function session(profile: ToolProfile, state: ServerState, root: string): Promise<{ client: Client; close(): Promise<void> }> {
  const base = defaultConfig(root);
  const config: Config = {
    ...base,
    port: 0,
    logLevel: 'silent',
    skillsDir: path.join(root, `skills-${profile}`),
    workspaceDir: path.join(root, `workspace-${profile}`),
    // One Python process: tools/list names Python whenever it is on (the default is 2).
    sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 1 },
    server: { ...(base.server as NonNullable<Config['server']>), toolProfile: profile },
  };
  const coordinator = await startCoordinator(config, silentLogger(), { watch: false });
  const servers = loadRealCatalog();
  for (const s of servers) {
    coordinator.catalog.setDynamicTools(
      s.server,
      s.tools.map((t) => ({ name: t.name, description: t.description, mcp_server: s.server, functions: [], use_cases: [], input_schema: t.inputSchema, source: 'upstream' as const })),
    );
  }
  const services = state === 'connected' ? { ...coordinator.services, upstream: allReady(servers.map((s) => s.server)) } : coordinator.services;
  const abort = new AbortController();
  const mcp = createMcpSession(services, { sessionId: `tokens-${profile}`, transport: 'memory', signal: abort.signal, agent: { name: 'local', workspaceNamespace: '', permissions: config.defaultPermissions } });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await mcp.connect(serverTransport);
  const client = new Client({ name: 'token-bench', version: '1.0.0' });
  await client.connect(clientTransport);
  return {
    client,
    async close() {
      abort.abort();
      await client.close();
      await mcp.close();
      await coordinator.close();
    },
  };
}

interface Discovery {
  search: number;
  definition: number;
}

/** One discovery per task: the default summary search, then the first result's definition. */
async function discoveries(client: Client, queries: readonly string[], limit?: number): Promise<Discovery[]> {
  const out: Discovery[] = [];
  for (const query of queries) {
    const search = await client.callTool({ name: 'search_tools', arguments: { query, ...(limit === undefined ? {} : { limit }) } });
    const first = ((search.structuredContent as { tools?: { name: string; category: string }[] }).tools ?? [])[0];
    if (!first) continue;
    const def = await client.callTool({ name: 'get_tool_definition', arguments: { tool_name: `${first.category}.${first.name}` } });
    out.push({ search: countTokens(textOf(search)), definition: countTokens(textOf(def)) });
  }
  return out;
}

const mean = (xs: readonly number[]): number => round(xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length), 0);

export const tokenBench: BenchSection = {
  group: GROUP,
  async run(progress) {
    const rows: BenchRow[] = [];
    const root = mkdtempSync(path.join(tmpdir(), 'cem-tokens-'));
    const servers = loadRealCatalog();
    const upfront = countTokens(JSON.stringify({ tools: servers.flatMap((s) => s.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }))) }));
    const toolCount = servers.reduce((n, s) => n + s.tools.length, 0);
    rows.push({ group: GROUP, name: `all ${toolCount} real definitions up front (tools/list form)`, value: upfront, unit: 'tokens' });
    // The keyword queries: tasks whose tool the search finds, so a discovery is search + that tool.
    const tasks = loadQueries()
      .filter((q) => q.kind === 'keyword')
      .map((q) => q.query);
    try {
      for (const profile of ['seed', 'minimal'] as const) {
        let fixed = 0;
        for (const state of ['connected', 'not configured'] as const) {
          progress(`tokens: ${profile} profile, servers ${state}`);
          const s = await session(profile, state, root);
          try {
            if (state === 'connected') {
              const listed = countTokens(JSON.stringify((await s.client.listTools()).tools));
              const instructions = countTokens(s.client.getInstructions() ?? '');
              fixed = listed + instructions;
              rows.push({ group: GROUP, name: `tools/list, ${profile} profile (measured)`, value: listed, unit: 'tokens', target: `<= ${TARGETS[profile]}`, met: listed <= TARGETS[profile] });
              rows.push({ group: GROUP, name: `initialize instructions, ${profile} profile`, value: instructions, unit: 'tokens' });
            }
            const found = await discoveries(s.client, tasks);
            const totals = found.map((d) => d.search + d.definition).sort((a, b) => a - b);
            const value = mean(totals);
            rows.push({
              group: GROUP,
              name: `one discovery (search_tools + get_tool_definition), ${profile} profile, servers ${state}, mean of ${found.length} tasks`,
              value,
              unit: 'tokens',
              extra: { search: mean(found.map((d) => d.search)), definition: mean(found.map((d) => d.definition)), min: totals[0] ?? 0, max: totals[totals.length - 1] ?? 0 },
              target: `<= ${DISCOVERY_TARGET}`,
              met: value <= DISCOVERY_TARGET,
            });
            if (state === 'connected' && profile === 'minimal') {
              // What the minimal profile's default limit (5) saves: the same tasks with the seed's 10.
              const ten = await discoveries(s.client, tasks, 10);
              rows.push({ group: GROUP, name: `one discovery with limit 10 (the seed profile's default), ${profile} profile, servers connected`, value: mean(ten.map((d) => d.search + d.definition)), unit: 'tokens', extra: { search: mean(ten.map((d) => d.search)) } });
            }
            const progressive = fixed + value;
            const share = round((progressive / upfront) * 100, 2);
            rows.push({
              group: GROUP,
              name: `progressive path (tools/list + instructions + one discovery), ${profile} profile, servers ${state}, share of all definitions`,
              value: share,
              unit: '%',
              extra: { progressive_tokens: progressive, upfront_tokens: upfront },
              target: `<= ${PROGRESSIVE_SHARE_TARGET}%`,
              met: share <= PROGRESSIVE_SHARE_TARGET,
              baseline: { name: 'all definitions up front', ratio: round(progressive / upfront, 4) },
            });
          } finally {
            await s.close();
          }
        }
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
    return rows;
  },
};
