// Red team of the worker threads' host link (src/executor/host-link-server.ts,
// workers/sandbox/host-link.ts) and of the per-thread read cache (workers/sandbox/read-cache.ts),
// against real sandboxes of 1 process x 1 thread, so attacker and victim share the thread.
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
// 3. read-cache.ts: text decoded from non-ASCII UTF-8 whose characters all fit Latin-1 is stored
//    one byte per character by V8, but the cache counted two: the surplus was subtracted from the
//    running call's memory figure, so a call could hold up to 16 MB over its memory_mb limit.
// 4. fast-read.ts: the cache key (inode, size, ctime, mtime) is only as fine as the filesystem's
//    timestamps: on one with whole seconds (ext3, ext4 with small inodes, HFS+, NFS; FAT 2 s), a
//    same-size rewrite within the second was served stale, and bob's new file on the inode alice
//    had just freed was served alice's content. Now only versions changed over 3 s ago are cached.
// 5. sandbox-process.ts: the secret went to the sandbox process in argv, which every local user
//    reads in /proc/PID/cmdline. It now goes in the environment (own user only), and pool-host.ts
//    takes it out of its environment before any worker thread starts.
// 6. thread-pool.ts: a thread's V8 heap limit was maxMemoryMb, and the cache's up to 32 MB live in
//    that heap: what one agent's reads left cached made the next agent's call on the thread die
//    of V8's out-of-memory well within its memory_mb. The heap limit now has room for the cache.

import { spawnSync } from 'node:child_process';
import type * as fsType from 'node:fs';
import { linkSync, mkdirSync, readFileSync, realpathSync, symlinkSync, unlinkSync, writeFileSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { maxHostArgChars } from '../../src/executor/index.js';
import { HostLinkServer } from '../../src/executor/host-link-server.js';
import { silentLogger } from '../../src/util/logger.js';
import { fastRead } from '../../workers/sandbox/fast-read.js';
import { cachedBytes } from '../../workers/sandbox/read-cache.js';
import { tempDir } from '../fixtures/config.js';
import { startSandbox, textOf } from '../fixtures/escape/sandbox.js';
import type { Sandbox } from '../fixtures/escape/sandbox.js';

// A filesystem with whole-second timestamps (ext3, ext4 with 128-byte inodes, HFS+, many NFS
// servers; FAT has 2 s), for the in-process reader: its fstat rounds times down to the second.
const coarse = vi.hoisted(() => ({ on: false }));
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof fsType>();
  const second = 1_000_000_000n;
  const fstatSync = ((fd: number, options?: fsType.StatOptions) => {
    const info = actual.fstatSync(fd, options as fsType.StatSyncOptions) as fsType.BigIntStats;
    if (!coarse.on || typeof info.ctimeNs !== 'bigint') return info;
    return Object.assign(info, { ctimeNs: (info.ctimeNs / second) * second, mtimeNs: (info.mtimeNs / second) * second });
  }) as typeof actual.fstatSync;
  return { ...actual, fstatSync, default: { ...actual, fstatSync } };
});

const MB = 1024 * 1024;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A link server like createExecutor's, that remembers the secrets it hands out. */
async function spiedLink(maxFileBytes: number): Promise<{ link: HostLinkServer; secrets: string[] }> {
  const link = await HostLinkServer.open(6 * maxHostArgChars({ maxFileBytes }) + MB, silentLogger());
  const secrets: string[] = [];
  const register = link.register.bind(link);
  link.register = (handler) => {
    const place = register(handler);
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

describe('read cache: other agents\' files, swaps and memory', () => {
  let sb: Sandbox;
  const big = (fill: string, bytes = 96 * 1024): string => fill.repeat(Math.ceil(bytes / Buffer.byteLength(fill))).slice(0, bytes / Buffer.byteLength(fill));

  beforeAll(async () => {
    sb = await startSandbox({ sandbox: { processes: 1, threadsPerProcess: 1 }, limits: { maxFileBytes: 20 * MB } });
  }, 60_000);
  afterAll(async () => {
    await sb?.close();
  });

  const alice = { agent: 'alice', namespace: 'agent-a' };
  const bob = { agent: 'bob', namespace: 'agent-b' };

  it('a symlink or hard link to a file alice has cached gives bob nothing of it', async () => {
    const secret = path.join(sb.namespaceDir('agent-a'), 'secret.txt');
    writeFileSync(secret, big('S'));
    expect((await sb.run("return read_file('secret.txt').length", alice)).result).toBe(96 * 1024);
    const bobDir = sb.namespaceDir('agent-b');
    symlinkSync(secret, path.join(bobDir, 'via-symlink.txt'));
    symlinkSync('../agent-a', path.join(bobDir, 'via-folder'));
    for (const file of ['via-symlink.txt', 'via-folder/secret.txt', '../agent-a/secret.txt']) {
      const r = await sb.run(`return read_file(${JSON.stringify(file)}).slice(0, 8)`, bob);
      expect(r.success, file).toBe(false);
      expect(textOf(r)).not.toContain('SSSSSSSS');
    }
    // A hard link needs alice's path, which only the host (not bob) could name: if one exists, it
    // is bob's own file with the same bytes, so the cache gives bob exactly what a read would.
    linkSync(secret, path.join(bobDir, 'hard.txt'));
    writeFileSync(path.join(bobDir, 'hard.txt'), big('B'));
    expect((await sb.run("return read_file('hard.txt').slice(0, 3)", bob)).result).toBe('BBB');
    expect((await sb.run("return read_file('secret.txt').slice(0, 3)", alice)).result).toBe('BBB');
  });

  it('an inode alice freed and bob got, same size, serves bob his own content', async () => {
    const aliceDir = sb.namespaceDir('agent-a');
    const bobDir = sb.namespaceDir('agent-b');
    let reused = 0;
    for (let round = 0; round < 10; round++) {
      const mine = path.join(aliceDir, `tmp-${round}.txt`);
      writeFileSync(mine, big('A'));
      const ino = statSync(mine).ino;
      expect((await sb.run(`return read_file('tmp-${round}.txt').slice(0, 3)`, alice)).result).toBe('AAA');
      unlinkSync(mine);
      const theirs = path.join(bobDir, `got-${round}.txt`);
      writeFileSync(theirs, big('B'));
      if (statSync(theirs).ino === ino) reused++;
      expect((await sb.run(`return read_file('got-${round}.txt').slice(0, 3)`, bob)).result).toBe('BBB');
    }
    expect(reused).toBeGreaterThan(0);
  });

  it('a file rewritten in place with the same size is read anew', async () => {
    const file = path.join(sb.namespaceDir('agent-a'), 'rewrite.txt');
    for (const fill of ['1', '2', '3', '4']) {
      writeFileSync(file, big(fill));
      expect((await sb.run("return read_file('rewrite.txt').slice(0, 3)", alice)).result).toBe(fill.repeat(3));
    }
  });

  it('HOLE: cached Latin-1 text does not lend a call memory past its memory_mb', async () => {
    const dir = sb.namespaceDir('agent-m');
    // 8 MB of UTF-8 'é' each: 4 M characters, which V8 keeps one byte each (4 MB).
    for (let i = 0; i < 4; i++) writeFileSync(path.join(dir, `latin-${i}.txt`), big('é', 8 * MB));
    await sleep(3_100); // settled: cached (fast-read.ts SETTLED_MS)
    const mallory = { agent: 'mallory', namespace: 'agent-m', memoryMb: 16 };
    const alone = await sb.run('globalThis.hold = new Uint8Array(24 * 1024 * 1024).fill(1); return hold.length', mallory);
    expect(alone.error_type).toBe('MemoryLimitError');
    const r = await sb.run(
      'let n = 0; for (let i = 0; i < 4; i++) n += read_file(`latin-${i}.txt`).length; globalThis.hold = new Uint8Array(24 * 1024 * 1024).fill(1); return n',
      mallory,
    );
    expect(r.error_type, textOf(r).slice(0, 300)).toBe('MemoryLimitError');
    // What the cache really holds is still left out for a call that holds little itself.
    const small = await sb.run('let n = 0; for (let i = 0; i < 4; i++) n += read_file(`latin-${i}.txt`).length; return n', mallory);
    expect(small.result).toBe(16 * MB);
  }, 60_000);
});

describe('read cache: what another agent cached does not take a victim\'s heap', () => {
  let sb: Sandbox;

  beforeAll(async () => {
    // The worker's V8 heap limit is maxMemoryMb: a small one makes the cache's share visible.
    sb = await startSandbox({ sandbox: { processes: 1, threadsPerProcess: 1 }, limits: { maxFileBytes: 20 * MB, maxMemoryMb: 64 } });
  }, 60_000);
  afterAll(async () => {
    await sb?.close();
  });

  it('HOLE: 32 MB mallory cached leave bob the memory_mb he asked for', async () => {
    const dir = sb.namespaceDir('agent-m');
    for (let i = 0; i < 2; i++) writeFileSync(path.join(dir, `fill-${i}.txt`), `${i}`.padEnd(16 * MB, 'm'));
    await sleep(3_100); // settled: cached (fast-read.ts SETTLED_MS)
    // bob's call alone: 36 MB of heap under memory_mb 64.
    const work = 'const a = new Array(4.5e6).fill(1.5); return a.length';
    const bob = { agent: 'bob', namespace: 'agent-b', memoryMb: 64 };
    const alone = await sb.run(work, bob);
    expect(alone.result, textOf(alone).slice(0, 300)).toBe(4.5e6);
    const fill = await sb.run('let n = 0; for (let i = 0; i < 2; i++) n += read_file(`fill-${i}.txt`).length; return n', { agent: 'mallory', namespace: 'agent-m', memoryMb: 64 });
    expect(fill.result, textOf(fill).slice(0, 300)).toBe(32 * MB);
    const after = await sb.run(work, bob);
    expect(after.result, textOf(after).slice(0, 300)).toBe(4.5e6);
  }, 60_000);
});

describe('read cache on a filesystem with whole-second timestamps (in-process reader)', () => {
  const root = realpathSync(tempDir('cem-coarse-'));
  const grant = (ns: string) => ({ root: path.join(root, ns), maxBytes: MB, hostOnly: [] as string[] });
  const big = (fill: string): string => fill.repeat(96 * 1024);
  beforeAll(() => {
    for (const ns of ['agent-a', 'agent-b']) mkdirSync(path.join(root, ns));
    coarse.on = true;
  });
  afterAll(() => {
    coarse.on = false;
  });

  it('a version changed over 3 s ago is cached; a same-size rewrite within the second then is read anew', async () => {
    const file = path.join(root, 'agent-a', 'settled.txt');
    writeFileSync(file, big('s'));
    await sleep(3_100);
    const before = cachedBytes();
    expect(fastRead(grant('agent-a'), 'settled.txt')?.slice(0, 3)).toBe('sss');
    expect(cachedBytes() - before).toBe(96 * 1024);
    writeFileSync(file, big('t'));
    expect(fastRead(grant('agent-a'), 'settled.txt')?.slice(0, 3)).toBe('ttt');
  });

  it('HOLE: a same-size rewrite within the second is read anew, not served stale', () => {
    const file = path.join(root, 'agent-a', 'rewrite.txt');
    for (const fill of ['a', 'b', 'c', 'd']) {
      writeFileSync(file, big(fill));
      expect(fastRead(grant('agent-a'), 'rewrite.txt')?.slice(0, 3)).toBe(fill.repeat(3));
    }
  });

  it('HOLE: the inode alice freed, reused by bob within the second, gives bob his own content', () => {
    for (let round = 0; round < 5; round++) {
      const mine = path.join(root, 'agent-a', `tmp-${round}.txt`);
      writeFileSync(mine, big('A'));
      expect(fastRead(grant('agent-a'), `tmp-${round}.txt`)?.slice(0, 3)).toBe('AAA');
      unlinkSync(mine);
      writeFileSync(path.join(root, 'agent-b', `got-${round}.txt`), big('B'));
      expect(fastRead(grant('agent-b'), `got-${round}.txt`)?.slice(0, 3)).toBe('BBB');
    }
  });
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

  it('Python processes get no secret and open no connection; Python code finds neither', async () => {
    // Only the JavaScript process was registered on the link.
    expect(secrets.length).toBe(1);
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
    for (const secret of secrets) expect(textOf(r)).not.toContain(secret);
    // The listener and the JavaScript thread's connection; none from the Python thread.
    expect(linkSockets()).toBe(2);
  }, 60_000);
});
