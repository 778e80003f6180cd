// What the tool profile changes in search_tools (SPEC: MCP tools, Catalog): outside `seed` a
// summary line leaves out `mcp_server` where it equals `category` and `callable` where it is
// true, and the `minimal` profile's default limit is 5. The same in the MCP tool and from code, in
// both languages; the `seed` profile keeps the seed's four fields and limit 10.

import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolProfile } from '../../src/config/config-types.js';
import { startCoordinator } from '../../src/daemon.js';
import type { Coordinator } from '../../src/daemon.js';
import { silentLogger } from '../../src/util/logger.js';
import { DEFAULT_CATALOG_DIR } from './helpers.js';
import { FULL_PERMISSIONS, tempDir, testConfig } from '../fixtures/config.js';
import { connectInMemory } from '../fixtures/mcp/harness.js';

const started: { coordinator: Coordinator; close(): Promise<void> }[] = [];

/** A real coordinator (sandbox processes, Python with `python`) and an MCP client of it. */
async function client(profile: ToolProfile, python: boolean): Promise<Client> {
  const root = tempDir('cem-search-profile-');
  const base = testConfig({ catalogDir: DEFAULT_CATALOG_DIR, skillsDir: path.join(root, 'skills'), workspaceDir: path.join(root, 'workspace'), sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: python ? 1 : 0 } });
  const config = { ...base, server: { ...(base.server as NonNullable<typeof base.server>), toolProfile: profile } };
  const coordinator = await startCoordinator(config, silentLogger(), { watch: false });
  const session = await connectInMemory(coordinator.services, { sessionId: `search-${profile}`, name: 'local', workspaceNamespace: '', permissions: FULL_PERMISSIONS });
  started.push({ coordinator, close: session.close });
  return session.client;
}

let seed: Client;
let minimal: Client;

beforeAll(async () => {
  seed = await client('seed', false);
  minimal = await client('minimal', true);
}, 120_000);

afterAll(async () => {
  for (const s of started) {
    await s.close();
    await s.coordinator.close();
  }
});

interface Line {
  name: string;
  category: string;
  mcp_server?: string;
  callable?: boolean;
  description?: string;
}

interface Found {
  count: number;
  tools: Line[];
}

async function mcpSearch(c: Client, args: Record<string, unknown>): Promise<Found> {
  const r = await c.callTool({ name: 'search_tools', arguments: args });
  expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
  return r.structuredContent as unknown as Found;
}

async function codeSearch(c: Client, language: 'javascript' | 'python', query: string): Promise<Found> {
  const code = language === 'python' ? `return search_tools(${JSON.stringify(query)})` : `return await search_tools(${JSON.stringify(query)})`;
  // Generous: Python's first call waits for its interpreter to start, slow on a busy machine.
  const r = await c.callTool({ name: 'execute_code', arguments: { code, language, timeout_seconds: 110 } }, undefined, { timeout: 120_000 });
  const out = r.structuredContent as { success: boolean; result: Found; error?: string };
  expect(out.success, out.error).toBe(true);
  return out.result;
}

describe('search_tools per tool profile', () => {
  it('minimal: 5 results by default, and compact lines (no mcp_server equal to category, no callable: true), in the MCP tool', async () => {
    const all = await mcpSearch(minimal, { query: '' });
    expect(all.count).toBe(5);
    const sandbox = await mcpSearch(minimal, { query: 'filter records by field', limit: 20 });
    expect(sandbox.count).toBeGreaterThan(5);
    for (const line of [...all.tools, ...sandbox.tools]) {
      expect(line.description, line.name).toBeTypeOf('string');
      if (line.mcp_server !== undefined) expect(line.mcp_server, line.name).not.toBe(line.category);
      expect(line.callable, line.name).not.toBe(true);
    }
    // The sandbox's own functions are callable, so their lines carry neither field.
    const own = sandbox.tools.find((t) => t.category === 'sandbox');
    expect(own).toBeDefined();
    expect(own).not.toHaveProperty('callable');
    expect(own).not.toHaveProperty('mcp_server');
    // A tool that is not callable still says so.
    const notCallable = all.tools.concat((await mcpSearch(minimal, { query: 'create a github issue' })).tools).find((t) => t.category === 'github');
    expect(notCallable?.callable).toBe(false);
  });

  it('minimal: search_tools from JavaScript and from Python defaults to 5 compact lines', async () => {
    for (const language of ['javascript', 'python'] as const) {
      const found = await codeSearch(minimal, language, '');
      expect(found.count, language).toBe(5);
      for (const line of found.tools) {
        if (line.mcp_server !== undefined) expect(line.mcp_server, `${language} ${line.name}`).not.toBe(line.category);
        expect(line.callable, `${language} ${line.name}`).not.toBe(true);
      }
    }
  }, 240_000);

  it("seed: limit 10 and the seed's four fields on every line, in the MCP tool and from code", async () => {
    const mcp = await mcpSearch(seed, { query: '' });
    const js = await codeSearch(seed, 'javascript', '');
    for (const found of [mcp, js]) {
      expect(found.count).toBe(10);
      for (const line of found.tools) {
        for (const field of ['name', 'category', 'description', 'mcp_server']) expect(line, `${line.name} ${field}`).toHaveProperty(field);
      }
    }
    const own = (await mcpSearch(seed, { query: 'filter records by field' })).tools.find((t) => t.category === 'sandbox');
    expect(own?.mcp_server).toBe('sandbox');
    expect(own?.callable).toBe(true);
  });
});
