// Live upstream configuration (issue 26 item 7): adding, changing and removing an mcpServers entry
// in the configuration file takes effect in the running daemon, with a real upstream server from
// npm (server-memory), while one MCP session stays open throughout and its PII token keeps
// restoring. A file with a mistake changes nothing.

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import type { ConfigWatch, LoadConfigOptions } from '../../src/config/load-config.js';
import { startCoordinator } from '../../src/daemon.js';
import type { Coordinator } from '../../src/daemon.js';
import { watchUpstreamConfig } from '../../src/upstream/config-reload.js';
import { tempDir } from '../fixtures/config.js';
import { connectInMemory } from '../fixtures/mcp/harness.js';
import { captureLogger, memoryConfig, waitFor } from './helpers.js';

const dir = tempDir('cem-live-config-');
const file = path.join(dir, 'code-execution-mcp.json');
const options: LoadConfigOptions = {
  configFile: file,
  cwd: dir,
  root: dir,
  env: { CODE_EXEC_SEMANTIC_SEARCH: 'false' },
  adjustDefaults: (c) => {
    c.port = 0;
    c.sandbox = { processes: 1, threadsPerProcess: 1, pythonProcesses: 0 };
  },
};
const capture = captureLogger();
let coordinator: Coordinator;
let watch: ConfigWatch;
let connection: Awaited<ReturnType<typeof connectInMemory>>;

const writeConfig = (mcpServers: Record<string, unknown>): void => writeFileSync(file, JSON.stringify({ mcpServers }));

beforeAll(async () => {
  writeConfig({});
  const { config } = loadConfig(options);
  coordinator = await startCoordinator(config, capture.logger, { watch: false });
  watch = await watchUpstreamConfig(options, config, coordinator.upstream, capture.logger);
  connection = await connectInMemory(coordinator.services, { sessionId: 'live-session', name: 'local', workspaceNamespace: '', permissions: config.defaultPermissions });
}, 120_000);

afterAll(async () => {
  await watch?.close();
  await connection?.close();
  await coordinator?.close();
});

async function call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  return (await connection.client.callTool({ name, arguments: args })).structuredContent as Record<string, unknown>;
}

const execute = (code: string): Promise<Record<string, unknown>> => call('execute_code', { code, language: 'javascript', timeout_seconds: 60 });

it('adds, changes and removes an upstream server without a restart, keeping the session and its PII vault', async () => {
  const token = (await call('sanitize_pii', { text: 'ada@analytical.example' }))['sanitized_text'] as string;
  expect(await execute('return Object.keys(tools)')).toMatchObject({ success: true, result: [] });

  // Added: the server starts and its tools are callable from the open session.
  writeConfig({ notes: memoryConfig(path.join(dir, 'one.jsonl')) });
  await waitFor(() => coordinator.upstream.status()['notes']?.state === 'ready', 'the added server to be ready', 90_000);
  const created = await execute(`await tools.notes.create_entities({ entities: [{ name: 'Ada', entityType: 'person', observations: ['x'] }] });
    return (await tools.notes.read_graph({})).entities.map((e) => e.name)`);
  expect(created).toMatchObject({ success: true, result: ['Ada'] });
  expect(coordinator.upstream.status()['notes']?.calls).toBe(2);

  // A mistake in the file changes nothing, and says so in the log.
  writeFileSync(file, '{ "mcpServers": { "notes": ');
  await waitFor(() => capture.records.some((r) => r['code'] === 'CONFIG_RELOAD_FAILED'), 'the failed reload to be logged');
  expect(coordinator.upstream.status()['notes']).toMatchObject({ state: 'ready', calls: 2 });

  // Changed (another memory file): the server restarts with the new entry, empty.
  writeConfig({ notes: memoryConfig(path.join(dir, 'two.jsonl')) });
  await waitFor(() => {
    const s = coordinator.upstream.status()['notes'];
    return s?.state === 'ready' && s.calls === 0;
  }, 'the changed server to be ready', 90_000);
  expect(await execute('return (await tools.notes.read_graph({})).entities.length')).toMatchObject({ success: true, result: 0 });

  // Removed: its tools are gone, with the usual message.
  writeConfig({});
  await waitFor(() => !('notes' in coordinator.upstream.status()), 'the removed server to be gone', 30_000);
  const gone = await execute('return await tools.notes.read_graph({})');
  expect(gone['success']).toBe(false);
  expect(String(gone['error'])).toMatch(/notes/);
  expect(capture.records.filter((r) => r['code'] === 'UPSTREAM_RECONFIGURED')).toHaveLength(3);

  // The session was never dropped, and its vault still restores.
  expect((await call('restore_pii', { text: token }))['restored_text']).toBe('ada@analytical.example');
}, 240_000);
