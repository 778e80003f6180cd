// The worker threads' own socket to the coordinator for awaited host calls (host-link-server.ts,
// workers/kit/host-link.ts). The socket is the attack surface: a connection that does not
// name a registered process with its secret is closed unheard, a connection is only ever routed
// to the process whose secret it named, oversized frames close it, and a dropped process's
// secret stops working. Through real sandboxes: tools calls use the link, answers reach the call
// that asked (two agents alternating on one thread).

import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HostLinkServer } from '../../src/executor/host-link-server.js';
import type { LinkCall } from '../../src/executor/host-link-server.js';
import { silentLogger } from '../../src/util/logger.js';
import { HOST_LINK_WELCOME } from '../../workers/kit/protocol.js';
import { startSandbox } from '../fixtures/escape/sandbox.js';
import type { Sandbox } from '../fixtures/escape/sandbox.js';

/** A raw client of the link: sends lines, collects reply lines, reports when it is closed. */
function client(path: string): { send(line: string): void; lines: string[]; closed: Promise<void> } {
  const socket = net.createConnection(path);
  const lines: string[] = [];
  let buffer = '';
  socket.on('data', (d: Buffer) => {
    buffer += d.toString('utf8');
    for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
      // The coordinator's acceptance of a hello is not a reply.
      if (buffer.slice(0, at) !== HOST_LINK_WELCOME) lines.push(buffer.slice(0, at));
      buffer = buffer.slice(at + 1);
    }
  });
  socket.on('error', () => undefined);
  return { send: (line) => socket.write(`${line}\n`), lines, closed: new Promise((resolve) => socket.once('close', () => resolve())) };
}

const call = (id: number, callId = 1): string => JSON.stringify({ kind: 'host-call', id, key: 'k', callId, method: 'call_tool', args: ['up', 'echo', { id }] });

describe('HostLinkServer', () => {
  let server: HostLinkServer;
  const seen: { owner: string; call: LinkCall }[] = [];
  let alice: ReturnType<HostLinkServer['register']>;
  let bob: ReturnType<HostLinkServer['register']>;

  beforeAll(async () => {
    server = await HostLinkServer.open(64 * 1024, silentLogger());
    const handler = (owner: string) => (c: LinkCall, reply: (r: { kind: 'host-reply'; callId: number; ok: true; value: unknown }) => void) => {
      seen.push({ owner, call: c });
      reply({ kind: 'host-reply', callId: c.callId, ok: true, value: owner });
    };
    alice = server.register(handler('alice-process'));
    bob = server.register(handler('bob-process'));
  });
  afterEach(() => {
    seen.length = 0;
  });
  afterAll(async () => {
    await server.close();
  });

  it('closes a connection that names no registered process, unheard', async () => {
    for (const hello of ['{"hello":"guessed-secret"}', 'not json', JSON.stringify({ hello: 42 }), call(1)]) {
      const c = client(server.path);
      c.send(hello);
      c.send(call(7));
      await c.closed;
      expect(c.lines).toEqual([]);
    }
    expect(seen).toEqual([]);
  });

  it('closes a connection that says nothing within a second', async () => {
    const c = client(server.path);
    const started = Date.now();
    await c.closed;
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('routes a connection only to the process whose secret it named, and answers on it', async () => {
    const a = client(server.path);
    a.send(JSON.stringify({ hello: alice.info.secret }));
    a.send(call(1, 10));
    a.send(call(2, 11));
    await expect.poll(() => a.lines.length).toBe(2);
    expect(a.lines.map((l) => JSON.parse(l) as unknown)).toEqual([
      { kind: 'host-reply', callId: 10, ok: true, value: 'alice-process', id: 1 },
      { kind: 'host-reply', callId: 11, ok: true, value: 'alice-process', id: 2 },
    ]);
    expect(seen.map((s) => s.owner)).toEqual(['alice-process', 'alice-process']);
    // malformed frames after the hello are ignored, not routed
    a.send('{"kind":"host-call","id":"1","callId":1,"method":"x","args":[]}');
    a.send('{"kind":"output","id":1}');
    a.send(call(3, 12));
    await expect.poll(() => a.lines.length).toBe(3);
    expect(seen.map((s) => s.call.id)).toEqual([1, 2, 3]);
  });

  it('closes a connection that sends a frame over the limit', async () => {
    const c = client(server.path);
    c.send(JSON.stringify({ hello: bob.info.secret }));
    c.send(JSON.stringify({ kind: 'host-call', id: 1, key: 'k', callId: 1, method: 'call_tool', args: ['x'.repeat(100 * 1024)] }));
    await c.closed;
    expect(seen).toEqual([]);
  });

  it('a dropped process: its connections close and its secret no longer opens one', async () => {
    const extra = server.register(() => undefined);
    const before = client(server.path);
    before.send(JSON.stringify({ hello: extra.info.secret }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    extra.drop();
    await before.closed;
    const after = client(server.path);
    after.send(JSON.stringify({ hello: extra.info.secret }));
    await after.closed;
  });
});

describe('awaited host calls over the link, in real sandboxes', () => {
  let link: HostLinkServer;
  let sb: Sandbox;

  beforeAll(async () => {
    link = await HostLinkServer.open(1024 * 1024, silentLogger());
    sb = await startSandbox({
      sandbox: { processes: 1, threadsPerProcess: 1 },
      toolNames: ['up.echo', 'up.slow'],
      hostLink: link,
      extensions: {
        call_tool: async ([, tool, args], ctx) => {
          if (tool === 'slow') await new Promise((resolve) => setTimeout(resolve, 300));
          return { agent: ctx.identity.agent, args };
        },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await sb?.close();
    await link?.close();
  });

  it('tools calls go over the link and each answer reaches the agent that asked', async () => {
    await sb.run('return await tools.up.echo({ warm: true })', { agent: 'alice', namespace: 'agent-a' });
    const before = link.calls;
    for (let round = 0; round < 3; round++) {
      const a = await sb.run('const out = []; for (let i = 0; i < 5; i++) out.push(await tools.up.echo({ i })); return out', { agent: 'alice', namespace: 'agent-a' });
      expect(a.result).toEqual([0, 1, 2, 3, 4].map((i) => ({ agent: 'alice', args: { i } })));
      // A call that ends with its slow tool call still out: the answer comes after the end.
      const m = await sb.run('await tools.up.slow({ from: "mallory" }); return 1', { agent: 'mallory', namespace: 'agent-m', timeoutSeconds: 0.1 });
      expect(m.error_type).toBe('TimeoutError');
      const b = await sb.run('return await Promise.all([tools.up.echo({ n: 1 }), tools.up.echo({ n: 2 })])', { agent: 'bob', namespace: 'agent-b' });
      expect(b.result).toEqual([{ agent: 'bob', args: { n: 1 } }, { agent: 'bob', args: { n: 2 } }]);
    }
    expect(link.calls - before).toBeGreaterThanOrEqual(3 * 7);
  });
});
