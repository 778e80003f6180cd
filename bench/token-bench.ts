// `npm run bench -- tokens`: what a client really loads into the model's context, counted with the
// o200k tokenizer as a real MCP client receives it: this server's own tools/list per tool profile
// (measured, output schemas included), and one discovery (a summary search plus one definition,
// the text blocks the model reads) over the real catalog of 333 tools harvested from 27 public MCP
// servers, against loading every one of those definitions up front.

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
import { silentLogger } from '../src/util/logger.js';
import type { BenchRow, BenchSection } from './bench-types.js';
import { loadQueries, loadRealCatalog } from './search-eval.js';
import { round } from './stats.js';

const GROUP = 'tokens';
const TARGETS: Record<ToolProfile, number> = { seed: 2_000, minimal: 700 };
const DISCOVERY_TARGET = 450;
const PROGRESSIVE_SHARE_TARGET = 2;

function textOf(result: unknown): string {
  return ((result as { content?: { text?: string }[] }).content ?? [])[0]?.text ?? '';
}

async function session(profile: ToolProfile, root: string): Promise<{ client: Client; close(): Promise<void> }> {
  const base = defaultConfig(root);
  const config: Config = {
    ...base,
    port: 0,
    logLevel: 'silent',
    skillsDir: path.join(root, `skills-${profile}`),
    workspaceDir: path.join(root, `workspace-${profile}`),
    sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 0 },
    server: { ...(base.server as NonNullable<Config['server']>), toolProfile: profile },
  };
  const coordinator = await startCoordinator(config, silentLogger(), { watch: false });
  for (const s of loadRealCatalog()) {
    coordinator.catalog.setDynamicTools(
      s.server,
      s.tools.map((t) => ({ name: t.name, description: t.description, mcp_server: s.server, functions: [], use_cases: [], input_schema: t.inputSchema, source: 'upstream' as const })),
    );
  }
  const abort = new AbortController();
  const mcp = createMcpSession(coordinator.services, { sessionId: `tokens-${profile}`, transport: 'memory', signal: abort.signal, agent: { name: 'local', workspaceNamespace: '', permissions: config.defaultPermissions } });
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
    const tasks = loadQueries().filter((q) => q.kind === 'keyword');
    try {
      for (const profile of ['seed', 'minimal'] as const) {
        progress(`tokens: ${profile} profile`);
        const s = await session(profile, root);
        try {
          const listed = countTokens(JSON.stringify((await s.client.listTools()).tools));
          rows.push({ group: GROUP, name: `tools/list, ${profile} profile (measured)`, value: listed, unit: 'tokens', target: `<= ${TARGETS[profile]}`, met: listed <= TARGETS[profile] });
          const discoveries: number[] = [];
          for (const task of tasks) {
            const search = await s.client.callTool({ name: 'search_tools', arguments: { query: task.query } });
            const first = ((search.structuredContent as { tools?: { name: string; category: string }[] }).tools ?? [])[0];
            if (!first) continue;
            const def = await s.client.callTool({ name: 'get_tool_definition', arguments: { tool_name: `${first.category}.${first.name}` } });
            discoveries.push(countTokens(textOf(search)) + countTokens(textOf(def)));
          }
          const mean = round(discoveries.reduce((a, b) => a + b, 0) / Math.max(1, discoveries.length), 0);
          const sorted = [...discoveries].sort((a, b) => a - b);
          rows.push({
            group: GROUP,
            name: `one discovery (search_tools + get_tool_definition), ${profile} profile, mean of ${discoveries.length} tasks`,
            value: mean,
            unit: 'tokens',
            extra: { min: sorted[0] ?? 0, max: sorted[sorted.length - 1] ?? 0 },
            target: `<= ${DISCOVERY_TARGET}`,
            met: mean <= DISCOVERY_TARGET,
          });
          const progressive = listed + mean;
          const share = round((progressive / upfront) * 100, 2);
          rows.push({
            group: GROUP,
            name: `progressive path (tools/list + one discovery), ${profile} profile, share of all definitions`,
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
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
    return rows;
  },
};
