// Issue 6's "done means", end to end through the composition root with pii.auto on: an agent
// moves a customer list from one upstream tool (server-filesystem) to another (server-memory)
// without a single raw email reaching its context, and the real values arrive at the destination.

import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Coordinator } from '../../src/daemon.js';
import { startCoordinator } from '../../src/daemon.js';
import { silentLogger } from '../../src/util/logger.js';
import { tempDir, testConfig } from '../fixtures/config.js';
import { connectInMemory } from '../fixtures/mcp/harness.js';
import { filesystemConfig, memoryConfig } from '../upstream/helpers.js';

const CUSTOMERS = [
  { name: 'Ada Lovelace', email: 'ada@analytical.example', plan: 'pro' },
  { name: 'Grace Hopper', email: 'grace@cobol.example', plan: 'free' },
  { name: 'Alan Turing', email: 'alan@bletchley.example', plan: 'pro' },
];
const EMAILS = CUSTOMERS.map((c) => c.email);

const root = tempDir('cem-pii-flow-');
const shared = path.join(root, 'crm-export');
let coordinator: Coordinator;
let connection: Awaited<ReturnType<typeof connectInMemory>>;
let client: Client;

beforeAll(async () => {
  mkdirSync(shared, { recursive: true });
  writeFileSync(path.join(shared, 'customers.json'), JSON.stringify(CUSTOMERS));
  const base = testConfig();
  const config = {
    ...base,
    pii: { ...base.pii, auto: true },
    mcpServers: { crm: filesystemConfig(shared), notes: memoryConfig(path.join(root, 'memory.jsonl')) },
  };
  coordinator = await startCoordinator(config, silentLogger(), { watch: false });
  for (let i = 0; i < 400; i++) {
    const s = coordinator.upstream.status();
    if (s.crm?.state === 'ready' && s.notes?.state === 'ready') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  connection = await connectInMemory(coordinator.services, { sessionId: 'agent-session', name: 'agent', workspaceNamespace: 'agent', permissions: config.defaultPermissions });
  client = connection.client;
}, 120_000);

afterAll(async () => {
  await connection?.close();
  await coordinator?.close();
});

function execute(code: string): Promise<{ text: string; structured: Record<string, unknown> }> {
  return client.callTool({ name: 'execute_code', arguments: { code, timeout_seconds: 60 } }).then((r) => ({
    text: JSON.stringify(r.content),
    structured: r.structuredContent as Record<string, unknown>,
  }));
}

it('moves a customer list between two upstream tools with no raw email in anything the agent sees', async () => {
  // Step 1: the agent looks at the list; what comes back is tokenized.
  const look = await execute(`
    const file = await tools.crm.read_text_file({ path: ${JSON.stringify(path.join(shared, 'customers.json'))} });
    const customers = JSON.parse(file.content);
    console.log('first contact:', customers[0].email);
    return customers.filter((c) => c.plan === 'pro').map((c) => ({ name: c.name, email: c.email }));`);
  expect(look.structured.success).toBe(true);
  for (const email of EMAILS) expect(look.text).not.toContain(email);
  const pro = look.structured.result as { name: string; email: string }[];
  expect(pro.map((c) => c.name)).toEqual(['Ada Lovelace', 'Alan Turing']);
  for (const c of pro) expect(c.email).toMatch(/^\[EMAIL_[0-9a-f]{8}\]$/);
  expect((look.structured.output as string[])[0]).toMatch(/^first contact: \[EMAIL_[0-9a-f]{8}\]$/);

  // Step 2: the agent writes code with the tokens it saw; they are restored on the way out.
  const move = await execute(`
    const pro = ${JSON.stringify(pro)};
    await tools.notes.create_entities({ entities: pro.map((c) => ({ name: c.name, entityType: 'customer', observations: ['email: ' + c.email] })) });
    const stored = await tools.notes.open_nodes({ names: pro.map((c) => c.name) });
    return stored.entities.map((e) => e.observations[0]);`);
  expect(move.structured.success).toBe(true);
  for (const email of EMAILS) expect(move.text).not.toContain(email);

  // The destination holds the real values (read by the daemon itself, not by the agent).
  const graph = (await coordinator.upstream.callTool('notes', 'read_graph', {})) as { entities: { name: string; observations: string[] }[] };
  expect(graph.entities.map((e) => e.observations[0]).sort()).toEqual(['email: ada@analytical.example', 'email: alan@bletchley.example']);
}, 120_000);

it('refuses a token this session never made instead of sending it', async () => {
  const r = await execute("await tools.notes.create_entities({ entities: [{ name: 'X', entityType: 'customer', observations: ['[EMAIL_0badf00d]'] }] })");
  expect(r.structured).toMatchObject({ success: false, error_type: 'PermissionError' });
  const graph = (await coordinator.upstream.callTool('notes', 'read_graph', {})) as { entities: { name: string }[] };
  expect(graph.entities.map((e) => e.name)).not.toContain('X');
}, 60_000);
