// Red team of the worker threads' read cache (workers/kit/read-cache.ts, fast-read.ts), with
// real sandboxes of 1 process x 1 thread (attacker and victim share the thread's cache) and the
// in-process reader on a simulated filesystem with whole-second timestamps.
//
// Holes found (regressions marked HOLE):
// 1. fast-read.ts: text decoded from non-ASCII UTF-8 whose characters all fit Latin-1 is stored
//    one byte per character by V8, but the cache counted two: the surplus was subtracted from the
//    running call's memory figure, so a call could hold up to 16 MB over its memory_mb limit.
// 2. fast-read.ts: the cache key (inode, size, ctime, mtime) is only as fine as the filesystem's
//    timestamps: on one with whole seconds (ext3, ext4 with small inodes, HFS+, NFS; FAT 2 s), a
//    same-size rewrite within the second was served stale, and bob's new file on the inode alice
//    had just freed was served alice's content. Now only versions changed over 3 s ago are cached.
// 3. thread-pool.ts: a thread's V8 heap limit was maxMemoryMb, and the cache's up to 32 MB live in
//    that heap: what one agent's reads left cached made the next agent's call on the thread die
//    of V8's out-of-memory well within its memory_mb. The heap limit now has room for the cache.

import type * as fsType from 'node:fs';
import { linkSync, mkdirSync, realpathSync, symlinkSync, unlinkSync, writeFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fastRead } from '../../workers/kit/fast-read.js';
import { cachedBytes } from '../../workers/kit/read-cache.js';
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
