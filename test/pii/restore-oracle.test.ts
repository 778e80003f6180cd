// Issue 33 item 5: a restore is never an oracle for what other vaults hold. Two token agents on one
// real HTTP daemon with pii.auto on and an upstream server: every way bob can try to restore one of
// alice's tokens (restore_pii, detokenize_pii from code, a token in an upstream call's arguments)
// answers exactly as it does for a token nobody made: "unknown", with no word of another agent.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startCoordinator } from '../../src/daemon.js';
import type { Coordinator } from '../../src/daemon.js';
import { HttpDaemon } from '../../src/mcp/http/http-daemon.js';
import { silentLogger } from '../../src/util/logger.js';
import { FULL_PERMISSIONS, tempDir, testConfig } from '../fixtures/config.js';
import { memoryConfig } from '../upstream/helpers.js';

const ALICE = 'alice-token-0123456789abcdef0123';
const BOB = 'bob-token-0123456789abcdef012345';
const EMAIL = 'ada@analytical.example';
/** A token of the same shape nobody was ever given. */
const FORGED = '[EMAIL_0badf00d]';

let coordinator: Coordinator;
let daemon: HttpDaemon;
const clients: Client[] = [];
let alice: Client;
let bob: Client;

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'oracle', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  clients.push(client);
  return client;
}

beforeAll(async () => {
  const base = testConfig();
  const config = {
    ...base,
    pii: { ...base.pii, auto: true },
    mcpServers: { notes: memoryConfig(path.join(tempDir('cem-oracle-'), 'memory.jsonl')) },
    agents: [
      { name: 'alice', token: ALICE, permissions: FULL_PERMISSIONS },
      { name: 'bob', token: BOB, permissions: FULL_PERMISSIONS },
    ],
  };
  coordinator = await startCoordinator(config, silentLogger(), { watch: false });
  for (let i = 0; i < 400 && coordinator.upstream.status()['notes']?.state !== 'ready'; i++) await new Promise((r) => setTimeout(r, 50));
  daemon = new HttpDaemon(coordinator.services);
  const { url } = await daemon.listen();
  alice = await connect(url, ALICE);
  bob = await connect(url, BOB);
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await daemon?.shutdown(0);
  await coordinator?.close();
});

async function tool(client: Client, name: string, args: Record<string, unknown>): Promise<{ structured: Record<string, unknown>; text: string }> {
  const r = await client.callTool({ name, arguments: args });
  return { structured: (r.structuredContent ?? {}) as Record<string, unknown>, text: JSON.stringify(r.content) };
}

/** What bob is told about `token`, with the token itself blanked so two answers can be compared. */
async function bobsAnswers(token: string): Promise<string[]> {
  const blank = (s: string): string => s.split(token).join('<T>');
  const restore = await tool(bob, 'restore_pii', { text: `mail ${token}` });
  const fromCode = await tool(bob, 'execute_code', { code: `return detokenize_pii(${JSON.stringify(`mail ${token}`)})`, language: 'javascript' });
  const upstream = await tool(bob, 'execute_code', {
    code: `await tools.notes.create_entities({ entities: [{ name: 'x', entityType: 'c', observations: [${JSON.stringify(token)}] }] }); return 'sent'`,
    language: 'javascript',
  });
  return [restore.text, JSON.stringify(restore.structured), JSON.stringify(fromCode.structured.result), String(upstream.structured.error), String(upstream.structured.error_type)].map(blank);
}

it("answers bob about alice's token exactly as about a token nobody made, on every restore path", async () => {
  const made = await tool(alice, 'sanitize_pii', { text: `write to ${EMAIL}` });
  const token = String(made.structured['sanitized_text']).match(/\[EMAIL_[0-9a-f]{8}\]/)?.[0];
  expect(token, made.text).toBeDefined();
  expect((await tool(alice, 'restore_pii', { text: String(token) })).structured['restored_text']).toBe(EMAIL);

  const aboutAlices = await bobsAnswers(String(token));
  const aboutForged = await bobsAnswers(FORGED);
  expect(aboutAlices).toEqual(aboutForged);
  const all = aboutAlices.join('\n');
  expect(all).not.toMatch(/another.agent/i);
  expect(all).not.toContain(EMAIL);
  // What each path says: restore_pii lists it as unknown, the sandbox leaves it, the upstream call is refused.
  expect(aboutAlices[1]).toContain('"unknown_reasons":{"<T>":"unknown"}');
  expect(aboutAlices[2]).toBe('"mail <T>"');
  expect(aboutAlices[3]).toMatch(/notes\.create_entities was not called: .*<T> is unknown to this agent/);
  expect(aboutAlices[4]).toBe('PermissionError');
}, 120_000);
