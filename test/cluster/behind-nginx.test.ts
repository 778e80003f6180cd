// Three daemons behind a real nginx (`hash $http_mcp_session_id consistent`) with a real Redis,
// as `npm run cluster` starts them: sessions spread and stay on their daemon; a skill saved
// through one daemon is importable through another within a second; a workspace file written
// through one is read whole through another; kill -9 of one daemon under load leaves the others'
// sessions untouched while its sessions get 404, re-initialize and go on with their PII tokens;
// Redis stopped and restarted: clear errors, then recovery. (Slow suite: vitest.slow.config.ts.)

import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalCluster } from '../../bench/cluster/local-cluster.js';
import type { LocalCluster } from '../../bench/cluster/local-cluster.js';
import { buildRing, serverFor } from '../../src/cluster/nginx-chash.js';
import { startStdioClient } from '../fixtures/mcp/cli.js';

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef';
const CAROL = 'carol-token-0123456789abcdef';
/** The operator: /healthz gives its figures (sessions, store, problems) only with this token. */
const OPS = 'ops-token-0123456789abcdef';
/** server.maxSessionsPerAgent of the cluster: it must hold across the daemons, not per daemon. */
const MAX_SESSIONS_PER_AGENT = 30;
let cluster: LocalCluster;
const clients: Client[] = [];

interface Connected {
  client: Client;
  sessionId: string;
}

async function connect(url: string, token = ALICE): Promise<Connected> {
  const client = new Client({ name: 'cluster-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  clients.push(client);
  return { client, sessionId: transport.sessionId as string };
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
  return r.structuredContent as Record<string, unknown>;
}

/** A call lost with a dead daemon whose answer had started streaming only ends at the client's timeout. */
const CALL_TIMEOUT_MS = 5_000;

async function run(client: Client, code: string, contextVars?: Record<string, unknown>, timeoutMs = CALL_TIMEOUT_MS): Promise<unknown> {
  const r = await client.callTool({ name: 'execute_code', arguments: { code, language: 'javascript', ...(contextVars ? { context_vars: contextVars } : {}) } }, undefined, { timeout: timeoutMs });
  if (r.isError) throw new Error(`execute_code failed: ${JSON.stringify(r.content)}`);
  const out = r.structuredContent as Record<string, unknown>;
  if (out['success'] !== true) throw new Error(`execute_code failed: ${JSON.stringify(out)}`);
  return out['result'];
}

/** The daemon nginx routes a session id to while all are up. */
function ownerOf(sessionId: string): string {
  return serverFor(buildRing(cluster.daemons.map((d) => d.address)), sessionId) as string;
}

async function health(port: number): Promise<{ sessions: number; store?: { up: boolean }; problems: string[] }> {
  return (await (await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { Authorization: `Bearer ${OPS}` } })).json()) as { sessions: number; store?: { up: boolean }; problems: string[] };
}

beforeAll(async () => {
  const config = path.join(tmpdir(), `cluster-test-${process.pid}.json`);
  writeFileSync(config, JSON.stringify({ agents: [{ name: 'alice', token: ALICE }, { name: 'bob', token: BOB }, { name: 'carol', token: CAROL }, { name: 'ops', token: OPS, permissions: { operator: true } }], server: { maxSessionsPerAgent: MAX_SESSIONS_PER_AGENT } }));
  cluster = await startLocalCluster({ daemons: 3, configFile: config });
});

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await cluster?.stop();
  if (cluster) rmSync(cluster.dir, { recursive: true, force: true });
});

describe('three daemons behind nginx with Redis', () => {
  it('spreads new sessions over the daemons and keeps each on the daemon that created it', async () => {
    const before = await Promise.all(cluster.daemons.map((d) => health(d.port)));
    const sessions: Connected[] = [];
    for (let i = 0; i < 9; i++) sessions.push(await connect(cluster.url));
    for (const s of sessions) for (let k = 0; k < 3; k++) expect(await run(s.client, `return ${k} + 1`)).toBe(k + 1);
    const after = await Promise.all(cluster.daemons.map((d) => health(d.port)));
    cluster.daemons.forEach((d, i) => {
      const mine = sessions.filter((s) => ownerOf(s.sessionId) === d.address).length;
      // Sticky: the daemon holding a session is the one nginx hashes its id to; spread: all get some.
      expect(after[i]!.sessions - before[i]!.sessions).toBe(mine);
      expect(mine).toBeGreaterThan(0);
    });
  });

  it('imports through another daemon, within a second, a skill saved through one', async () => {
    const [d1, d2] = cluster.daemons;
    const one = await connect(d1!.url);
    const two = await connect(d2!.url);
    await call(one.client, 'save_skill', { name: 'greeting', code: "export function hello() { return 'v1'; }", description: 'says hello' });
    expect(await run(two.client, "return (await import_skill('greeting')).hello()")).toBe('v1');
    await call(one.client, 'save_skill', { name: 'greeting', code: "export function hello() { return 'v2'; }", description: 'says hello' });
    const saved = Date.now();
    let seen: unknown;
    while (Date.now() - saved < 3_000 && (seen = await run(two.client, "return (await import_skill('greeting')).hello()")) !== 'v2') await new Promise((r) => setTimeout(r, 20));
    expect(seen).toBe('v2');
    expect(Date.now() - saved).toBeLessThan(1_000);
  });

  it('reads whole through another daemon a workspace file written through one', async () => {
    const [d1, , d3] = cluster.daemons;
    const one = await connect(d1!.url);
    const three = await connect(d3!.url);
    const content = 'line of data 0123456789\n'.repeat(80_000);
    await call(one.client, 'write_workspace_file', { filename: 'shared/big.txt', content });
    const read = await call(three.client, 'read_workspace_file', { filename: 'shared/big.txt' });
    expect(read['size']).toBe(content.length);
    expect(read['content']).toBe(content);
  });

  it('holds server.maxSessionsPerAgent across the daemons, not per daemon', async () => {
    for (let i = 0; i < MAX_SESSIONS_PER_AGENT; i++) await connect(cluster.url, CAROL);
    // Each daemon holds about a third of them; the counts reach the others with the next heartbeat.
    await new Promise((r) => setTimeout(r, 1_500));
    const res = await fetch(cluster.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${CAROL}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    expect(res.status).toBe(429);
    expect(await res.text()).toContain(`already holds ${MAX_SESSIONS_PER_AGENT} open sessions`);
  });

  it('survives kill -9 of a daemon under load: others unaffected, its sessions re-initialize with their PII tokens, no acknowledged write lost', async () => {
    const victim = cluster.daemons[2]!;
    type Worker = { id: number; conn: Connected; onVictim: boolean; token: string; plain: string; errors: string[]; ok: number; recoveredAt?: number };
    /** Workspace files whose write_file call returned: each must be on the shared folder, whole. */
    const acknowledged: string[] = [];
    const workers: Worker[] = [];
    for (let i = 0; workers.filter((w) => w.onVictim).length < 2 || workers.length < 6; i++) {
      if (i > 30) throw new Error('could not place two sessions on the victim');
      const conn = await connect(cluster.url);
      const plain = `write to worker${i}@example.com`;
      const sanitized = await call(conn.client, 'sanitize_pii', { text: plain });
      workers.push({ id: i, conn, onVictim: ownerOf(conn.sessionId) === victim.address, token: String(sanitized['sanitized_text']), plain, errors: [], ok: 0 });
    }
    let stop = false;
    let killedAt = 0;
    const loops = workers.map(async (w) => {
      while (!stop) {
        try {
          const file = `acks/w${w.id}-${w.ok}.txt`;
          expect(await run(w.conn.client, `await write_file(${JSON.stringify(file)}, ${JSON.stringify(file)} + ':' + 'x'.repeat(4000)); return 21 * 2`)).toBe(42);
          acknowledged.push(file);
          w.ok++;
          if (killedAt > 0 && w.errors.length > 0 && w.recoveredAt === undefined) w.recoveredAt = Date.now();
        } catch (error) {
          const status = (error as { code?: unknown }).code;
          const message = `${typeof status === 'number' ? `HTTP ${status}: ` : ''}${error instanceof Error ? error.message : String(error)}`;
          w.errors.push(`${message} [session ${w.conn.sessionId} on ${ownerOf(w.conn.sessionId)}, ${killedAt > 0 ? `${Date.now() - killedAt} ms after the kill` : 'before the kill'}]`);
          // The call in flight at the kill is lost, never acknowledged: nginx answers 502, or, when
          // the answer had started streaming, the client waits for its timeout (the SDK client
          // tries to resume the stream and gets 404). The next call gets 404 for the unknown
          // session, and then the client opens a fresh session through the load balancer (the
          // stdio bridge holds none: its requests stand alone).
          if (status === 404) {
            await w.conn.client.close().catch(() => {});
            w.conn = await connect(cluster.url);
          }
        }
      }
    });
    await new Promise((r) => setTimeout(r, 1_000));
    killedAt = Date.now();
    victim.process.kill('SIGKILL');
    await victim.exited;
    await new Promise((r) => setTimeout(r, CALL_TIMEOUT_MS + 2_000));
    stop = true;
    await Promise.all(loops);

    // Every write a client saw acknowledged is there, whole, read through a surviving daemon.
    const survivor = await connect(cluster.daemons[0]!.url);
    const missing = await run(
      survivor.client,
      "const bad = []; for (const f of FILES) { let got = null; try { got = await read_file(f); } catch {} if (got !== f + ':' + 'x'.repeat(4000)) bad.push(f); } return bad;",
      { FILES: acknowledged },
      30_000,
    );
    expect(acknowledged.length).toBeGreaterThan(100);
    expect(missing).toEqual([]);

    process.stderr.write(`victim ${victim.address}; workers: ${workers.map((w) => `${ownerOf(w.conn.sessionId)}${w.onVictim ? ' (victim)' : ''} ok=${w.ok} errors=${w.errors.length}`).join('; ')}\n`);
    for (const w of workers.filter((x) => !x.onVictim)) expect(w.errors).toEqual([]);
    const moved = workers.filter((w) => w.onVictim);
    for (const w of moved) {
      expect(w.errors.length).toBeGreaterThan(0);
      expect(w.errors.filter((e) => !/^HTTP (404|502)\b|\b502 Bad Gateway|^HTTP -32001: MCP error -32001: Request timed out/.test(e))).toEqual([]);
      expect(w.errors.some((e) => e.startsWith('HTTP 404'))).toBe(true);
      expect(w.recoveredAt).toBeDefined();
      // The vault follows the agent: a token minted before the kill restores in the new session.
      const restored = await call(w.conn.client, 'restore_pii', { text: w.token });
      expect(restored['restored_text']).toBe(w.plain);
    }
    const times = moved.map((w) => (w.recoveredAt as number) - killedAt).sort((a, b) => a - b);
    process.stderr.write(`failover: kill -9 to first successful call of a moved session: ${times.join(' ms, ')} ms (${moved.length} sessions moved)\n`);
    expect(times[times.length - 1]).toBeLessThan(CALL_TIMEOUT_MS + 3_000);
  });

  it('fails PII calls clearly while Redis is down and recovers when it returns', async () => {
    const d1 = cluster.daemons[0]!;
    const conn = await connect(cluster.url, BOB);
    expect((await call(conn.client, 'sanitize_pii', { text: 'bob@example.com' }))['pii_found']).toBe(1);
    await cluster.stopRedis();
    const down = await conn.client.callTool({ name: 'sanitize_pii', arguments: { text: 'bob@example.com' } });
    expect(down.isError).toBe(true);
    expect(JSON.stringify(down.content)).toMatch(/STORE_UNAVAILABLE|unavailable.*Redis/);
    // Code that needs no shared state still runs.
    expect(await run(conn.client, 'return 7')).toBe(7);
    const h = await health(d1.port);
    expect(h.store?.up).toBe(false);
    expect(h.problems.join(' ')).toMatch(/Redis/);
    await cluster.startRedis();
    const deadline = Date.now() + 10_000;
    let back = false;
    while (!back && Date.now() < deadline) {
      const r = await conn.client.callTool({ name: 'sanitize_pii', arguments: { text: 'bob@example.com' } });
      back = r.isError !== true;
      if (!back) await new Promise((res) => setTimeout(res, 100));
    }
    expect(back).toBe(true);
    expect((await health(d1.port)).store?.up).toBe(true);
  });
  it('keeps a stdio bridge working when a daemon it used is killed, PII tokens included', async () => {
    const alive = cluster.daemons.filter((d) => d.process.exitCode === null && d.process.signalCode === null);
    expect(alive.length).toBeGreaterThanOrEqual(2);
    const before = await Promise.all(alive.map((d) => health(d.port)));
    const bridge = await startStdioClient({ ...(process.env as Record<string, string>), CODE_EXEC_TOKEN: ALICE, CODE_EXEC_LOG_FORMAT: 'json' }, ['--connect', cluster.url]);
    try {
      const sanitized = await bridge.client.callTool({ name: 'sanitize_pii', arguments: { text: 'mail bridge@example.com' } });
      const token = String((sanitized.structuredContent as { sanitized_text: string }).sanitized_text);
      // The bridge speaks the stateless revision: no daemon holds a session for it, so nginx
      // spreads its requests and any daemon may go.
      const after = await Promise.all(alive.map((d) => health(d.port)));
      expect(after.map((h) => h.sessions)).toEqual(before.map((h) => h.sessions));
      const victim = alive[0]!;
      victim.process.kill('SIGKILL');
      await victim.exited;
      const r = await bridge.client.callTool({ name: 'execute_code', arguments: { code: 'return 6 * 7', language: 'javascript' } });
      expect((r.structuredContent as { result?: unknown }).result).toBe(42);
      const restored = await bridge.client.callTool({ name: 'restore_pii', arguments: { text: token } });
      expect((restored.structuredContent as { restored_text: string }).restored_text).toBe('mail bridge@example.com');
    } finally {
      await bridge.close();
    }
  });
});
