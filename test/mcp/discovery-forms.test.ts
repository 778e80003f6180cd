// The shapes discovery answers in, through the real coordinator and an MCP client: summary search
// gives one line per tool, get_tool_definition the TypeScript signature (with its doc comments)
// and, in the seed's "full" form, the schemas too; several names in one call; and the token cost
// of one discovery (a summary search plus one definition) as a client reads it.

import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolProfile } from '../../src/config/config-types.js';
import { startCoordinator } from '../../src/daemon.js';
import type { Coordinator } from '../../src/daemon.js';
import { silentLogger } from '../../src/util/logger.js';
import { DEFAULT_CATALOG_DIR } from '../catalog/helpers.js';
import { FULL_PERMISSIONS, tempDir, testConfig } from '../fixtures/config.js';
import { connectInMemory, textOf } from '../fixtures/mcp/harness.js';

const started: { coordinator: Coordinator; close(): Promise<void> }[] = [];

async function client(profile: ToolProfile): Promise<Client> {
  const root = tempDir('cem-forms-');
  const base = testConfig({ catalogDir: DEFAULT_CATALOG_DIR, skillsDir: path.join(root, 'skills'), workspaceDir: path.join(root, 'workspace'), sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 0 } });
  const config = { ...base, server: { ...(base.server as NonNullable<typeof base.server>), toolProfile: profile } };
  const coordinator = await startCoordinator(config, silentLogger(), { watch: false });
  const session = await connectInMemory(coordinator.services, { sessionId: `forms-${profile}`, name: 'local', workspaceNamespace: '', permissions: FULL_PERMISSIONS });
  started.push({ coordinator, close: session.close });
  return session.client;
}

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<{ json: Record<string, unknown>; text: string; isError: boolean }> {
  const r = await c.callTool({ name, arguments: args });
  return { json: r.structuredContent as Record<string, unknown>, text: textOf(r), isError: r.isError === true };
}

let seed: Client;
let minimal: Client;

beforeAll(async () => {
  seed = await client('seed');
  minimal = await client('minimal');
}, 60_000);

afterAll(async () => {
  for (const s of started) {
    await s.close();
    await s.coordinator.close();
  }
});

describe('summary search', () => {
  it('gives each tool a one-line description of at most 160 characters', async () => {
    const { json } = await call(seed, 'search_tools', { query: '', limit: 100 });
    const tools = json['tools'] as { description: string }[];
    expect(tools.length).toBeGreaterThan(10);
    for (const t of tools) {
      expect(t.description.length).toBeLessThanOrEqual(161);
      expect(t.description).not.toMatch(/\n/);
    }
  });
});

describe('ranking', () => {
  it('a relevant tool that is not callable outranks callable tools that barely match', async () => {
    const { json } = await call(seed, 'search_tools', { query: 'create a github issue', limit: 5 });
    const tools = json['tools'] as { name: string; callable: boolean }[];
    expect(tools[0]).toMatchObject({ name: 'create_issue', callable: false });
    // The configuration to add comes once, not once per tool.
    expect(Object.keys(json['setup'] as object)).toEqual(['github']);
  });

  it('among relevant tools, the callable ones still come first', async () => {
    const { json } = await call(seed, 'search_tools', { query: 'read file', limit: 10 });
    const tools = json['tools'] as { name: string; category: string; callable: boolean }[];
    expect(tools[0]).toMatchObject({ name: 'read_file', category: 'sandbox', callable: true });
  });
});

describe('get_tool_definition', () => {
  it('seed default: the full entry, with input_schema and the TypeScript signature (the seed prompts rely on it)', async () => {
    const { json } = await call(seed, 'get_tool_definition', { tool_name: 'read_file' });
    expect(json['input_schema']).toBeDefined();
    expect(json['typescript']).toMatch(/function read_file\(path: string\): string;/);
    expect(json['typescript']).toMatch(/\/\*\*/);
  });

  it('format "typescript" (minimal\'s default): the signature with its doc comments, no schemas', async () => {
    for (const [c, args] of [[seed, { tool_name: 'read_file', format: 'typescript' }], [minimal, { tool_name: 'read_file' }]] as const) {
      const { json } = await call(c, 'get_tool_definition', args);
      expect(json['input_schema']).toBeUndefined();
      expect(json['typescript']).toMatch(/@param path/);
      expect(json['callable']).toBe(true);
    }
  });

  it('format "schema" gives the description and schemas whole, without the signature; a shortened signature says so', async () => {
    const { json } = await call(minimal, 'get_tool_definition', { tool_name: 'read_file', format: 'schema' });
    expect(json['input_schema']).toBeDefined();
    expect(json['description']).toBeTypeOf('string');
    expect(json['typescript']).toBeUndefined();
    // A catalog tool whose compact signature leaves something out ends with where to find the rest.
    const found = await call(minimal, 'search_tools', { query: '', limit: 100 });
    for (const t of found.json['tools'] as { name: string; category: string }[]) {
      const def = await call(minimal, 'get_tool_definition', { tool_name: `${t.category}.${t.name}` });
      const text = def.json['typescript'] as string | undefined;
      if (text?.includes('…') || text?.includes('more */')) expect(text).toMatch(/format "schema" or "full" has every detail/);
    }
  });

  it('several names at once: found ones in order, unknown ones with a suggestion, and not both arguments', async () => {
    const { json } = await call(seed, 'get_tool_definition', { tool_names: ['read_file', 'write_file', 'raed_fil'], format: 'typescript' });
    expect((json['tools'] as { name: string }[]).map((t) => t.name)).toEqual(['read_file', 'write_file']);
    const missing = json['not_found'] as { name: string; error: string }[];
    expect(missing).toHaveLength(1);
    expect(missing[0]?.error).toMatch(/Did you mean: .*read_file/);
    const both = await call(seed, 'get_tool_definition', { tool_name: 'read_file', tool_names: ['write_file'] });
    expect(both.isError).toBe(true);
    expect(both.text).toMatch(/not both/);
    const neither = await call(seed, 'get_tool_definition', {});
    expect(neither.isError).toBe(true);
    expect(neither.text).toMatch(/tool_name is required/);
  });

  it('a whole daemon lists its tools within the budgets: seed 2,000 tokens, minimal 650', async () => {
    const { tools } = await seed.listTools();
    expect(tools.length).toBeGreaterThanOrEqual(15);
    expect(countTokens(JSON.stringify(tools))).toBeLessThanOrEqual(2_000);
    expect(countTokens(JSON.stringify((await minimal.listTools()).tools))).toBeLessThanOrEqual(650);
  });

  it('one discovery (summary search + one definition) stays small in the minimal profile', async () => {
    const search = await call(minimal, 'search_tools', { query: 'read a file from the workspace', limit: 5 });
    const def = await call(minimal, 'get_tool_definition', { tool_name: (search.json['tools'] as { name: string }[])[0]?.name });
    const tokens = countTokens(search.text) + countTokens(def.text);
    // A regression floor at today's figure; the README's token table has the measured values.
    expect(tokens).toBeLessThan(600);
  });
});
