// read_file served in the worker (workers/kit/fast-read.ts): the coordinator grants the real
// path of the agent's namespace, the worker serves only plain reads inside it and sends the rest
// to the host. First the reader alone against paths a planter could leave (a symlinked folder, a
// FIFO, a file swapped for a link), then through a real executor: which reads reach the host,
// that permissions still decide, and that two agents on one worker read only their own files.

import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReadGrant } from '../../workers/kit/protocol.js';
import { fastRead } from '../../workers/kit/fast-read.js';
import { tempDir } from '../fixtures/config.js';
import { FULL_PERMISSIONS } from '../fixtures/config.js';
import { startSandbox } from '../fixtures/escape/sandbox.js';
import type { Sandbox } from '../fixtures/escape/sandbox.js';

const base = realpathSync(tempDir('cem-fast-read-'));
const root = path.join(base, 'ns');
const outside = path.join(base, 'outside');
const grant: ReadGrant = { root, maxBytes: 1024, hostOnly: ['servers'] };

describe.runIf(process.platform === 'linux')('the worker-side reader', () => {
  beforeAll(() => {
    mkdirSync(path.join(root, 'sub'), { recursive: true });
    mkdirSync(outside, { recursive: true });
    writeFileSync(path.join(root, 'a.txt'), 'alpha');
    writeFileSync(path.join(root, 'sub', 'b.json'), '{"b":1}');
    writeFileSync(path.join(root, 'big.txt'), 'x'.repeat(1025));
    writeFileSync(path.join(root, 'héllo wörld.txt'), 'ünïcode');
    writeFileSync(path.join(outside, 'secret.txt'), 'SECRET');
    mkdirSync(path.join(root, 'servers'));
    writeFileSync(path.join(root, 'servers', 'x.ts'), 'shadow');
    symlinkSync(outside, path.join(root, 'dirlink'));
    symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'filelink'));
    execFileSync('mkfifo', [path.join(root, 'pipe')]);
  });

  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('serves plain files inside the granted folder', () => {
    expect(fastRead(grant, 'a.txt')).toBe('alpha');
    expect(fastRead(grant, './sub/b.json')).toBe('{"b":1}');
    expect(fastRead(grant, 'héllo wörld.txt')).toBe('ünïcode');
  });

  it('leaves everything else to the host', () => {
    const hostAnswers = [
      'dirlink/secret.txt', // a folder symlink that leads out: opened, then seen for what it is
      'filelink', // a final symlink (O_NOFOLLOW)
      'pipe', // a FIFO: must neither block nor be read
      'sub', // a directory
      'big.txt', // over the size limit
      'missing.txt',
      'servers/x.ts', // a host-generated view, even if a real folder shadows it
      '../outside/secret.txt',
      'sub/../a.txt',
      '/etc/passwd',
      'a//b',
      'sub/',
      '.',
      '',
      'a\\b',
      'a\u0000.txt',
      'x/'.repeat(600),
    ];
    for (const file of hostAnswers) expect(fastRead(grant, file), file).toBeUndefined();
    expect(fastRead(undefined, 'a.txt')).toBeUndefined();
  });

  it('refuses what a swapped grant root would let through: a root is matched with its separator', () => {
    writeFileSync(`${root}-twin`, 'twin');
    mkdirSync(`${root}2`, { recursive: true });
    writeFileSync(path.join(`${root}2`, 'c.txt'), 'other namespace');
    symlinkSync(path.join(`${root}2`, 'c.txt'), path.join(root, 'sub', 'to-twin')); // final link: host
    symlinkSync(`${root}2`, path.join(root, 'twin-dir'));
    expect(fastRead(grant, 'twin-dir/c.txt')).toBeUndefined();
  });
});

describe('read_file through a real executor', () => {
  let sb: Sandbox;

  beforeAll(async () => {
    // A stand-in counter (characters): the worker's reads are estimated at 4 characters a token.
    const countTokens = (v: unknown): number => (typeof v === 'string' ? v.length : JSON.stringify(v ?? null).length);
    sb = await startSandbox({ workspaceDir: path.join(base, 'workspace'), sandbox: { processes: 1, threadsPerProcess: 1 }, countTokens });
    writeFileSync(path.join(sb.namespaceDir('agent-a'), 'mine.txt'), 'a-data');
    writeFileSync(path.join(sb.namespaceDir('agent-b'), 'mine.txt'), 'b-data');
  }, 60_000);

  afterAll(async () => {
    await sb?.close();
  });

  it('a plain read never reaches the host; a refused one does, with the host message', async () => {
    const before = sb.hostLog.byMethod.read_file ?? 0;
    const ok = await sb.run("return [read_file('mine.txt'), read_file('./mine.txt')]");
    expect(ok.result).toEqual(['a-data', 'a-data']);
    const served = (sb.hostLog.byMethod.read_file ?? 0) - before;
    expect(served).toBe(process.platform === 'linux' ? 0 : 2);
    const missing = await sb.run("return read_file('nope.txt')");
    expect(missing.success).toBe(false);
    expect(missing.error).toMatch(/File not found: "nope.txt"/);
    expect(sb.hostLog.byMethod.read_file).toBe(before + served + 1);
  });

  it('permissions still decide: none is refused, read is served', async () => {
    const none = await sb.run("return read_file('mine.txt')", { permissions: { ...FULL_PERMISSIONS, workspace: 'none' } });
    expect(none.success).toBe(false);
    expect(none.error_type).toBe('PermissionError');
    const readOnly = await sb.run("return read_file('mine.txt')", { permissions: { ...FULL_PERMISSIONS, workspace: 'read' } });
    expect(readOnly.result).toBe('a-data');
  });

  it('two agents on one worker each read only their own namespace, in either order', async () => {
    for (let i = 0; i < 3; i++) {
      const a = await sb.run("return [read_file('mine.txt'), workspace]", { agent: 'alice', namespace: 'agent-a' });
      const b = await sb.run("return [read_file('mine.txt'), workspace]", { agent: 'bob', namespace: 'agent-b' });
      expect(a.result).toEqual(['a-data', 'agent-a']);
      expect(b.result).toEqual(['b-data', 'agent-b']);
    }
    const climb = await sb.run("return read_file('../agent-a/mine.txt')", { agent: 'bob', namespace: 'agent-b' });
    expect(climb.success).toBe(false);
    expect(climb.error).toMatch(/leads outside the workspace/);
  });

  it('counts what the worker read in context_savings, marked estimated', async () => {
    writeFileSync(path.join(sb.namespaceDir('agent-a'), 'large.txt'), 'word '.repeat(4000));
    const r = await sb.run("return read_file('large.txt').length");
    expect(r.result).toBe(20_000);
    if (process.platform === 'linux') {
      expect(r.context_savings).toMatchObject({ tokens_in: 5_000, estimated: true });
    } else {
      expect(r.context_savings?.tokens_in).toBe(20_000);
    }
  });
});

// The thread's cache of decoded file contents (workers/kit/read-cache.ts): found only by one
// version of one file, after the path was authorized for the call asking.
describe('read_file of large files, re-read from the thread cache', () => {
  let sb: Sandbox;
  const BIG = 100 * 1024;
  const big = (fill: string): string => fill.repeat(BIG / fill.length);

  beforeAll(async () => {
    sb = await startSandbox({ workspaceDir: path.join(base, 'workspace-cache'), sandbox: { processes: 1, threadsPerProcess: 1 } });
  }, 60_000);
  afterAll(async () => {
    await sb?.close();
  });

  it('a file changed in place, to the same size, is read anew', async () => {
    const file = path.join(sb.namespaceDir('agent-a'), 'data.txt');
    writeFileSync(file, big('a'));
    // Settled, so this first version is cached (fast-read.ts caches none changed in the last 3 s).
    await new Promise((resolve) => setTimeout(resolve, 3_100));
    const first = await sb.run("const t = read_file('data.txt'); return [t.length, t[0], t.at(-1)]");
    expect(first.result).toEqual([BIG, 'a', 'a']);
    for (const fill of ['b', 'c', 'd']) {
      writeFileSync(file, big(fill));
      const again = await sb.run("const t = read_file('data.txt'); return [t.length, t[0], t.at(-1)]");
      expect(again.result).toEqual([BIG, fill, fill]);
    }
  });

  it('a file replaced through write_file is read anew', async () => {
    await sb.run(`write_file('swap.txt', ${JSON.stringify(big('1'))}); return read_file('swap.txt')[0]`);
    const replaced = await sb.run(`write_file('swap.txt', ${JSON.stringify(big('2'))}); return read_file('swap.txt')[0]`);
    expect(replaced.result).toBe('2');
  });

  it('two agents with a same-named large file on one thread each get their own, whatever the other cached', async () => {
    writeFileSync(path.join(sb.namespaceDir('agent-a'), 'shared-name.json'), big('A'));
    writeFileSync(path.join(sb.namespaceDir('agent-b'), 'shared-name.json'), big('B'));
    for (let round = 0; round < 3; round++) {
      const a = await sb.run("return read_file('shared-name.json').slice(0, 3)", { agent: 'alice', namespace: 'agent-a' });
      const b = await sb.run("return read_file('shared-name.json').slice(0, 3)", { agent: 'bob', namespace: 'agent-b' });
      expect([a.result, b.result]).toEqual(['AAA', 'BBB']);
    }
    // bob cannot reach alice's cached version by a path either
    const climb = await sb.run("return read_file('../agent-a/shared-name.json').slice(0, 3)", { agent: 'bob', namespace: 'agent-b' });
    expect(climb.success).toBe(false);
  });

  it('what the cache holds does not count against a later call\'s memory limit', async () => {
    for (let i = 0; i < 12; i++) writeFileSync(path.join(sb.namespaceDir('agent-a'), `fill-${i}.txt`), `${i}`.padEnd(2 * 1024 * 1024, 'z'));
    await new Promise((resolve) => setTimeout(resolve, 3_100)); // settled: cached
    const fill = await sb.run('let n = 0; for (let i = 0; i < 12; i++) n += read_file(`fill-${i}.txt`).length; return n');
    expect(fill.result).toBe(12 * 2 * 1024 * 1024);
    // A call with a small limit that holds little itself is not stopped for the cache's ~24 MB.
    const small = await sb.run('const a = new Array(1000).fill(1); return a.length', { memoryMb: 20 });
    expect(small.error, small.traceback).toBeUndefined();
    expect(small.result).toBe(1000);
  });
});

describe('an idle sandbox process gives back what its thread cached', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ workspaceDir: path.join(base, 'workspace-trim'), sandbox: { processes: 1, threadsPerProcess: 1 }, pool: { idleTrimMs: 400 } });
  }, 60_000);
  afterAll(async () => {
    await sb?.close();
  });

  it.runIf(process.platform === 'linux')('the cached contents are released after the idle time', async () => {
    const rssMb = (): number => {
      const pid = sb.executor.processes()[0]?.pid;
      return Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * 4096 / (1024 * 1024);
    };
    for (let i = 0; i < 12; i++) writeFileSync(path.join(sb.namespaceDir('agent-a'), `keep-${i}.txt`), `${i}`.padEnd(2 * 1024 * 1024, 'k'));
    const read = await sb.run('let n = 0; for (let i = 0; i < 12; i++) n += read_file(`keep-${i}.txt`).length; return n');
    expect(read.result).toBe(24 * 1024 * 1024);
    const held = rssMb();
    // idle: the trim runs within idleTrimMs + a quarter of it; its collection frees the strings
    await expect.poll(() => held - rssMb(), { timeout: 10_000, interval: 200 }).toBeGreaterThan(12);
    // and the thread still serves reads (from the file again)
    const again = await sb.run("return read_file('keep-3.txt').slice(0, 2)");
    expect(again.result).toBe('3k');
  });
});
