// Red team of the worker threads' host link (src/executor/host-link-server.ts,
// workers/kit/host-link.ts), against real sandboxes of 1 process x 1 thread, so attacker and
// victim share the thread. The read cache's attacks are in read-cache-attacks.test.ts.
//
// Holes found (regressions marked HOLE):
// 1. host-link-server.ts: before a connection named its process, its first line could be as long
//    as a call's frame (6 x the argument limit + 1 MB, tens of MB by default): any local
//    connection could make the coordinator buffer and JSON.parse that much, unauthenticated.
//    Now the hello line is bounded (1 KB); the call-sized bound applies only after it.
// 2. call-scope.ts: the size check counted `{}` as 0 characters, so arguments made of empty
//    objects passed it yet made a frame past the link's bound: the coordinator closed the
//    thread's link, the call was lost (it hung to its time limit) and every later call on that
//    thread, any agent's, lost the link. `{}` now counts as its 2 characters.
// 3. sandbox-process.ts: the secret went to the sandbox process in argv, which every local user
//    reads in /proc/PID/cmdline. It now goes in the environment (own user only), and pool-host.ts
//    takes it out of its environment before any worker thread starts.
// 4. host-link.ts: a thread took its link for up as soon as the socket connected, before the
//    coordinator accepted its hello: calls written then to a link the coordinator refused (its
//    hello timer fired while it was stalled) were lost, and the guest waited to its time limit.
//    The coordinator now answers an accepted hello; calls use the link only after that.
// 5. host-link-server.ts: connections were unbounded: a sandbox process out of its Compartment
//    (it holds its secret), or anything reaching the socket, could open them until the
//    coordinator ran out of descriptors. Now a secret names at most 2 x threads + 2 at once, and
//    at most 256 connections may be waiting to say their hello.

import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxHostArgChars } from '../../src/executor/index.js';
import { HostLinkServer } from '../../src/executor/host-link-server.js';
import { silentLogger } from '../../src/util/logger.js';
import { WorkerHostLink } from '../../workers/kit/host-link.js';
import { startSandbox, textOf } from '../fixtures/escape/sandbox.js';
import type { Sandbox } from '../fixtures/escape/sandbox.js';

const MB = 1024 * 1024;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A link server like createExecutor's, that remembers the secrets it hands out. */
async function spiedLink(maxFileBytes: number): Promise<{ link: HostLinkServer; secrets: string[] }> {
  const link = await HostLinkServer.open(6 * maxHostArgChars({ maxFileBytes }) + MB, silentLogger());
  const secrets: string[] = [];
  const register = link.register.bind(link);
  link.register = (...args: Parameters<HostLinkServer['register']>) => {
    const place = register(...args);
    secrets.push(place.info.secret);
    return place;
  };
  return { link, secrets };
}

describe('host link: guest code, local processes and malformed frames', () => {
  const maxFileBytes = MB;
  let sb: Sandbox;
  let link: HostLinkServer;
  let secrets: string[];

  beforeAll(async () => {
    ({ link, secrets } = await spiedLink(maxFileBytes));
    sb = await startSandbox({
      sandbox: { processes: 1, threadsPerProcess: 1 },
      limits: { maxFileBytes },
      toolNames: ['up.echo', 'up.slow'],
      hostLink: link,
      extensions: {
        call_tool: async ([, tool, args], ctx) => {
          if (tool === 'slow') await sleep(800);
          return { agent: ctx.identity.agent, args };
        },
      },
    });
    // The thread's link is up once a tools call went over it.
    for (let i = 0; i < 50 && link.calls === 0; i++) {
      await sb.run('return await tools.up.echo({ warm: 1 })');
      await sleep(20);
    }
    if (link.calls === 0) throw new Error('the link never came up');
  }, 60_000);
  afterAll(async () => {
    await sb?.close();
    await link?.close();
  });

  it('guest JavaScript finds neither the secret nor the socket (process, stacks, Function, import, host errors)', async () => {
    const probe = `
      const out = [];
      const tryIt = (name, f) => { try { out.push(name + '=' + String(f())); } catch (e) { out.push(name + '!' + String(e && e.stack)); } };
      tryIt('process', () => typeof process === 'undefined' ? 'none' : JSON.stringify([process.argv, process.env]));
      tryIt('globals', () => Reflect.ownKeys(globalThis).map(String).join());
      tryIt('Function', () => Function('return typeof process === "undefined" ? "none" : JSON.stringify(process.argv)')());
      tryIt('ctor', () => String((async () => {}).constructor.constructor('return this')() === globalThis));
      tryIt('stack', () => new Error('x').stack);
      tryIt('hostStack', () => read_file('../../../proc/self/cmdline'));
      tryIt('environ', () => read_file('/proc/self/environ'));
      tryIt('importViaFunction', () => Function('return import("node:worker_threads")')());
      try { await tools.up.slow({ x: 1 }, 2, 3); } catch (e) { out.push(String(e.stack)); }
      return out;`;
    const r = await sb.run(probe, { timeoutSeconds: 5 });
    expect(r.success, textOf(r)).toBe(true);
    const text = textOf(r);
    expect(secrets.length).toBeGreaterThan(0);
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toContain(path.dirname(link.path));
    // import() of a host module is refused outright.
    const imported = await sb.run('const m = await import("node:worker_threads"); return JSON.stringify(m.workerData)');
    expect(imported.success).toBe(false);
    for (const secret of secrets) expect(textOf(imported)).not.toContain(secret);
  });

  it('another local user cannot reach the socket (0700 folder)', () => {
    expect(statSync(path.dirname(link.path)).mode & 0o777).toBe(0o700);
    const script = `const s = require('net').createConnection(${JSON.stringify(link.path)});
      s.on('connect', () => { console.log('connected'); process.exit(0); });
      s.on('error', (e) => { console.log(e.code); process.exit(0); });`;
    const r = spawnSync('/usr/bin/node', ['-e', script], { uid: 65534, gid: 65534, encoding: 'utf8', timeout: 10_000 });
    expect(r.stdout.trim()).toBe('EACCES');
  });

  it('HOLE: no other local user can read the secret from a process listing (argv)', () => {
    expect(secrets.length).toBeGreaterThan(0);
    const listing = spawnSync('/bin/sh', ['-c', 'cat /proc/[0-9]*/cmdline 2>/dev/null | tr "\\0" "\\n"'], { uid: 65534, gid: 65534, encoding: 'utf8', maxBuffer: 64 * MB });
    expect(listing.stdout).toContain('pool-host');
    for (const secret of secrets) expect(listing.stdout).not.toContain(secret);
  });

  it('HOLE: an unauthenticated connection cannot make the coordinator buffer a call-sized first line', async () => {
    const before = link.calls;
    const socket = net.createConnection(link.path);
    socket.on('error', () => undefined);
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
    await new Promise((resolve) => socket.once('connect', resolve));
    const started = Date.now();
    // 2 MB without a newline, in 64 KB pieces: far under the call frame bound (~7 MB here).
    const piece = Buffer.alloc(64 * 1024, 0x61);
    for (let i = 0; i < 32 && !socket.destroyed; i++) socket.write(piece);
    const closedAt = await closed;
    // Refused as soon as the would-be hello outgrew a hello, not after the 1 s hello timer.
    expect(closedAt - started).toBeLessThan(700);
    expect(socket.bytesWritten).toBeLessThan(2 * MB);
    expect(link.calls).toBe(before);
    // A flood of such connections leaves the daemon serving.
    const flood = Array.from({ length: 50 }, () => {
      const s = net.createConnection(link.path);
      s.on('error', () => undefined);
      s.on('connect', () => s.write(Buffer.alloc(256 * 1024, 0x62)));
      return new Promise<void>((resolve) => s.once('close', () => resolve()));
    });
    const during = await sb.run('return await tools.up.echo({ during: 1 })', { agent: 'bob', namespace: 'agent-b' });
    expect(during.result).toEqual({ agent: 'bob', args: { during: 1 } });
    await Promise.all(flood);
  });

  it('HOLE: arguments of empty objects cannot pass the size check and kill the thread\'s link', async () => {
    const attack = await sb.run(
      // fetch's URL (a string, JSON-escaped to 6 bytes a character) plus 1 M `{}` (3 bytes each).
      `const url = '\\u0001'.repeat(${maxFileBytes - 16 * 1024});
      try { await fetch(url, { a: new Array(${maxFileBytes}).fill({}) }); return 'answered'; } catch (e) { return 'refused ' + e.name; }`,
      { agent: 'mallory', namespace: 'agent-m', timeoutSeconds: 4 },
    );
    // Refused in the worker (RangeError), not lost on a link the coordinator closed (TimeoutError).
    expect(attack.result, textOf(attack).slice(0, 300)).toBe('refused RangeError');
    // The next agent on the thread still has the link.
    const before = link.calls;
    const bob = await sb.run('return [await tools.up.echo({ n: 1 }), await tools.up.echo({ n: 2 })]', { agent: 'bob', namespace: 'agent-b' });
    expect(bob.result).toEqual([{ agent: 'bob', args: { n: 1 } }, { agent: 'bob', args: { n: 2 } }]);
    expect(link.calls - before).toBe(2);
  }, 30_000);

  it('a late answer to a call whose worker was replaced mid-call reaches no one', async () => {
    const m = await sb.run('tools.up.slow({ secret: "mallory" }); for (;;) {}', { agent: 'mallory', namespace: 'agent-m', timeoutSeconds: 0.3 });
    expect(m.error_type).toBe('TimeoutError');
    const seen: unknown[] = [];
    const deadline = Date.now() + 1500;
    while (Date.now() < deadline) {
      const b = await sb.run('const r = []; for (let i = 0; i < 3; i++) r.push(await tools.up.echo({ i })); await new Promise((r) => setTimeout(r, 50)); return r', { agent: 'bob', namespace: 'agent-b' });
      seen.push(b.result);
      expect(b.result).toEqual([0, 1, 2].map((i) => ({ agent: 'bob', args: { i } })));
    }
    expect(JSON.stringify(seen)).not.toContain('mallory');
  }, 30_000);
});

describe('host link: Python sandboxes', () => {
  let sb: Sandbox;
  let link: HostLinkServer;
  let secrets: string[];
  /** Connections to the link's socket (the listener and each accepted one name its path). */
  const linkSockets = (): number => readFileSync('/proc/net/unix', 'utf8').split('\n').filter((l) => l.endsWith(` ${link.path}`)).length;

  beforeAll(async () => {
    ({ link, secrets } = await spiedLink(MB));
    sb = await startSandbox({ sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 1 }, hostLink: link, toolNames: ['up.echo'], extensions: { call_tool: async ([, , args]) => args } });
  }, 180_000);
  afterAll(async () => {
    await sb?.close();
    await link?.close();
  });

  it("Python's thread serves its calls over its own link, and Python code finds neither the secret nor the socket", async () => {
    for (let i = 0; i < 50 && link.calls === 0; i++) {
      await sb.run('return await tools.up.echo({ warm: 1 })');
      await sleep(20);
    }
    const probe = [
      'out = []',
      'for name in ("js", "pyodide_js", "pyodide", "_pyodide"):',
      '    try:',
      '        m = __import__(name)',
      '        out.append(name + "=" + repr(dir(m))[:2000])',
      '    except BaseException as e:',
      '        out.append(name + "!" + repr(e))',
      'import sys',
      'out.append(repr(sorted(sys.modules))[:5000])',
      'print("\\n".join(out))',
    ].join('\n');
    const r = await sb.run(probe, { language: 'python' as 'javascript', timeoutSeconds: 20 });
    expect(r.success, textOf(r).slice(0, 500)).toBe(true);
    // Both processes are registered on the link (Python's on demand): every call travels on it.
    expect(secrets.length).toBe(2);
    for (const secret of secrets) expect(textOf(r)).not.toContain(secret);
    expect(textOf(r)).not.toContain(link.path);
    // The listener, the JavaScript thread's connection and the Python thread's (no standby before a swap).
    expect(linkSockets()).toBe(3);
  }, 60_000);
});

describe('host link: the worker side when the coordinator refuses', () => {
  it('HOLE: a link the coordinator refused (or has not yet accepted) never takes a call', async () => {
    const link = await HostLinkServer.open(MB, silentLogger());
    const served: number[] = [];
    const place = link.register((c, reply) => {
      served.push(c.callId);
      reply({ kind: 'host-reply', callId: c.callId, ok: true, value: null });
    });
    try {
      const msg = (callId: number) => ({ kind: 'host-call' as const, id: 1, key: 'k', callId, method: 'call_tool', args: [] });
      // A refused hello (as after the coordinator's hello timer fired while it was stalled).
      const refused = new WorkerHostLink({ path: link.path, secret: 'not-registered' }, 1);
      const taken: number[] = [];
      for (let i = 1; i <= 400; i++) {
        if (refused.send(msg(i))) taken.push(i);
        await new Promise((resolve) => setImmediate(resolve));
      }
      // Every call it said it sent is lost: none may be taken (the caller then uses the pool host).
      expect(taken).toEqual([]);
      // A good link takes calls once the coordinator accepted it, and they are served.
      const good = new WorkerHostLink(place.info, 1);
      const replies: number[] = [];
      good.onReply = (r) => {
        if (r.kind === 'host-reply') replies.push(r.callId);
      };
      let sent = 0;
      for (let i = 0; i < 100 && sent === 0; i++) {
        if (good.send(msg(100))) sent++;
        else await sleep(5);
      }
      expect(sent).toBe(1);
      await expect.poll(() => replies).toEqual([100]);
      expect(served).toEqual([100]);
    } finally {
      place.drop();
      await link.close();
    }
  });
});

describe('host link: connection floods (fds of the coordinator)', () => {
  /** Opens `n` connections, each sending `first` on connect; resolves with how many are still open after `ms`. */
  async function flood(linkPath: string, n: number, first: string, ms: number): Promise<{ open: number; sockets: net.Socket[] }> {
    const sockets: net.Socket[] = [];
    let open = 0;
    await Promise.all(
      Array.from({ length: n }, () => new Promise<void>((resolve) => {
        const s = net.createConnection(linkPath);
        sockets.push(s);
        s.on('error', () => resolve());
        s.once('connect', () => {
          open++;
          s.once('close', () => open--);
          if (first) s.write(`${first}\n`);
          resolve();
        });
      })),
    );
    await sleep(ms);
    return { open, sockets };
  }

  it('HOLE: one secret opens at most a few connections; unnamed ones are capped too', async () => {
    const link = await HostLinkServer.open(MB, silentLogger());
    const place = link.register(() => undefined, 4);
    try {
      // A sandbox process that got out of its SES Compartment holds its secret: 300 connections.
      const named = await flood(link.path, 300, JSON.stringify({ hello: place.info.secret }), 300);
      expect(named.open).toBeLessThanOrEqual(4);
      for (const s of named.sockets) s.destroy();
      // Or it says nothing: all would be held for the hello second.
      const unnamed = await flood(link.path, 600, '', 300);
      expect(unnamed.open).toBeLessThanOrEqual(256);
      for (const s of unnamed.sockets) s.destroy();
      // The real owner still gets a link once the flood is gone.
      await sleep(50);
      const good = new WorkerHostLink(place.info, 1);
      await expect.poll(() => good.send({ kind: 'host-call', id: 1, key: 'k', callId: 1, method: 'x', args: [] })).toBe(true);
    } finally {
      place.drop();
      await link.close();
    }
  });
});
