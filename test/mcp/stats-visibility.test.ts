// Stats split by agent: get_execution_stats shows an agent its own calls and latency and nothing
// of other agents' activity; the operator gets daemon-wide figures; /metrics needs the operator.
import { afterEach, describe, expect, it } from 'vitest';
import type { Config, Permissions } from '../../src/config/config-types.js';
import { FULL_PERMISSIONS } from '../fixtures/config.js';
import { buildServices, connectInMemory } from '../fixtures/mcp/harness.js';
import { startHttpHarness } from '../fixtures/mcp/http-harness.js';
import type { HttpHarness } from '../fixtures/mcp/http-harness.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

type Stats = Record<string, Record<string, unknown>>;

describe('get_execution_stats', () => {
  async function threeAgents(): Promise<Record<'alice' | 'bob' | 'root', { call(name: string, args?: Record<string, unknown>): Promise<Stats> }>> {
    const { services } = await buildServices();
    const agents: [string, Permissions][] = [
      ['alice', FULL_PERMISSIONS],
      ['bob', FULL_PERMISSIONS],
      ['root', { ...FULL_PERMISSIONS, operator: true }],
    ];
    const out: Record<string, { call(name: string, args?: Record<string, unknown>): Promise<Stats> }> = {};
    for (const [name, permissions] of agents) {
      const s = await connectInMemory(services, { sessionId: `${name}-1`, name, workspaceNamespace: name, permissions });
      closers.push(() => s.close());
      out[name] = { call: async (tool, args = {}) => (await s.client.callTool({ name: tool, arguments: args })).structuredContent as Stats };
    }
    return out as Record<'alice' | 'bob' | 'root', (typeof out)[string]>;
  }

  it('shows an agent its own calls and latency, and none of the pool activity or other agents', async () => {
    const { alice, bob } = await threeAgents();
    await alice.call('execute_code', { code: 'return 1' });
    await alice.call('execute_code', { code: 'throw new Error("x")' });
    await alice.call('write_workspace_file', { filename: 'a.txt', content: 'hi' });
    await bob.call('execute_code', { code: 'return 2' });

    const stats = await bob.call('get_execution_stats');
    expect(stats['scope']).toBe('agent');
    expect(stats['calls']).toMatchObject({ agent: 'bob', by_outcome: { ok: 1 }, by_tool: { execute_code: { ok: 1 } } });
    expect(stats['calls']?.['execute_latency']).toMatchObject({ count: 1, p50_ms: expect.any(Number) as unknown });
    expect(stats['calls']).not.toHaveProperty('by_agent');
    expect(JSON.stringify(stats)).not.toContain('alice');
    expect(JSON.stringify(stats)).not.toContain('write_workspace_file');
    expect(Object.keys(stats['pool'] ?? {}).sort()).toEqual(['processes', 'threads']);
    expect(stats['server']).not.toHaveProperty('sessions');

    const own = await alice.call('get_execution_stats');
    expect(own['calls']).toMatchObject({ by_outcome: { ok: 2, error: 1 } });
  });

  it('gives the operator every agent\'s counters and the pool activity', async () => {
    const { alice, bob, root } = await threeAgents();
    await alice.call('execute_code', { code: 'return 1' });
    await bob.call('execute_code', { code: 'throw new Error("x")' });
    const stats = await root.call('get_execution_stats');
    expect(stats['scope']).toBe('daemon');
    expect(stats['calls']?.['by_outcome']).toMatchObject({ ok: 1, error: 1 });
    expect(stats['calls']?.['by_agent']).toMatchObject({ alice: { ok: 1 }, bob: { error: 1 } });
    expect(stats['pool']).toMatchObject({ completed: 1, failed: 1, queue: 0 });
  });
});

describe('/metrics', () => {
  let h: HttpHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  const OPERATOR = 'token-operator-0123456789abcdef';
  const AGENT = 'token-agent-0123456789abcdef000';
  const withAgents = (c: Config): void => {
    c.agents = [
      { name: 'ops', token: OPERATOR, permissions: { ...FULL_PERMISSIONS, operator: true } },
      { name: 'worker', token: AGENT, permissions: FULL_PERMISSIONS },
    ];
  };

  it('refuses an agent without the operator permission with 403 naming it, and serves the operator', async () => {
    h = await startHttpHarness({ configure: withAgents });
    const worker = await h.connect(AGENT);
    await worker.callTool({ name: 'execute_code', arguments: { code: 'return 1' } });

    const denied = await fetch(`${h.base}/metrics`, { headers: { Authorization: `Bearer ${AGENT}` } });
    expect(denied.status).toBe(403);
    expect(denied.headers.get('content-type')).toMatch(/application\/json/);
    expect(((await denied.json()) as { error: string }).error).toMatch(/needs the operator permission; agent "worker" does not have it.*"operator": true/);

    const allowed = await fetch(`${h.base}/metrics`, { headers: { Authorization: `Bearer ${OPERATOR}` } });
    expect(allowed.status).toBe(200);
    const text = await allowed.text();
    expect(text).toContain('code_exec_agent_calls_total{agent="worker",outcome="ok"} 1');
    expect(text).toContain('code_exec_http_refused_total{reason="forbidden"} 1');
  });
});
