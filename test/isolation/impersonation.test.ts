// Attack class: acting as another agent. A session opened by one token is useless with another
// (POST, GET stream, DELETE), and one agent's PII tokens never restore in another agent's session.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIALIZE, MCP_POST_HEADERS, rawRequest } from '../fixtures/mcp/http-harness.js';
import { agent, expectNoSecret, run, startIsolationDaemon, tool, value } from './helpers.js';
import type { IsolationDaemon } from './helpers.js';

const ALICE = agent('alice');
const MALLORY = agent('mallory');
const EMAIL = 'alice.private.person@example.org';

let d: IsolationDaemon;
let alice: Client;
let mallory: Client;

beforeAll(async () => {
  d = await startIsolationDaemon({ agents: [ALICE, MALLORY], processes: 1 });
  [alice, mallory] = await Promise.all([d.client('alice'), d.client('mallory')]);
}, 60_000);

afterAll(async () => {
  await d?.stop();
});

/** Opens a raw MCP session with this token; returns its id. */
async function openSession(token: string): Promise<string> {
  const headers = { ...MCP_POST_HEADERS, Authorization: `Bearer ${token}` };
  const init = await rawRequest(d.daemon.url, { method: 'POST', headers, body: JSON.stringify(INITIALIZE) });
  const id = init.headers['mcp-session-id'];
  if (typeof id !== 'string') throw new Error(`no session id (status ${init.status}): ${init.body}`);
  await rawRequest(d.daemon.url, { method: 'POST', headers: { ...headers, 'mcp-session-id': id, 'mcp-protocol-version': INITIALIZE.params.protocolVersion }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  return id;
}

function call(token: string, session: string, name: string, args: Record<string, unknown>): Promise<{ status: number; body: string }> {
  const headers = { ...MCP_POST_HEADERS, Authorization: `Bearer ${token}`, 'mcp-session-id': session, 'mcp-protocol-version': INITIALIZE.params.protocolVersion };
  return rawRequest(d.daemon.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } }) });
}

/** A tools/call answered with a result (not refused at HTTP or JSON-RPC level). */
function served(answer: { status: number; body: string }): boolean {
  return answer.status === 200 && /"result"\s*:/.test(answer.body);
}

describe("another agent's session", () => {
  it('refuses a session id of one agent used with the token of another', async () => {
    await value(alice, 'write_file("diary.txt", ' + JSON.stringify(EMAIL) + '); return 1');
    const session = await openSession(ALICE.token);
    expect(served(await call(ALICE.token, session, 'list_workspace_files', {})), 'the owner uses its session').toBe(true);
    const attempts = [
      await call(MALLORY.token, session, 'read_workspace_file', { filename: 'diary.txt' }),
      await call(MALLORY.token, session, 'execute_code', { code: 'return read_file("diary.txt")' }),
      await call(MALLORY.token, session, 'write_workspace_file', { filename: 'planted.txt', content: 'mallory' }),
    ];
    for (const attempt of attempts) {
      expect(served(attempt), `served: ${attempt.status} ${attempt.body.slice(0, 200)}`).toBe(false);
      expectNoSecret(attempt.body, [EMAIL]);
    }
    expect(await value(alice, 'return list_files()')).toEqual(['diary.txt']);
  }, 60_000);

  it("cannot listen on or close another agent's session", async () => {
    const session = await openSession(ALICE.token);
    const headers = { Authorization: `Bearer ${MALLORY.token}`, 'mcp-session-id': session, Accept: 'text/event-stream', 'mcp-protocol-version': INITIALIZE.params.protocolVersion };
    const controller = new AbortController();
    const listen = await fetch(d.daemon.url, { method: 'GET', headers, signal: controller.signal });
    expect(listen.status, 'GET stream of another agent').toBeGreaterThanOrEqual(400);
    controller.abort();
    const close = await rawRequest(d.daemon.url, { method: 'DELETE', headers: { Authorization: `Bearer ${MALLORY.token}`, 'mcp-session-id': session } });
    expect(close.status, 'DELETE of another agent session').toBeGreaterThanOrEqual(400);
    expect(served(await call(ALICE.token, session, 'list_workspace_files', {})), 'the owner still has its session').toBe(true);
  }, 60_000);
});

describe("another agent's PII tokens", () => {
  it('never restore, over MCP or from code', async () => {
    const sanitized = await tool(alice, 'sanitize_pii', { text: `write to ${EMAIL}` });
    const token = String(sanitized.structured?.['sanitized_text'] ?? '').match(/\[EMAIL_[0-9a-f]+\]/)?.[0];
    expect(token, sanitized.text).toBeDefined();
    const fromCode = (await value(alice, `return tokenize_pii(${JSON.stringify(EMAIL)})`)) as unknown;
    const codeToken = JSON.stringify(fromCode).match(/\[EMAIL_[0-9a-f]+\]/)?.[0];
    expect(codeToken).toBeDefined();
    // The owner can restore them.
    expect(JSON.stringify((await tool(alice, 'restore_pii', { text: String(token) })).structured)).toContain(EMAIL);
    const tries = [
      await tool(mallory, 'restore_pii', { text: `${token} ${codeToken}` }),
      await run(mallory, `return [detokenize_pii(${JSON.stringify(`${token} ${codeToken}`)})]`),
      await tool(mallory, 'sanitize_pii', { text: `write to ${EMAIL}` }),
    ];
    expectNoSecret(tries.slice(0, 2), [EMAIL]);
    // The same value gets another token in mallory's session: tokens do not link agents.
    expect(JSON.stringify(tries[2])).not.toContain(String(token));
  }, 60_000);
});
