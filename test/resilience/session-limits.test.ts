// One agent cannot lock the others out by opening sessions: past server.maxSessionsPerAgent, or
// past its byte share server.sessionBytesPerAgent (each open session is charged what an idle one
// costs, SESSION_BYTES, beside the SSE events its sessions keep for resumption), it alone is
// refused (429, naming the limit), another agent still opens sessions, and a session that ends
// gives its slot and its bytes back.

import { afterEach, describe, expect, it } from 'vitest';
import { SESSION_BYTES } from '../../src/mcp/http/event-store.js';
import { FULL_PERMISSIONS } from '../fixtures/config.js';
import type { HttpHarness } from '../fixtures/mcp/http-harness.js';
import { INITIALIZE, MCP_POST_HEADERS, rawRequest, startHttpHarness } from '../fixtures/mcp/http-harness.js';

const PER_AGENT = 3;
const MALLORY = 'mallory-token-0123456789';
const ALICE = 'alice-token-0123456789ab';
const BUDGET = 1024 * 1024;
let harness: HttpHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function initialize(token: string): ReturnType<typeof rawRequest> {
  return rawRequest(harness!.url, { method: 'POST', headers: { ...MCP_POST_HEADERS, Authorization: `Bearer ${token}` }, body: JSON.stringify(INITIALIZE) });
}

describe('per-agent session limit', () => {
  it('refuses the agent over its own limit with 429 and lets another agent open sessions', async () => {
    harness = await startHttpHarness({
      configure: (config) => {
        config.agents = [
          { name: 'mallory', token: MALLORY, permissions: FULL_PERMISSIONS },
          { name: 'alice', token: ALICE, permissions: FULL_PERMISSIONS },
        ];
        config.server = { ...config.server!, maxSessionsPerAgent: PER_AGENT };
      },
    });
    for (let i = 0; i < PER_AGENT; i++) expect((await initialize(MALLORY)).status).toBe(200);
    const refused = await initialize(MALLORY);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(JSON.parse(refused.body).error.message).toMatch(/agent "mallory" already holds 3 open sessions \(server\.maxSessionsPerAgent = 3\)/);

    const alice = await harness.connect(ALICE);
    const listed = await alice.callTool({ name: 'list_workspace_files', arguments: {} });
    expect(listed.isError).toBeFalsy();
    expect(harness.daemon.sessionCount).toBe(PER_AGENT + 1);
  });

  it('gives the agent its slot back when one of its sessions ends', async () => {
    harness = await startHttpHarness({
      configure: (config) => {
        config.agents = [{ name: 'mallory', token: MALLORY, permissions: FULL_PERMISSIONS }];
        config.server = { ...config.server!, maxSessionsPerAgent: 1 };
      },
    });
    const first = await initialize(MALLORY);
    expect(first.status).toBe(200);
    expect((await initialize(MALLORY)).status).toBe(429);
    const id = String(first.headers['mcp-session-id']);
    const deleted = await rawRequest(harness.url, { method: 'DELETE', headers: { Authorization: `Bearer ${MALLORY}`, 'Mcp-Session-Id': id } });
    expect(deleted.status).toBe(200);
    expect((await initialize(MALLORY)).status).toBe(200);
  });

  it('refuses an agent\'s session past its byte budget with 429 naming the option, and not another agent\'s', async () => {
    harness = await startHttpHarness({
      configure: (config) => {
        config.agents = [
          { name: 'mallory', token: MALLORY, permissions: FULL_PERMISSIONS },
          { name: 'alice', token: ALICE, permissions: FULL_PERMISSIONS },
        ];
        // The count limit far away: only bytes refuse here.
        config.server = { ...config.server!, maxSessionsPerAgent: 1000, sessionBytesPerAgent: BUDGET };
      },
    });
    const fits = BUDGET / SESSION_BYTES;
    const opened: string[] = [];
    for (let i = 0; i < fits; i++) {
      const answer = await initialize(MALLORY);
      expect(answer.status).toBe(200);
      opened.push(String(answer.headers['mcp-session-id']));
    }
    const refused = await initialize(MALLORY);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(JSON.parse(refused.body).error.message).toMatch(new RegExp(`agent "mallory" holds ${fits} open sessions .*${BUDGET}-byte session budget \\(server\\.sessionBytesPerAgent\\)`));

    const alice = await harness.connect(ALICE);
    const stats = await alice.callTool({ name: 'get_execution_stats', arguments: {} });
    const usage = (stats.structuredContent as { server?: { usage?: Record<string, number> } }).server?.usage;
    expect(usage).toMatchObject({ session_bytes: SESSION_BYTES, max_session_bytes: BUDGET });

    // A session that ends gives its bytes back.
    const deleted = await rawRequest(harness.url, { method: 'DELETE', headers: { Authorization: `Bearer ${MALLORY}`, 'Mcp-Session-Id': opened[0]! } });
    expect(deleted.status).toBe(200);
    expect((await initialize(MALLORY)).status).toBe(200);
  }, 60_000);
});
