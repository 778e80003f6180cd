// Live upstream configuration in `stdio` (embedded), as in `serve`: a real stdio client (the SDK
// over the spawned CLI) keeps one connection while an mcpServers entry for a real upstream from
// npm (server-memory) is added, changed and removed in the configuration file; its PII token
// keeps restoring throughout.

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { scratch, startStdioClient } from '../fixtures/mcp/cli.js';
import type { Scratch } from '../fixtures/mcp/cli.js';
import { memoryConfig } from '../upstream/helpers.js';

let home: Scratch;
let file: string;
let stdio: Awaited<ReturnType<typeof startStdioClient>>;

const writeConfig = (mcpServers: Record<string, unknown>): void => writeFileSync(file, JSON.stringify({ mcpServers }));

beforeAll(async () => {
  home = scratch();
  file = home.writeConfig({ mcpServers: {} });
  stdio = await startStdioClient({ ...home.env, CODE_EXEC_CONFIG: file, CODE_EXEC_SANDBOX_PROCESSES: '1' });
}, 60_000);

afterAll(async () => {
  await stdio?.close();
  home?.remove();
});

async function call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  return (await stdio.client.callTool({ name, arguments: args })).structuredContent as Record<string, unknown>;
}

const execute = (code: string): Promise<Record<string, unknown>> => call('execute_code', { code, language: 'javascript', timeout_seconds: 60 });

/** Polls what the sandbox sees until `ok` holds (bounded generously: an upstream starts in a few seconds). */
async function until(code: string, ok: (result: Record<string, unknown>) => boolean, what: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const result = await execute(code);
    if (ok(result)) return result;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last result ${JSON.stringify(result)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

it('adds, changes and removes an upstream server in a running stdio server, keeping the connection and its PII vault', async () => {
  const token = (await call('sanitize_pii', { text: 'ada@analytical.example' }))['sanitized_text'] as string;
  expect(await execute('return Object.keys(tools)')).toMatchObject({ success: true, result: [] });

  // Added: the server starts and its tools are callable from the open connection.
  writeConfig({ notes: memoryConfig(path.join(home.dir, 'one.jsonl')) });
  await until('return Object.keys(tools)', (r) => Array.isArray(r['result']) && (r['result'] as string[]).includes('notes'), 'the added server');
  const created = await until(
    `await tools.notes.create_entities({ entities: [{ name: 'Ada', entityType: 'person', observations: ['x'] }] });
    return (await tools.notes.read_graph({})).entities.map((e) => e.name)`,
    (r) => r['success'] === true,
    'the added server to answer',
  );
  expect(created['result']).toEqual(['Ada']);

  // Changed (another memory file): the server restarts with the new entry, empty.
  writeConfig({ notes: memoryConfig(path.join(home.dir, 'two.jsonl')) });
  await until('return (await tools.notes.read_graph({})).entities.length', (r) => r['success'] === true && r['result'] === 0, 'the changed server');

  // Removed: its tools are gone.
  writeConfig({});
  const gone = await until('return await tools.notes.read_graph({})', (r) => r['success'] === false, 'the removed server to be gone');
  expect(String(gone['error'])).toMatch(/notes/);

  // The connection was never dropped, and its vault still restores.
  expect((await call('restore_pii', { text: token }))['restored_text']).toBe('ada@analytical.example');
  expect(stdio.errors).toEqual([]);
}, 240_000);
