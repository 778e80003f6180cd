// Discovery per agent, through the real coordinator and real MCP sessions: agents with different
// `tools` permissions see different tools in search_tools, get_tool_definition,
// list_tool_categories, search_tools from code and the servers/ tree; a hidden tool answers like
// an unknown one; private skills show only to their author; every entry says whether it is
// callable and why not; curated metadata is merged into the live server-memory tools; and
// call_tool refuses what cannot work with the cause and the fix.
import { rmSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Permissions } from '../../src/config/config-types.js';
import { startCoordinator } from '../../src/daemon.js';
import type { Coordinator } from '../../src/daemon.js';
import type { HostCallContext } from '../../src/executor/index.js';
import { createSandboxApi } from '../../src/sandbox-api/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { DEFAULT_CATALOG_DIR } from '../catalog/helpers.js';
import { FULL_PERMISSIONS, tempDir, testConfig } from '../fixtures/config.js';
import { connectInMemory, textOf } from '../fixtures/mcp/harness.js';
import { memoryConfig, waitFor } from '../upstream/helpers.js';

const AGENTS = {
  // memory is live; slack is in the default catalog but nobody configured it
  alice: { ...FULL_PERMISSIONS, tools: ['memory.*', 'slack.*'] },
  // github is configured but its command does not exist
  bob: { ...FULL_PERMISSIONS, tools: ['github.*'] },
} satisfies Record<string, Permissions>;

let root: string;
let coordinator: Coordinator;
const sessions: Record<string, { client: Client; close(): Promise<void> }> = {};

interface View {
  name: string;
  category: string;
  callable?: boolean;
  why?: string;
  mcp_server_config?: Record<string, { command?: string }>;
}

beforeAll(async () => {
  root = tempDir('cem-discovery-');
  const config = testConfig({
    catalogDir: DEFAULT_CATALOG_DIR,
    skillsDir: path.join(root, 'skills'),
    workspaceDir: path.join(root, 'workspace'),
    sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 0 },
    mcpServers: {
      memory: { ...memoryConfig(path.join(root, 'memory-${agent}.jsonl')), instances: 'per-agent', max_concurrency: 1 },
      github: { command: path.join(root, 'no-such-github-server') },
    },
    agents: Object.entries(AGENTS).map(([name, permissions]) => ({ name, token: `${name}-token-0123456789abcdef`, permissions })),
  });
  coordinator = await startCoordinator(config, silentLogger(), { watch: false });
  await waitFor(() => coordinator.upstream.status()['memory']?.state === 'ready' && coordinator.upstream.status()['github']?.state === 'failed', 'memory ready, github failed', 30_000);
  coordinator.catalog.setDynamicTools('skills', [
    { name: 'alice_secret', description: 'Private helper of alice', mcp_server: 'skills', functions: [], use_cases: [], input_schema: { type: 'object' }, source: 'skill', author: 'alice', visibility: 'private' },
    { name: 'shared_helper', description: 'Published helper', mcp_server: 'skills', functions: [], use_cases: [], input_schema: { type: 'object' }, source: 'skill', author: 'alice', visibility: 'shared' },
  ]);
  for (const [name, permissions] of Object.entries(AGENTS)) {
    sessions[name] = await connectInMemory(coordinator.services, { sessionId: `${name}-session`, name, workspaceNamespace: name, permissions });
  }
}, 90_000);

afterAll(async () => {
  for (const s of Object.values(sessions)) await s.close();
  await coordinator?.close();
  rmSync(root, { recursive: true, force: true });
});

async function call(agent: keyof typeof AGENTS, name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; json: Record<string, unknown>; text: string }> {
  const result = await sessions[agent]!.client.callTool({ name, arguments: args });
  return { isError: result.isError === true, json: (result.structuredContent ?? {}) as Record<string, unknown>, text: textOf(result) };
}

async function search(agent: keyof typeof AGENTS, query: string, extra: Record<string, unknown> = {}): Promise<View[]> {
  return (await call(agent, 'search_tools', { query, limit: 100, ...extra })).json['tools'] as View[];
}

async function run(agent: keyof typeof AGENTS, code: string): Promise<{ success: boolean; result: unknown; error?: string }> {
  return (await call(agent, 'execute_code', { code })).json as { success: boolean; result: unknown; error?: string };
}

const servers = (tools: View[]): Set<string> => new Set(tools.map((t) => t.category));

describe('each agent sees only what its tools permission allows', () => {
  it('search_tools', async () => {
    const alice = await search('alice', '');
    const bob = await search('bob', '');
    expect(servers(alice)).toEqual(new Set(['memory', 'slack', 'sandbox', 'skills']));
    expect(servers(bob)).toEqual(new Set(['github', 'sandbox', 'skills']));
    expect((await search('bob', 'knowledge graph entities')).some((t) => t.category === 'memory')).toBe(false);
    expect((await search('alice', 'create a github issue')).some((t) => t.category === 'github')).toBe(false);
  });

  it('list_tool_categories counts only visible tools and omits categories with none', async () => {
    const alice = (await call('alice', 'list_tool_categories')).json as { categories: Record<string, { tool_count: number }>; total_tools: number };
    const bob = (await call('bob', 'list_tool_categories')).json as typeof alice;
    expect(Object.keys(alice.categories).sort()).toEqual(['memory', 'sandbox', 'skills', 'slack']);
    expect(Object.keys(bob.categories).sort()).toEqual(['github', 'sandbox', 'skills']);
    expect(alice.categories['memory']?.tool_count).toBe(coordinator.upstream.tools('memory').length);
    expect(alice.categories['skills']?.tool_count).toBe(2);
    expect(bob.categories['skills']?.tool_count).toBe(1);
    expect(alice.total_tools).toBe(Object.values(alice.categories).reduce((n, c) => n + c.tool_count, 0));
  });

  it('get_tool_definition refuses a hidden tool exactly like an unknown one, suggesting only visible names', async () => {
    const hidden = await call('bob', 'get_tool_definition', { tool_name: 'memory.create_entities' });
    const unknown = await call('bob', 'get_tool_definition', { tool_name: 'nowhere.create_entities' });
    expect(hidden.isError).toBe(true);
    expect(hidden.text.replace('memory.create_entities', 'X')).toBe(unknown.text.replace('nowhere.create_entities', 'X'));
    expect(hidden.text.replace('"memory.create_entities"', '')).not.toContain('memory.');
    const visible = await call('alice', 'get_tool_definition', { tool_name: 'memory.create_entities' });
    expect(visible.isError).toBe(false);
    expect((await call('bob', 'get_tool_definition', { tool_name: 'create_entities', category: 'memory' })).text).toMatch(/Unknown category "memory"/);
  });

  it('private skills show only to their author; shared ones to everyone', async () => {
    expect((await search('alice', '', { category: 'skills' })).map((t) => t.name)).toEqual(['alice_secret', 'shared_helper']);
    expect((await search('bob', '', { category: 'skills' })).map((t) => t.name)).toEqual(['shared_helper']);
    expect((await call('bob', 'get_tool_definition', { tool_name: 'alice_secret' })).text).toMatch(/^Unknown tool "alice_secret"/);
  });

  it('search_tools from code and the servers/ tree', async () => {
    const aliceFound = await run('alice', "return (await search_tools('knowledge graph', { limit: 50 })).tools.map((t) => t.category)");
    const bobFound = await run('bob', "return (await search_tools('knowledge graph', { limit: 50 })).tools.map((t) => t.category)");
    expect(aliceFound.result).toContain('memory');
    expect(bobFound.result).not.toContain('memory');

    const aliceTree = (await run('alice', "return list_files('servers')")).result as string[];
    const bobTree = (await run('bob', "return list_files('servers')")).result as string[];
    expect(aliceTree).toContain('servers/memory/create_entities.ts');
    expect(aliceTree.some((f) => f.startsWith('servers/github/'))).toBe(false);
    expect(bobTree.some((f) => f.startsWith('servers/github/'))).toBe(true);
    expect(bobTree.some((f) => f.startsWith('servers/memory/'))).toBe(false);
    const read = await run('bob', "return read_file('servers/memory/create_entities.ts')");
    expect(read.success).toBe(false);
    expect(read.error).toMatch(/File not found/);
    expect((await run('alice', "return read_file('servers/memory/create_entities.ts')")).result).toMatch(/create_entities/);
  }, 30_000);
});

describe('discovery tells the truth', () => {
  it('marks live tools callable, unconfigured servers with the mcpServers entry, failed servers with the reason', async () => {
    const memory = (await search('alice', 'knowledge graph')).find((t) => t.name === 'create_entities');
    expect(memory).toMatchObject({ category: 'memory', callable: true });
    expect(memory?.why).toBeUndefined();

    // In a list, the mcpServers entry to add is given once per server, in `setup`, and the reason
    // the tools of one category share is given once, in `not_callable`.
    const listed = await call('alice', 'search_tools', { query: 'post a slack message', limit: 100 });
    const slackTools = (listed.json['tools'] as View[]).filter((t) => t.category === 'slack');
    expect(slackTools.length).toBeGreaterThan(1);
    for (const slack of slackTools) {
      expect(slack.callable).toBe(false);
      expect(slack.why).toBeUndefined();
      expect(slack.mcp_server_config).toBeUndefined();
    }
    const reasons = listed.json['not_callable'] as Record<string, string>;
    expect(reasons['slack']).toMatch(/^not connected: server "slack" is not configured; add setup\.slack of this result to mcpServers/);
    expect(listed.text.split('is not configured; add setup.slack').length - 1).toBe(1);
    expect((listed.json['setup'] as Record<string, { command?: string }>)['slack']?.command).toBe('npx');
    expect(listed.text.split('"command":"npx"').length - 1).toBe(1);

    const bobListed = await call('bob', 'search_tools', { query: 'create a github issue', limit: 100 });
    const github = (bobListed.json['tools'] as View[]).find((t) => t.name === 'create_issue');
    expect(github?.callable).toBe(false);
    expect((bobListed.json['not_callable'] as Record<string, string>)['github']).toMatch(/^server "github" failed to start: .*command not found/);

    const definition = await call('alice', 'get_tool_definition', { tool_name: 'slack.slack_post_message' });
    expect(definition.json).toMatchObject({ callable: false, why: expect.stringMatching(/add this to mcpServers/) as unknown, mcp_server_config: { slack: { command: 'npx' } } });
  });

  it('ranks callable tools first and callable_only drops the rest', async () => {
    const all = await search('alice', 'message memory entity observation');
    const firstBlocked = all.findIndex((t) => t.callable === false);
    expect(firstBlocked).toBeGreaterThan(0);
    expect(all.slice(firstBlocked).every((t) => t.callable === false)).toBe(true);
    const only = await search('alice', 'message memory entity observation', { callable_only: true });
    expect(only.length).toBe(firstBlocked);
    expect(only.every((t) => t.callable === true)).toBe(true);
  });

  it('keeps curated metadata on live upstream tools: "remember a fact about a person" finds memory tools', async () => {
    const top = await search('alice', 'remember a fact about a person', { limit: 3 });
    expect(top.some((t) => t.category === 'memory')).toBe(true);
    const definition = (await call('alice', 'get_tool_definition', { tool_name: 'memory.create_entities' })).json as { source: string; use_cases: string[]; callable: boolean };
    expect(definition.source).toBe('upstream');
    expect(definition.use_cases).toContain('remember people, projects or facts');
    expect(definition.callable).toBe(true);
  });
});

describe('call_tool refuses what cannot work, naming the cause and the fix', () => {
  const callTool = async (agent: keyof typeof AGENTS, server: string, tool: string): Promise<{ code: string; message: string; name: string }> => {
    const api = createSandboxApi({ config: coordinator.config, catalog: coordinator.catalog, upstream: coordinator.upstream });
    const ctx: HostCallContext = {
      identity: { agent, sessionId: `${agent}-session`, workspaceNamespace: agent, permissions: AGENTS[agent] },
      language: 'javascript',
      signal: new AbortController().signal,
      account: () => undefined,
    };
    try {
      await api.extensions['call_tool']!([server, tool, {}], ctx);
    } catch (error) {
      const e = error as { code: string; message: string; name: string };
      return { code: e.code, message: e.message, name: e.name };
    }
    throw new Error(`${server}.${tool} was not refused`);
  };

  it('a denied tool', async () => {
    expect(await callTool('alice', 'github', 'create_issue')).toMatchObject({ code: 'PERMISSION_DENIED', message: expect.stringMatching(/your tools permission .* does not include github\.create_issue; .*permissions\.tools/) as unknown });
  });

  it('a server nobody configured, with its mcpServers entry', async () => {
    expect(await callTool('alice', 'slack', 'slack_post_message')).toMatchObject({ code: 'SERVER_NOT_CONFIGURED', message: expect.stringMatching(/not configured; add this to mcpServers .*"slack":\{"command":"npx"/) as unknown });
  });

  it('an unknown server, with close names among the servers the agent may call', async () => {
    const alice = { ...AGENTS.alice, tools: [...AGENTS.alice.tools, 'memroy.*'] };
    AGENTS.alice = alice;
    try {
      expect(await callTool('alice', 'memroy', 'read_graph')).toMatchObject({ code: 'UNKNOWN_SERVER', name: 'TypeError', message: expect.stringMatching(/there is no server "memroy"\. Did you mean "memory"\?/) as unknown });
    } finally {
      AGENTS.alice = { ...alice, tools: ['memory.*', 'slack.*'] };
    }
  });

  it('a server that failed to start, with the reason', async () => {
    expect(await callTool('bob', 'github', 'create_issue')).toMatchObject({ code: 'SERVER_UNAVAILABLE', message: expect.stringMatching(/server "github" failed to start: .*command not found/) as unknown });
  });

  it('an unknown tool, with close names', async () => {
    expect(await callTool('alice', 'memory', 'read_grahp')).toMatchObject({ code: 'UNKNOWN_TOOL', message: expect.stringMatching(/has no tool "read_grahp"\. Did you mean memory\.read_graph/) as unknown });
  });

  it('from JavaScript code, every refusal reaches the guest as a thrown error with the cause (no "Cannot read properties of undefined")', async () => {
    const r = await run(
      'alice',
      `const why = (p) => p.then(() => 'ran', (e) => e.name + ': ' + e.message);
      return [await why(tools.github.create_issue({})), await why(tools.slack.slack_post_message({})), await why(tools.memory.read_grahp({})), await why(fetch('https://example.com/'))]`,
    );
    const [denied, unconfigured, unknownTool, fetchDenied] = r.result as string[];
    expect(denied).toMatch(/^PermissionError: .*does not include github\.create_issue/);
    expect(unconfigured).toMatch(/not configured; add this to mcpServers/);
    expect(unknownTool).toMatch(/Did you mean memory\.read_graph/);
    expect(fetchDenied).toMatch(/^PermissionError: .*net permission/);
  }, 30_000);

  it('a permitted live tool still works from code', async () => {
    const r = await run('alice', "await tools.memory.create_entities({ entities: [{ name: 'Ann', entityType: 'person', observations: ['likes tea'] }] }); return (await tools.memory.read_graph({})).entities.map((e) => e.name)");
    expect(r.result).toEqual(['Ann']);
  }, 30_000);
});
