// GET /healthz always answers the documented shape, and says to strangers only whether the daemon
// serves: while the pools start it is {"status": "starting"} (not a JSON-RPC error), and on a
// daemon with tokens a caller without the operator's token (none, or another agent's) learns the
// status and what warms, never call counts, sessions, upstream server names or failure text with
// host paths. The operator's token gets every figure; `status` with it keeps working.

import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { bindPort } from '../../src/mcp/http/bind-port.js';
import type { BoundPort } from '../../src/mcp/http/bind-port.js';
import { scratch, startDaemon } from '../fixtures/mcp/cli.js';
import type { Daemon, Scratch } from '../fixtures/mcp/cli.js';

const OPERATOR = 'healthz-operator-token-0123456789';
const ALICE = 'healthz-alice-token-0123456789ab';
const BOB = 'healthz-bob-token-0123456789abcd';
/** A host path in an upstream server's failure: operator detail, never public. */
const SECRET_PATH = '/srv/private/upstream-secret-path';

let home: Scratch | undefined;
let daemon: Daemon | undefined;
let bound: BoundPort | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  home?.remove();
  home = undefined;
  bound?.server.close();
  bound = undefined;
});

async function health(base: string, token?: string): Promise<{ status: number; body: Record<string, unknown>; text: string }> {
  const res = await fetch(`${base}/healthz`, token ? { headers: { Authorization: `Bearer ${token}` } } : {});
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Record<string, unknown>, text };
}

describe('/healthz', () => {
  it('answers {"status": "starting"} with what warms while the pools start, not a JSON-RPC error', async () => {
    bound = await bindPort({ host: '127.0.0.1', port: 0, authToken: undefined, agents: [] });
    const r = await health(bound.info.url.replace(/\/mcp$/, ''));
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ status: 'starting', warming: ['javascript'] });
  });

  it('tells strangers and other agents only whether it serves; the operator gets the figures', async () => {
    home = scratch();
    const config = home.writeConfig({
      mcpServers: { broken: { command: process.execPath, args: [`${SECRET_PATH}/server.js`] } },
      agents: [
        { name: 'ops', token: OPERATOR, permissions: { operator: true } },
        { name: 'alice', token: ALICE, permissions: { workspace: 'read-write' } },
        { name: 'bob', token: BOB, permissions: { workspace: 'read-write' } },
      ],
    });
    daemon = await startDaemon(home.env, ['--config', config]);
    // Two agents are busy: a stranger must not be able to watch that.
    for (const token of [ALICE, BOB]) {
      const client = await daemon.connect(token);
      await client.callTool({ name: 'execute_code', arguments: { code: 'return 1', language: 'javascript' } });
    }
    const operator = await health(daemon.base, OPERATOR);
    expect(operator.body).toMatchObject({ sessions: 2, pool: { completed: 2 }, upstream: { servers: { broken: expect.any(String) } } });
    expect(operator.text).toContain('"broken"');

    for (const token of [undefined, ALICE, 'not-a-token-at-all-0123456789']) {
      const r = await health(daemon.base, token);
      expect(r.status, String(token)).toBe(200);
      expect(r.body).toEqual({ status: operator.body['status'], details: "figures and problems need the operator's token (Authorization: Bearer <token>)" });
      for (const leak of ['broken', SECRET_PATH, 'alice', 'bob', 'completed', 'sessions', 'version']) expect(r.text, String(token)).not.toContain(leak);
    }

    const out = new PassThrough();
    let text = '';
    out.on('data', (c: Buffer) => (text += c.toString()));
    await main({ argv: ['status', '--url', daemon.base, '--token', OPERATOR], env: {}, cwd: process.cwd(), stdin: new PassThrough(), stdout: out, stderr: new PassThrough() });
    expect(text).toMatch(/\n {2}broken +\w+/);
    expect(text).toMatch(/\nagents:\n/);
    const stranger = new PassThrough();
    let public_ = '';
    stranger.on('data', (c: Buffer) => (public_ += c.toString()));
    await main({ argv: ['status', '--url', daemon.base], env: {}, cwd: process.cwd(), stdin: new PassThrough(), stdout: stranger, stderr: new PassThrough() });
    expect(public_).toBe(`code-execution-mcp at ${daemon.base}: ${String(operator.body['status']).toUpperCase()}\nnote: figures, problems, agents and upstream servers need the operator's token: pass --token or set CODE_EXEC_TOKEN\n`);
  }, 60_000);
});
