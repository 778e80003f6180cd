// Attack class: what the catalog and the daemon's figures tell one agent about others. An agent
// limited to `memory.*` sees no other server's tools (search, definitions, categories, servers/
// tree, over MCP and from code), and a non-operator's stats and /metrics show no one else's work.

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filesystemConfig, memoryConfig } from '../upstream/helpers.js';
import { agent, OPERATOR_TOKEN, run, startIsolationDaemon, tool, value, waitForServers } from './helpers.js';
import type { IsolationDaemon } from './helpers.js';

const NARROW = agent('narrow', { tools: ['memory.*'] });
const WIDE = agent('wide', { tools: ['*'] });
const MARK = 'wide-agent-private-activity';

const root = path.join(process.env['TMPDIR'] ?? '/tmp', `cem-isolation-fs-${process.pid}`);
let d: IsolationDaemon;
let narrow: Client;
let wide: Client;

beforeAll(async () => {
  mkdirSync(root, { recursive: true });
  writeFileSync(path.join(root, 'notes.txt'), MARK);
  d = await startIsolationDaemon({
    agents: [NARROW, WIDE],
    processes: 1,
    config: { mcpServers: { memory: memoryConfig(path.join(root, 'memory.jsonl')), filesystem: filesystemConfig(root) } },
  });
  [narrow, wide] = await Promise.all([d.client('narrow'), d.client('wide')]);
  await waitForServers(wide, ['memory', 'filesystem']);
  // The wide agent works with the filesystem server, so there is activity to leak.
  const listed = await run(wide, `return await tools.filesystem.list_directory({ path: ${JSON.stringify(root)} })`);
  expect(listed.success, listed.error).toBe(true);
  for (let i = 0; i < 3; i++) await run(wide, `return await tools.filesystem.read_text_file({ path: ${JSON.stringify(path.join(root, 'notes.txt'))} })`);
  await run(wide, 'throw new Error("wide failed on purpose")');
}, 120_000);

afterAll(async () => {
  await d?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** Every server named anywhere in a search answer. */
function servers(answer: unknown): string[] {
  const tools = ((answer as { tools?: { mcp_server?: string; category?: string }[] }).tools ?? []);
  return [...new Set(tools.flatMap((t) => [t.mcp_server ?? '', t.category ?? '']))].filter((s) => s !== '');
}

const ALLOWED = ['memory', 'sandbox', 'skills'];

/** The call counters of a stats answer, without the stats tool's own (the reader's own calls). */
function ownCounters(stats: Record<string, unknown> | undefined): unknown {
  const calls = (stats?.['calls'] ?? {}) as { by_tool?: Record<string, Record<string, number>>; by_outcome?: Record<string, number> };
  const byTool = { ...calls.by_tool };
  const statsCalls = byTool['get_execution_stats']?.['ok'] ?? 0;
  delete byTool['get_execution_stats'];
  const byOutcome = { ...calls.by_outcome };
  if (byOutcome['ok'] !== undefined) byOutcome['ok'] -= statsCalls;
  return { byTool, byOutcome };
}

describe('the catalog seen by an agent limited to memory.*', () => {
  it('search_tools over MCP and from code shows no other server', async () => {
    for (const query of ['read file directory', 'list directory', 'github issues', 'memory entities graph']) {
      const mcp = await tool(narrow, 'search_tools', { query, detail_level: 'full', limit: 50 });
      expect(mcp.isError, mcp.text).toBe(false);
      expect(servers(mcp.structured).filter((s) => !ALLOWED.includes(s)), `MCP search "${query}"`).toEqual([]);
      const code = await value(narrow, `return search_tools(${JSON.stringify(query)}, { detail_level: 'full', limit: 50 })`);
      expect(servers(code).filter((s) => !ALLOWED.includes(s)), `code search "${query}"`).toEqual([]);
    }
    const memory = await tool(narrow, 'search_tools', { query: 'create entities', limit: 50 });
    expect(servers(memory.structured)).toContain('memory');
  }, 60_000);

  it('get_tool_definition answers for a hidden tool exactly as for an unknown one', async () => {
    const hidden = await tool(narrow, 'get_tool_definition', { tool_name: 'list_directory' });
    const hiddenInCategory = await tool(narrow, 'get_tool_definition', { tool_name: 'read_text_file', category: 'filesystem' });
    const unknown = await tool(narrow, 'get_tool_definition', { tool_name: 'no_such_tool_anywhere' });
    expect(unknown.isError).toBe(true);
    expect(hidden.isError, 'definition of filesystem.list_directory').toBe(true);
    expect(hiddenInCategory.isError, 'definition of filesystem.read_text_file').toBe(true);
    expect(`${hidden.text}${hiddenInCategory.text}`).not.toMatch(/input_schema|"path"/);
    const visible = await tool(narrow, 'get_tool_definition', { tool_name: 'create_entities' });
    expect(visible.isError, visible.text).toBe(false);
  }, 60_000);

  it('list_tool_categories and the servers/ tree hold no other server', async () => {
    const categories = await tool(narrow, 'list_tool_categories');
    const names = Object.keys((categories.structured?.['categories'] as Record<string, unknown>) ?? {});
    expect(names.filter((n) => !ALLOWED.includes(n))).toEqual([]);
    const tree = (await value(narrow, `
      const seen = { top: list_files('servers') };
      try { seen.fs = list_files('servers/filesystem'); } catch (e) { seen.fs = 'refused'; }
      try { seen.file = read_file('servers/filesystem/read_text_file.ts'); } catch (e) { seen.file = 'refused'; }
      try { seen.github = read_file('servers/github/search_issues.ts'); } catch (e) { seen.github = 'refused'; }
      return seen;`)) as Record<string, unknown>;
    // list_files lists recursively ('servers/memory/read_graph.ts'): the server is the second segment.
    const serversListed = new Set((tree['top'] as string[]).map((n) => n.replace(/^servers\//, '').split('/')[0] ?? ''));
    expect([...serversListed].filter((n) => !ALLOWED.includes(n))).toEqual([]);
    expect(tree).toMatchObject({ fs: 'refused', file: 'refused', github: 'refused' });
  }, 60_000);

  it('calling a hidden tool from code is refused as a missing permission', async () => {
    const r = await run(narrow, "return await tools.filesystem.list_directory({ path: '/' })");
    expect(r.success).toBe(false);
    expect(JSON.stringify(r)).not.toContain(MARK);
  }, 60_000);
});

describe("figures of other agents' work", () => {
  it("get_execution_stats of a non-operator shows no other agent's activity", async () => {
    const stats = await tool(narrow, 'get_execution_stats');
    expect(stats.isError, stats.text).toBe(false);
    const text = JSON.stringify(stats.structured);
    expect(text).not.toMatch(/filesystem|list_directory|read_text_file/);
    expect(text, 'the other agent named').not.toMatch(/"wide"/);
    // The per-tool and per-outcome counters move with narrow's own calls only, never with wide's.
    const before = ownCounters(stats.structured);
    await run(wide, 'throw new Error("again")');
    await tool(wide, 'list_workspace_files');
    await tool(wide, 'search_tools', { query: 'anything' });
    const after = ownCounters((await tool(narrow, 'get_execution_stats')).structured);
    expect(after).toEqual(before);
  }, 60_000);

  it('/metrics refuses an agent token (403) and serves the operator (200)', async () => {
    const asAgent = await fetch(`${d.daemon.base}/metrics`, { headers: { Authorization: `Bearer ${NARROW.token}` } });
    expect(asAgent.status).toBe(403);
    expect(await asAgent.text()).not.toMatch(/filesystem/);
    const asOperator = await fetch(`${d.daemon.base}/metrics`, { headers: { Authorization: `Bearer ${OPERATOR_TOKEN}` } });
    expect(asOperator.status).toBe(200);
    expect(await asOperator.text()).toMatch(/code_exec_tool_calls_total/);
  }, 60_000);
});
