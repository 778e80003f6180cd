// Attack class: the SSE event budget shared without fairness. Every session's resumable events
// draw on one daemon-wide byte budget; one agent with many sessions and big results filled it,
// after which another agent's answers were not kept and its dropped stream could not resume.
// Now each agent holds at most its share, and an agent under its fair share takes room back from
// the agent most over it.

import http from 'node:http';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agent, run, startIsolationDaemon } from './helpers.js';
import type { IsolationDaemon } from './helpers.js';

const BETA_TOKEN = 'isolation-beta-token-0123456789abcdef';
let d: IsolationDaemon;

beforeAll(async () => {
  // Results of 1 MB inline (an event holds the text twice, 2 bytes a character): the 128 MiB event
  // budget fills in about 40 calls, leaving less room than the victim's 1.4 MB answer needs.
  d = await startIsolationDaemon({ agents: [agent('alpha'), agent('beta')], processes: 1, config: { limits: { maxOutputChars: 2_000_000 } } });
}, 120_000);

afterAll(async () => {
  await d?.stop();
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function post(body: unknown, headers: Record<string, string>): Promise<Answer> {
  return request('POST', headers, JSON.stringify(body));
}

/** A request; a GET (an event stream that stays open) is answered once `until` shows up in it. */
function request(method: string, headers: Record<string, string>, body?: string, until?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${d.daemon.base}/mcp`, { method, headers: { Authorization: `Bearer ${BETA_TOKEN}`, Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
        if (until !== undefined && text.includes(until)) {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text });
          req.destroy();
        }
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      // A stream that replays nothing stays open: what came within the bound is the answer.
      if (until !== undefined) {
        setTimeout(() => {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text });
          req.destroy();
        }, 15_000).unref();
      }
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The ids of an SSE body's events, in order. */
function eventIds(body: string): string[] {
  return [...body.matchAll(/^id: ?(.+)$/gm)].map((m) => m[1]!.trim());
}

describe('SSE events per agent', () => {
  it("one agent filling the event budget leaves another agent's answers resumable", async () => {
    const sessions: Client[] = [];
    for (let i = 0; i < 18; i++) sessions.push(await d.daemon.connect('isolation-alpha-token-0123456789abcdef'));
    await Promise.all(
      sessions.map(async (c) => {
        for (let i = 0; i < 5; i++) expect((await run(c, "return 'x'.repeat(1_000_000)", 'javascript', 60)).success).toBe(true);
      }),
    );

    const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'victim', version: '1' } } }, {});
    const session = String(init.headers['mcp-session-id']);
    const headers = { 'Mcp-Session-Id': session, 'Mcp-Protocol-Version': '2025-11-25' };
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
    const call = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'execute_code', arguments: { code: "return 'beta-answer-' + 'y'.repeat(1_400_000)" } } }, headers);
    expect(call.body).toContain('beta-answer-');
    const [priming] = eventIds(call.body);
    expect(priming).toBeDefined();
    // A client whose stream dropped right after the priming event asks for what it missed.
    const resumed = await request('GET', { ...headers, 'Last-Event-ID': priming! }, undefined, 'beta-answer-');
    expect(resumed.body, `resume answered ${resumed.status}`).toContain('beta-answer-');

    const stats = await sessions[0]!.callTool({ name: 'get_execution_stats', arguments: {} });
    const usage = (stats.structuredContent as { server?: { usage?: { event_bytes?: number; session_bytes?: number; max_session_bytes?: number } } }).server?.usage;
    expect(usage?.event_bytes).toBeGreaterThan(0);
    // Its events and its open sessions share one byte budget.
    expect((usage?.event_bytes ?? 0) + (usage?.session_bytes ?? 0)).toBeLessThanOrEqual(usage?.max_session_bytes ?? 0);
    for (const c of sessions) await c.close();
  }, 240_000);
});
