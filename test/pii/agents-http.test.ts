// Tokens that outlive a session (issue 26 item 3), over real HTTP with two token agents: alice's
// sanitize_pii token restores in a later session of hers (a reconnect, the bridge's silent
// re-initialization) and after the daemon restarts, and bob, with a session of his own, cannot
// restore it: he is told it is unknown (as a forged one), and never sees the value.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, expect, it } from 'vitest';
import type { Config } from '../../src/config/config-types.js';
import { startCoordinator } from '../../src/daemon.js';
import type { Coordinator } from '../../src/daemon.js';
import { HttpDaemon } from '../../src/mcp/http/http-daemon.js';
import { silentLogger } from '../../src/util/logger.js';
import { FULL_PERMISSIONS, testConfig } from '../fixtures/config.js';

const ALICE = 'alice-token-0123456789abcdef0123';
const BOB = 'bob-token-0123456789abcdef012345';
const SECRET = 'call me at +1 415 555 0142 or ada@analytical.example';

interface Running {
  coordinator: Coordinator;
  daemon: HttpDaemon;
  url: string;
  clients: Client[];
}
const running: Running[] = [];

async function start(config: Config): Promise<Running> {
  const coordinator = await startCoordinator(config, silentLogger(), { watch: false });
  const daemon = new HttpDaemon(coordinator.services);
  const { url } = await daemon.listen();
  const r = { coordinator, daemon, url, clients: [] };
  running.push(r);
  return r;
}

async function stop(r: Running): Promise<void> {
  running.splice(running.indexOf(r), 1);
  await Promise.allSettled(r.clients.map((c) => c.close()));
  await r.daemon.shutdown(0);
  await r.coordinator.close();
}

afterEach(async () => {
  for (const r of [...running]) await stop(r);
});

async function session(r: Running, token: string): Promise<(tool: string, args: Record<string, unknown>) => Promise<Record<string, unknown>>> {
  const transport = new StreamableHTTPClientTransport(new URL(r.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: 'pii-agents', version: '1.0.0' });
  await client.connect(transport);
  r.clients.push(client);
  return async (tool, args) => (await client.callTool({ name: tool, arguments: args })).structuredContent as Record<string, unknown>;
}

function config(): Config {
  const base = testConfig();
  return {
    ...base,
    agents: [
      { name: 'alice', token: ALICE, permissions: FULL_PERMISSIONS },
      { name: 'bob', token: BOB, permissions: FULL_PERMISSIONS },
    ],
  };
}

it('restores alice\'s tokens in her later sessions and after a daemon restart, and never for bob', async () => {
  const cfg = config();
  let daemon = await start(cfg);
  const alice1 = await session(daemon, ALICE);
  const sanitized = await alice1('sanitize_pii', { text: SECRET });
  const text = sanitized['sanitized_text'] as string;
  expect(text).not.toContain('555');
  expect(sanitized['pii_found']).toBe(2);

  // A second session of alice's (a reconnect, or the bridge re-initializing): the tokens restore.
  const alice2 = await session(daemon, ALICE);
  expect((await alice2('restore_pii', { text }))['restored_text']).toBe(SECRET);

  // Bob cannot, and is told why, without the value.
  const bob = await session(daemon, BOB);
  const refused = await bob('restore_pii', { text });
  expect(refused['restored_text']).toBe(text);
  const tokens = text.match(/\[[A-Z_]+_[0-9a-f]{8}\]/g) ?? [];
  expect(refused['unknown_tokens']).toEqual(tokens);
  expect(Object.values(refused['unknown_reasons'] as Record<string, string>)).toEqual(['unknown', 'unknown']);
  expect(JSON.stringify(refused)).not.toMatch(/555|analytical/);

  // The daemon restarts: alice's new session restores, bob still cannot.
  await stop(daemon);
  daemon = await start(cfg);
  const alice3 = await session(daemon, ALICE);
  expect((await alice3('restore_pii', { text }))['restored_text']).toBe(SECRET);
  const bob2 = await session(daemon, BOB);
  const again = await bob2('restore_pii', { text });
  expect(again['restored_text']).toBe(text);
  expect(again['message']).toMatch(/unknown to this agent/);
  expect(JSON.stringify(again)).not.toMatch(/555|analytical/);

  // A token nobody made is unknown.
  const forged = await alice3('restore_pii', { text: '[EMAIL_0badf00d]' });
  expect(forged['unknown_reasons']).toEqual({ '[EMAIL_0badf00d]': 'unknown' });
}, 120_000);
