// Attack class: connections shared without fairness. On loopback every local agent comes from
// 127.0.0.1, so a per-address cap is a cap on all of them together: one agent holding 600 idle,
// slow or busy connections locked every other agent out (new clients got 503, and existing
// clients' keep-alive connections were closed to make room). Now an agent holds at most its share
// (server.maxConnectionsPerAgent) and connections that never carried a request are closed first.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSocket } from '../resilience/helpers.js';
import { rawRequest } from '../fixtures/mcp/http-harness.js';
import { agent, run, startIsolationDaemon } from './helpers.js';
import type { IsolationDaemon } from './helpers.js';

const ALPHA_TOKEN = 'isolation-alpha-token-0123456789abcdef';
const PER_AGENT = 64;
let d: IsolationDaemon;

beforeAll(async () => {
  d = await startIsolationDaemon({ agents: [agent('alpha'), agent('beta')], processes: 1, config: { server: { maxConnectionsPerAgent: PER_AGENT } } });
}, 120_000);

afterAll(async () => {
  await d?.stop();
});

describe('connections per agent on loopback', () => {
  it("one agent's 600 idle, slow and busy connections do not lock another agent out", async () => {
    const beta = await d.client('beta');
    expect((await run(beta, 'return 1 + 1')).result).toBe(2);
    const port = d.daemon.port;
    const post = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${ALPHA_TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{`;
    const sockets = [];
    for (let i = 0; i < 600; i++) {
      const s = await openSocket(port);
      // A third idle (nothing sent), a third slow (headers never end), a third busy (a body that never ends).
      if (i % 3 === 1) s.socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow: `);
      if (i % 3 === 2) s.socket.write(post);
      sockets.push(s);
    }
    await new Promise((r) => setTimeout(r, 300));
    try {
      // The existing session keeps working, and a new client of the other agent gets in.
      for (let i = 0; i < 5; i++) expect((await run(beta, `return ${i} * 2`)).result).toBe(i * 2);
      const fresh = await d.daemon.connect('isolation-beta-token-0123456789abcdef');
      expect((await run(fresh, 'return "in"')).result).toBe('in');
      await fresh.close();
      // The attacker's busy connections past its share were refused with the option named.
      const refused = sockets.filter((s) => s.received().includes('maxConnectionsPerAgent'));
      expect(refused.length).toBeGreaterThan(0);
      expect(refused[0]?.received()).toMatch(/^HTTP\/1\.1 503/);
      const stats = await beta.callTool({ name: 'get_execution_stats', arguments: {} });
      const usage = (stats.structuredContent as { server?: { usage?: { connections?: number; max_connections?: number } } }).server?.usage;
      expect(usage?.max_connections).toBe(PER_AGENT);
      expect(usage?.connections).toBeGreaterThan(0);
      expect(usage?.connections).toBeLessThanOrEqual(PER_AGENT);
      const health = await rawRequest(`${d.daemon.base}/healthz`, {});
      expect(health.status).toBe(200);
    } finally {
      for (const s of sockets) s.socket.destroy();
    }
  }, 120_000);
});
