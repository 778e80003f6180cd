// server.toolProfile: what tools/list shows, and that the listing carries nothing twice. The
// token counts are the fixed cost every client pays on connect (o200k, the real tokenizer).

import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterEach, describe, expect, it } from 'vitest';
import { startHarness } from '../fixtures/mcp/harness.js';
import type { Harness } from '../fixtures/mcp/harness.js';

let h: Harness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('tool profiles', () => {
  it('seed (the default) lists every tool the daemon wires, without $schema, titles or default hints, within 2,000 tokens', async () => {
    h = await startHarness();
    const { tools } = await h.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['execute_code', 'write_workspace_file', 'read_workspace_file', 'get_execution_stats']));
    const json = JSON.stringify(tools);
    expect(json).not.toContain('$schema');
    expect(json).not.toContain('"additionalProperties":{}');
    for (const t of tools) {
      expect(t.title, t.name).toBeUndefined();
      expect(t.annotations?.title, t.name).toBeUndefined();
      // A hint equal to MCP's default is what a client assumes anyway.
      expect(t.annotations?.destructiveHint, t.name).not.toBe(true);
    }
    // The target (bench/token-bench.ts measures it with Python on, as configured by default).
    expect(countTokens(json)).toBeLessThanOrEqual(2_000);
  });

  it('minimal lists only execute_code, search_tools and get_tool_definition; the others are unknown tools', async () => {
    h = await startHarness({ configure: (c) => void (c.server = { ...(c.server as NonNullable<typeof c.server>), toolProfile: 'minimal' }) });
    const { tools } = await h.client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toContain('execute_code');
    for (const n of names) expect(['execute_code', 'search_tools', 'get_tool_definition']).toContain(n);
    // The target for the minimal listing was 700; 648 since output schemas name their fields only.
    expect(countTokens(JSON.stringify(tools))).toBeLessThanOrEqual(650);
    // Hidden from MCP clients means absent: a call is the protocol's unknown-tool error.
    await expect(h.client.callTool({ name: 'read_workspace_file', arguments: { filename: 'a.txt' } })).rejects.toThrow(/read_workspace_file/);
    const r = await h.client.callTool({ name: 'execute_code', arguments: { code: 'return 1' } });
    expect(r.isError).toBeFalsy();
  });
});
