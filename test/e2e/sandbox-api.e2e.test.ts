// The composition root end to end: through the real stdio binary, code reaches every subsystem
// the daemon wires (an upstream MCP server, the catalog, skills, PII vault of the session).

import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { REPO, scratch, startStdioClient } from '../fixtures/mcp/cli.js';
import type { Scratch } from '../fixtures/mcp/cli.js';

let home: Scratch;
let session: Awaited<ReturnType<typeof startStdioClient>>;

beforeAll(async () => {
  home = scratch({ CODE_EXEC_SANDBOX_PROCESSES: '1' });
  const memoryServer = path.join(REPO, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
  const config = home.writeConfig({
    mcpServers: { memory: { command: process.execPath, args: [memoryServer], env: { MEMORY_FILE_PATH: path.join(home.dir, 'memory.jsonl') } } },
  });
  session = await startStdioClient({ ...home.env, CODE_EXEC_CONFIG: config });
}, 60_000);

afterAll(async () => {
  await session?.close();
  home?.remove();
});

describe('sandbox API through the composition root', () => {
  it('finds an upstream tool by search and calls it from code', async () => {
    const { client } = session;
    // The default catalog already describes a 'memory' server, so search alone does not show that
    // the upstream server is connected: wait until the sandbox has its tools.
    await vi.waitFor(
      async () => {
        const probe = await client.callTool({ name: 'execute_code', arguments: { code: 'return typeof tools.memory?.create_entities' } });
        expect((probe.structuredContent as { result: unknown }).result).toBe('function');
      },
      { timeout: 30_000, interval: 200 },
    );
    const found = await client.callTool({ name: 'search_tools', arguments: { query: 'create entities knowledge graph', category: 'memory', detail_level: 'name' } });
    expect((found.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name)).toContain('create_entities');
    const result = await client.callTool({
      name: 'execute_code',
      arguments: {
        code: `await tools.memory.create_entities({ entities: [{ name: "Ada", entityType: "person", observations: ["wrote the first program"] }] });
const graph = await tools.memory.read_graph({});
return graph.entities.map((e) => e.name);`,
      },
    });
    expect(result.structuredContent).toMatchObject({ success: true, result: ['Ada'] });
  }, 60_000);

  it('saves a skill from code and imports it in the next call', async () => {
    const { client } = session;
    await client.callTool({ name: 'execute_code', arguments: { code: 'await save_skill("triple", "export function triple(x) { return 3 * x }", "triples a number")' } });
    const used = await client.callTool({ name: 'execute_code', arguments: { code: 'const { triple } = await import_skill("triple"); return triple(5)' } });
    expect(used.structuredContent).toMatchObject({ success: true, result: 15 });
    const listed = await client.callTool({ name: 'list_skills', arguments: {} });
    expect((listed.structuredContent as { skills: { name: string }[] }).skills.map((s) => s.name)).toContain('triple');
  });

  it('shares the session PII vault between code and the restore_pii tool', async () => {
    const { client } = session;
    const run = await client.callTool({ name: 'execute_code', arguments: { code: 'return await tokenize_pii("call bob@example.com")' } });
    const token = (run.structuredContent as { result: string }).result;
    expect(token).toMatch(/\[EMAIL_[0-9a-f]{8}\]/);
    const restored = await client.callTool({ name: 'restore_pii', arguments: { text: token } });
    expect(restored.structuredContent).toEqual({ restored_text: 'call bob@example.com' });
  });
});
