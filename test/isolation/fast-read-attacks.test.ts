// Red team of read_file served in the worker (workers/kit/fast-read.ts). Three agents share ONE
// sandbox worker (1 process x 1 thread): alice (namespace agent-a, the attacker), bob (agent-ab,
// alice's prefix twin) and carol (agent-b, a sibling). The test process plays the hostile co-tenant
// that plants symlinks, FIFOs and sparse files in alice's namespace; child processes run the races.
// Every attack asserts an outcome: the victim's content never reaches the attacker, the attacker
// gets a clear error, the victim's own result stays right, nothing outside the namespace is touched.
//
// Holes found (the regressions are marked HOLE below). In workers/kit/fast-read.ts:
// 1. The worker opened whatever a planted folder symlink led to (O_RDONLY|O_NONBLOCK) before it
//    checked where that was: a FIFO outside the workspace had its blocked writer released and then
//    killed by SIGPIPE. Now the path is only named (O_PATH) until it is known to be inside.
// 2. readFileSync(fd) fstat()s again and reads whatever the file has grown to (up to 2 GiB): a
//    file grown after the size check made the shared worker allocate and read it all. Now at most
//    one byte past the checked size is read; a file that grew goes to the host.
// In the host's reader (src/workspace/workspace.ts), where every refused worker read ends up:
// 3. realpath, then open of the real path: a folder on it swapped for a symlink in between led the
//    open into the sibling's namespace (alice read carol's file; seen ~1 in 100 reads under a
//    swapping co-tenant). Now the opened descriptor's real path must be inside (Linux /proc).
// 4. stat, then readFile: a file grown past the limit in between was read whole and returned.
// 5. stat after realpath was unguarded: a file removed in between gave the guest Node's own
//    "ENOENT: no such file or directory, stat '<path>'". The open also could block on a FIFO
//    swapped in (a thread of libuv's pool held forever); it is O_NONBLOCK now.

import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import type * as fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Config, Permissions } from '../../src/config/config-types.js';
import { createExecutor, createHostApi } from '../../src/executor/index.js';
import type { CallIdentity, ExecutionResult, HostApi, PooledExecutor, VirtualTree } from '../../src/executor/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { Workspace, WorkspaceError } from '../../src/workspace/index.js';
import type { ReadGrant } from '../../workers/kit/protocol.js';
import { fastRead } from '../../workers/kit/fast-read.js';
import { FULL_PERMISSIONS, tempDir, testConfig } from '../fixtures/config.js';

// The co-tenant's perfect timing: hooks run right after the worker reader's fstat, or right after
// the host reader's realpath or stat of a given path (workspace.ts, called in this process).
const hook = vi.hoisted(() => ({
  afterFstat: undefined as undefined | (() => void),
  afterHost: undefined as undefined | { call: 'realpath' | 'stat'; path: string; run: () => void },
}));
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof fsp>();
  const wrap = <F extends (p: string, ...rest: never[]) => Promise<unknown>>(call: 'realpath' | 'stat', fn: F): F =>
    (async (p: string, ...rest: never[]) => {
      const result = await fn(p, ...rest);
      const h = hook.afterHost;
      if (h && h.call === call && h.path === p) {
        hook.afterHost = undefined;
        h.run();
      }
      return result;
    }) as F;
  const realpath = wrap('realpath', actual.realpath as (p: string) => Promise<string>);
  const stat = wrap('stat', actual.stat as (p: string) => Promise<fs.Stats>);
  return { ...actual, realpath, stat, default: { ...actual, realpath, stat } };
});
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof fs>();
  const fstatSync = ((...args: Parameters<typeof actual.fstatSync>) => {
    const stats = actual.fstatSync(...args);
    const run = hook.afterFstat;
    hook.afterFstat = undefined;
    run?.();
    return stats;
  }) as typeof actual.fstatSync;
  return { ...actual, fstatSync, default: { ...actual, fstatSync } };
});

const linux = process.platform === 'linux';
const base = fs.realpathSync(tempDir('cem-fast-read-attacks-'));
const MAX_BYTES = 1024 * 1024;

/** Bytes this process (or another of ours) read with read(2) so far: /proc/PID/io rchar. */
function rchar(pid: number | string = 'self'): number {
  const m = /rchar:\s*(\d+)/.exec(fs.readFileSync(`/proc/${pid}/io`, 'utf8'));
  return Number(m?.[1] ?? NaN);
}

/** A shell writer blocked in open() on `fifo` (no reader yet); `ready` resolves once it waits there. */
function blockedWriter(fifo: string): { proc: ChildProcess; ready: Promise<void>; fate: () => { exitCode: number | null; signal: NodeJS.Signals | null } } {
  const proc = spawn('sh', ['-c', `echo from-writer > '${fifo}'`], { stdio: 'ignore' });
  const ready = (async () => {
    // The kernel names where a process sleeps: a FIFO open waiting for its reader.
    for (let i = 0; i < 100; i++) {
      const wchan = ((): string => {
        try {
          return fs.readFileSync(`/proc/${proc.pid}/wchan`, 'utf8');
        } catch {
          return '';
        }
      })();
      if (wchan === 'wait_for_partner') return;
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 500)); // no wchan here: give it time
  })();
  return { proc, ready, fate: () => ({ exitCode: proc.exitCode, signal: proc.signalCode }) };
}

const wait = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe.runIf(linux)('the worker-side reader under a co-tenant with perfect timing', () => {
  const root = path.join(base, 'unit', 'ns');
  const outside = path.join(base, 'unit', 'outside');
  const grant: ReadGrant = { root, maxBytes: MAX_BYTES, hostOnly: ['servers'] };

  beforeAll(() => {
    fs.mkdirSync(root, { recursive: true });
    fs.mkdirSync(outside, { recursive: true });
    fs.symlinkSync(outside, path.join(root, 'out'));
  });

  it('HOLE 1: a FIFO outside the namespace, reached through a planted folder symlink, is not opened (its blocked writer stays blocked)', async () => {
    const fifo = path.join(outside, 'fifo-unit');
    execFileSync('mkfifo', [fifo]);
    const writer = blockedWriter(fifo);
    try {
      await writer.ready;
      expect(fastRead(grant, 'out/fifo-unit')).toBeUndefined();
      await wait(300);
      // With a plain open(O_RDONLY|O_NONBLOCK) the writer's open returned and its write died of SIGPIPE.
      expect(writer.fate()).toEqual({ exitCode: null, signal: null });
    } finally {
      writer.proc.kill('SIGKILL');
    }
  });

  it('HOLE 2: a file grown right after the size check is not read past the checked size (no 2 GiB read in the shared worker)', () => {
    const file = path.join(root, 'grows.txt');
    fs.writeFileSync(file, 'small');
    // Sparse: the co-tenant makes it 256 MiB in an instant, between the reader's fstat and its read.
    hook.afterFstat = () => fs.truncateSync(file, 256 * 1024 * 1024);
    const before = rchar();
    const started = performance.now();
    const got = fastRead(grant, 'grows.txt');
    const readBytes = rchar() - before;
    expect(got === undefined || got === 'small').toBe(true);
    expect(readBytes).toBeLessThan(64 * 1024);
    expect(performance.now() - started).toBeLessThan(200);
    fs.rmSync(file);
  });

  it('a folder a co-tenant keeps swapping with a link to the outside: the reader alone never yields the outside file', async () => {
    const d = path.join(root, 'race');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'OUTSIDE-SECRET');
    fs.mkdirSync(`${d}.dir`);
    fs.writeFileSync(path.join(`${d}.dir`, 'secret.txt'), 'inside-race');
    fs.symlinkSync(outside, `${d}.link`);
    fs.renameSync(`${d}.dir`, d);
    const swapper = spawn(
      process.execPath,
      ['-e', `const fs = require('fs'); const d = ${JSON.stringify(d)}; const end = Date.now() + 3000; while (Date.now() < end) { try { fs.renameSync(d, d + '.dir'); fs.renameSync(d + '.link', d); fs.renameSync(d, d + '.link'); fs.renameSync(d + '.dir', d); } catch {} }`],
      { stdio: 'ignore' },
    );
    try {
      await wait(100);
      const seen: Record<string, number> = {};
      for (let i = 0; i < 30_000; i++) {
        const got = String(fastRead(grant, 'race/secret.txt'));
        seen[got] = (seen[got] ?? 0) + 1;
      }
      expect(Object.keys(seen).sort()).toEqual(['inside-race', 'undefined']);
    } finally {
      swapper.kill('SIGKILL');
    }
  });

  it('a file that shrinks right after the size check yields what is there, never more', () => {
    const file = path.join(root, 'shrinks.txt');
    fs.writeFileSync(file, 'abcdefghij');
    hook.afterFstat = () => fs.truncateSync(file, 3);
    expect(fastRead(grant, 'shrinks.txt')).toBe('abc');
  });

  it('a file swapped for a symlink to the outside right after the check still yields only the checked file', () => {
    const file = path.join(root, 'swapped.txt');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'OUTSIDE-SECRET');
    fs.writeFileSync(file, 'inside');
    hook.afterFstat = () => {
      fs.rmSync(file);
      fs.symlinkSync(path.join(outside, 'secret.txt'), file);
    };
    const got = fastRead(grant, 'swapped.txt');
    expect(got === undefined || got === 'inside').toBe(true);
  });
});

// The host's reader is the canonical answer every refused worker read falls back to: the same
// co-tenant against it (holes 3-5, fixed in src/workspace/workspace.ts).
describe('the host reader (workspace.ts) under a co-tenant with perfect timing', () => {
  const wsRoot = path.join(base, 'host-unit');
  const mine = path.join(wsRoot, 'agent-a');
  const sibling = path.join(wsRoot, 'agent-b');
  let view: ReturnType<Workspace['namespace']>;

  beforeAll(async () => {
    fs.mkdirSync(mine, { recursive: true });
    fs.mkdirSync(sibling, { recursive: true });
    fs.writeFileSync(path.join(sibling, 'secret.txt'), SECRETS[1]!);
    view = new Workspace({ root: wsRoot, maxFileBytes: MAX_BYTES, sweepIntervalMs: 0 }).namespace('agent-a');
    await view.localFolder.root();
  });

  it('HOLE 3: a folder swapped for a link to the sibling between realpath and open never yields the sibling file', async () => {
    const d = path.join(mine, 'swap');
    fs.mkdirSync(d);
    fs.writeFileSync(path.join(d, 'secret.txt'), 'mine');
    hook.afterHost = {
      call: 'stat',
      path: path.join(d, 'secret.txt'),
      run: () => {
        fs.renameSync(d, `${d}.parked`);
        fs.symlinkSync(sibling, d);
      },
    };
    const got = await view.readFile('swap/secret.txt').then(
      (r) => r.content,
      (e: unknown) => e,
    );
    expect(got).toBeInstanceOf(WorkspaceError);
    expect((got as WorkspaceError).message).toBe('Access denied: "swap/secret.txt" leads outside the workspace');
  });

  it('HOLE 4: a file grown past the limit right after the stat is refused, never read whole', async () => {
    const file = path.join(mine, 'grows.txt');
    fs.writeFileSync(file, 'small');
    hook.afterHost = { call: 'stat', path: file, run: () => fs.truncateSync(file, 256 * 1024 * 1024) };
    const before = rchar();
    const got = await view.readFile('grows.txt').then(
      (r) => r.content.length,
      (e: unknown) => (e as Error).message,
    );
    expect(got).toBe(`"grows.txt" grew past the ${MAX_BYTES}-byte file limit while it was read`);
    expect(rchar() - before).toBeLessThan(4 * MAX_BYTES);
  });

  it('HOLE 5: a file removed between realpath and stat is "File not found", not Node\'s ENOENT message', async () => {
    const file = path.join(mine, 'vanishes.txt');
    fs.writeFileSync(file, 'here');
    hook.afterHost = { call: 'realpath', path: file, run: () => fs.rmSync(file) };
    const got = await view.readFile('vanishes.txt').then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(got).toBeInstanceOf(WorkspaceError);
    expect(got?.message).toBe('File not found: "vanishes.txt"');
  });

  it('a FIFO swapped in between stat and open neither blocks the host nor is read', async () => {
    const file = path.join(mine, 'becomes-fifo');
    fs.writeFileSync(file, 'x');
    hook.afterHost = {
      call: 'stat',
      path: file,
      run: () => {
        fs.rmSync(file);
        execFileSync('mkfifo', [file]);
      },
    };
    const got = await Promise.race([
      view.readFile('becomes-fifo').then(
        () => 'read',
        (e: unknown) => (e as Error).message,
      ),
      wait(3_000).then(() => 'blocked'),
    ]);
    expect(got).toBe('"becomes-fifo" is not a regular file');
  });
});

// ---------------------------------------------------------------------------------------------
// Through a real executor: three agents, one worker.

interface Agent {
  agent: string;
  namespace: string;
  permissions?: Permissions;
}
const ALICE: Agent = { agent: 'alice', namespace: 'agent-a' };
const BOB: Agent = { agent: 'bob', namespace: 'agent-ab' };
const CAROL: Agent = { agent: 'carol', namespace: 'agent-b' };
const SECRETS = ['BOB-SECRET-4d1f', 'CAROL-SECRET-9e2a', 'OUTSIDE-SECRET-77c0'];

interface World {
  executor: PooledExecutor;
  hostReads: () => number;
  ns: (name: string) => string;
  run: (who: Agent, code: string, timeoutSeconds?: number) => Promise<ExecutionResult>;
  sandboxPid: () => number;
}

async function startWorld(): Promise<World> {
  const cfg = testConfig();
  const config: Config = {
    ...cfg,
    workspaceDir: path.join(base, 'ws'),
    limits: { ...cfg.limits, maxFileBytes: MAX_BYTES },
    sandbox: { ...cfg.sandbox, processes: 1, threadsPerProcess: 1 },
  };
  const workspace = new Workspace({ root: config.workspaceDir, maxFileBytes: MAX_BYTES });
  // The catalog's generated view: what each agent sees under servers/ is the host's to say.
  const servers: VirtualTree = {
    root: 'servers',
    list: (subpath) => (subpath === 'servers' ? ['servers/x.ts'] : undefined),
    read: (file, identity) => (file === 'servers/x.ts' ? `virtual view for ${identity.agent}` : undefined),
  };
  const inner = createHostApi({ config, workspace, logger: silentLogger(), virtual: [servers] });
  let reads = 0;
  const hostApi: HostApi = {
    call(method, args, ctx) {
      if (method === 'read_file') reads++;
      return inner.call(method, args, ctx);
    },
    toolNames: (identity) => inner.toolNames(identity),
    fetchAllowed: (identity) => inner.fetchAllowed(identity),
    readGrant: (identity) => inner.readGrant!(identity),
  };
  const countTokens = (v: unknown): number => (typeof v === 'string' ? v.length : JSON.stringify(v ?? null).length);
  const executor = await createExecutor({ config, hostApi, logger: silentLogger(), workspace, countTokens });
  const ns = (name: string): string => {
    const dir = path.join(config.workspaceDir, name);
    fs.mkdirSync(dir, { recursive: true });
    return dir;
  };
  return {
    executor,
    hostReads: () => reads,
    ns,
    run: (who, code, timeoutSeconds = 10) => {
      const identity: CallIdentity = { agent: who.agent, sessionId: `s-${who.agent}`, workspaceNamespace: who.namespace, permissions: who.permissions ?? FULL_PERMISSIONS };
      return executor.execute({ code, language: 'javascript', timeoutSeconds, memoryMb: 256 }, identity);
    },
    sandboxPid: () => executor.processes()[0]!.pid!,
  };
}

/** Nothing any agent gets back ever holds another's secret or a host path (unless the guest typed that path). */
function assertClean(r: ExecutionResult, guestTypedHostPaths = false): void {
  const text = JSON.stringify(r);
  for (const s of SECRETS) expect(text, 'a secret leaked').not.toContain(s);
  if (guestTypedHostPaths) return;
  expect(text, 'a host path leaked').not.toContain(base);
  expect(text).not.toMatch(/\/tmp\/|\/proc\/|\/home\/|ENOENT|EACCES|ELOOP|errno|syscall/);
}

interface Probed {
  ok?: string;
  name?: string;
  message?: string;
  /** What a caught error is made of: its prototype is an intrinsic one (frozen), its own keys. */
  proto?: string;
  frozenProto?: boolean;
  keys?: string[];
}

/** Guest code that tries each path of \`paths\` and reports, in order, the content or the error. */
const PROBE = `
  const protos = new Map([[Error.prototype, 'Error'], [TypeError.prototype, 'TypeError'], [RangeError.prototype, 'RangeError'], [SyntaxError.prototype, 'SyntaxError'], [ReferenceError.prototype, 'ReferenceError']]);
  return paths.map((p) => {
    try { return { ok: read_file(p) } } catch (e) {
      const proto = Object.getPrototypeOf(e);
      return { name: e.name, message: e.message, proto: protos.get(proto) ?? 'foreign', frozenProto: Object.isFrozen(proto), keys: Reflect.ownKeys(e).map(String).sort() };
    }
  });`;

/** Every error a guest caught is an intrinsic error with only a message (and maybe a name): no code, errno, syscall or path. */
function assertPlainError(p: Probed, what: string): void {
  expect(p.proto, what).not.toBe('foreign');
  expect(p.frozenProto, what).toBe(true);
  for (const k of p.keys ?? []) expect(['message', 'name', 'stack', 'cause'], `${what}: own key ${k}`).toContain(k);
}

describe('read_file attacks between agents on one worker', () => {
  let w: World;
  let a: string;

  beforeAll(async () => {
    w = await startWorld();
    a = w.ns('agent-a');
    fs.writeFileSync(path.join(a, 'mine.txt'), 'alice-data');
    fs.mkdirSync(path.join(a, 'sub'));
    fs.writeFileSync(path.join(a, 'sub', 'deep.txt'), 'alice-deep');
    fs.writeFileSync(path.join(w.ns('agent-ab'), 'secret.txt'), SECRETS[0]!);
    fs.writeFileSync(path.join(w.ns('agent-b'), 'secret.txt'), SECRETS[1]!);
    fs.mkdirSync(path.join(base, 'outside'), { recursive: true });
    fs.writeFileSync(path.join(base, 'outside', 'secret.txt'), SECRETS[2]!);
  }, 120_000);

  afterAll(async () => {
    await w?.executor.close();
    fs.rmSync(base, { recursive: true, force: true });
  });

  it('path forms aimed at the prefix twin, the sibling and the host never return their content, each with a clear error', async () => {
    const paths = [
      '../agent-ab/secret.txt',
      '../agent-b/secret.txt',
      './../agent-b/secret.txt',
      'sub/../../agent-b/secret.txt',
      'sub/../../../outside/secret.txt',
      '..//agent-b/secret.txt',
      '../agent-a/../agent-b/secret.txt',
      '.../agent-b/secret.txt',
      '%2e%2e/agent-b/secret.txt',
      '..%2fagent-b%2fsecret.txt',
      '\u2025/agent-b/secret.txt', // two-dot leader
      '\uff0e\uff0e/agent-b/secret.txt', // fullwidth dots
      '..\u2215agent-b\u2215secret.txt', // division slash
      '..\uff0fagent-b\uff0fsecret.txt', // fullwidth solidus
      '.\u200b./agent-b/secret.txt', // zero-width space
      '..\\agent-b\\secret.txt',
      '..\u0000/agent-b/secret.txt',
      '../agent-b/secret.txt\u0000.png',
      `${base}/ws/agent-b/secret.txt`,
      '/etc/passwd',
      'file:///etc/passwd',
      '~/secret.txt',
      `${'x/'.repeat(510)}../../agent-b/secret.txt`,
      `${'../'.repeat(40)}etc/passwd`,
      'C:/agent-b/secret.txt',
      '.',
      './',
      '',
    ];
    const r = await w.run(ALICE, `const paths = ${JSON.stringify(paths)};${PROBE}`);
    expect(r.success).toBe(true);
    assertClean(r, true);
    const out = r.result as Probed[];
    for (const [i, p] of paths.entries()) {
      const got = out[i]!;
      assertPlainError(got, p);
      if (!p.includes(base)) expect(got.message).not.toContain(base);
      expect(got.ok, `content for ${JSON.stringify(p)}`).toBeUndefined();
      expect(got.message, `message for ${JSON.stringify(p)}`).toMatch(/File not found|Access denied|must not be empty|contains a|names the workspace itself|characters; the limit/);
      expect(got.name).toMatch(/^(FileNotFoundError|PermissionError|WorkspaceError)$/);
    }
    const bob = await w.run(BOB, "return read_file('secret.txt')");
    const carol = await w.run(CAROL, "return read_file('secret.txt')");
    expect(bob.result).toBe(SECRETS[0]);
    expect(carol.result).toBe(SECRETS[1]);
  });

  it('symlinks a co-tenant plants (to the twin, the sibling, the root, the host) give nothing; the worker never serves them', async () => {
    fs.symlinkSync(path.join(base, 'ws', 'agent-ab'), path.join(a, 'twin'));
    fs.symlinkSync(path.join(base, 'ws', 'agent-b'), path.join(a, 'sibling'));
    fs.symlinkSync(path.join(base, 'ws', 'agent-b', 'secret.txt'), path.join(a, 'sibling-file.txt'));
    fs.symlinkSync(path.join(base, 'ws'), path.join(a, 'wsroot'));
    fs.symlinkSync('/', path.join(a, 'slash'));
    fs.symlinkSync('mine.txt', path.join(a, 'inner-link.txt')); // a link inside: still not served by the worker
    const paths = ['twin/secret.txt', 'sibling/secret.txt', 'sibling-file.txt', 'wsroot/agent-b/secret.txt', 'wsroot/agent-ab/secret.txt', `slash${base}/outside/secret.txt`, 'slash/etc/hostname'];
    const hostBefore = w.hostReads();
    const r = await w.run(ALICE, `const paths = ${JSON.stringify([...paths, 'inner-link.txt'])};${PROBE}`);
    assertClean(r, true);
    const out = r.result as Probed[];
    for (const [i, p] of paths.entries()) {
      expect(out[i]!.ok, p).toBeUndefined();
      expect(out[i]!.message, p).toMatch(/leads outside the workspace/);
      expect(out[i]!.name).toBe('PermissionError');
      assertPlainError(out[i]!, p);
    }
    // The host follows a link that stays inside; the worker never does (O_NOFOLLOW), so it asked the host.
    expect(out[paths.length]).toEqual({ ok: 'alice-data' });
    expect(w.hostReads() - hostBefore).toBe(paths.length + 1);
  });

  it('HOLE 1 end to end: a FIFO outside the workspace behind a planted link is neither opened nor disturbed', async () => {
    const fifo = path.join(base, 'outside', 'fifo');
    execFileSync('mkfifo', [fifo]);
    fs.symlinkSync(path.join(base, 'outside'), path.join(a, 'out'));
    const writer = blockedWriter(fifo);
    try {
      await writer.ready;
      const r = await w.run(ALICE, "try { return read_file('out/fifo') } catch (e) { return [e.name, e.message] }");
      expect(r.result).toEqual(['PermissionError', 'Access denied: "out/fifo" leads outside the workspace']);
      await wait(300);
      expect(writer.fate()).toEqual({ exitCode: null, signal: null });
    } finally {
      writer.proc.kill('SIGKILL');
    }
  });

  it('a FIFO planted in the namespace (with or without a writer) never blocks the shared worker', async () => {
    execFileSync('mkfifo', [path.join(a, 'pipe')]);
    const started = performance.now();
    const r = await w.run(ALICE, "try { return read_file('pipe') } catch (e) { return [e.name, e.message] }", 5);
    expect(r.result).toEqual(['WorkspaceError', '"pipe" is not a regular file']);
    // A writer holding the FIFO open with data waiting: still refused, never read.
    const writer = spawn('sh', ['-c', `exec 3<>'${path.join(a, 'pipe')}'; echo FIFO-DATA >&3; sleep 5`], { stdio: 'ignore' });
    try {
      const r2 = await w.run(ALICE, "try { return read_file('pipe') } catch (e) { return [e.name, e.message] }", 5);
      expect(r2.result).toEqual(['WorkspaceError', '"pipe" is not a regular file']);
      const victim = await w.run(CAROL, "return read_file('secret.txt')");
      expect(victim.result).toBe(SECRETS[1]);
      expect(performance.now() - started).toBeLessThan(4_000);
    } finally {
      writer.kill('SIGKILL');
    }
  });

  it('huge sparse files are refused at once with the limit, and the victim after them is served normally', async () => {
    fs.writeFileSync(path.join(a, 'over.txt'), 'x'.repeat(MAX_BYTES + 1));
    const huge = path.join(a, 'huge.bin');
    fs.writeFileSync(huge, '');
    fs.truncateSync(huge, 4 * 1024 ** 3); // 4 GiB, sparse
    const started = performance.now();
    const r = await w.run(ALICE, "return ['over.txt', 'huge.bin'].map((p) => { try { return read_file(p).length } catch (e) { return e.message } })");
    expect(r.result).toEqual([`"over.txt" is ${MAX_BYTES + 1} bytes, over the ${MAX_BYTES}-byte file limit`, `"huge.bin" is ${4 * 1024 ** 3} bytes, over the ${MAX_BYTES}-byte file limit`]);
    const victim = await w.run(BOB, "return read_file('secret.txt')");
    expect(victim.result).toBe(SECRETS[0]);
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it('a folder swapped with a link to the sibling in a tight loop (hostile co-tenant) never yields the sibling file', async () => {
    const d = path.join(a, 'race');
    fs.mkdirSync(`${d}.dir`);
    fs.writeFileSync(path.join(`${d}.dir`, 'secret.txt'), 'alice-race');
    fs.symlinkSync(path.join(base, 'ws', 'agent-b'), `${d}.link`);
    fs.renameSync(`${d}.dir`, d);
    const swapper = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('fs'); const d = ${JSON.stringify(d)}; const end = Date.now() + 4000;
         while (Date.now() < end) { try { fs.renameSync(d, d + '.dir'); fs.renameSync(d + '.link', d); fs.renameSync(d, d + '.link'); fs.renameSync(d + '.dir', d); } catch {} }`,
      ],
      { stdio: 'ignore' },
    );
    try {
      const seen = new Map<string, number>();
      for (let i = 0; i < 6; i++) {
        // The worker's path and the host's path (a `..` form always goes to the host).
        const r = await w.run(
          ALICE,
          `const got = {}; for (let i = 0; i < 1500; i++) { for (const p of ['race/secret.txt', 'sub/../race/secret.txt']) { let k; try { k = p + ' -> ' + read_file(p) } catch (e) { k = p + ' -> ' + e.name + ': ' + e.message } got[k] = (got[k] || 0) + 1 } } return got`,
          20,
        );
        expect(r.success, JSON.stringify(r)).toBe(true);
        assertClean(r);
        for (const [k, n] of Object.entries(r.result as Record<string, number>)) seen.set(k, (seen.get(k) ?? 0) + n);
        const victim = await w.run(CAROL, "return read_file('secret.txt')");
        expect(victim.result).toBe(SECRETS[1]);
      }
      // Never the sibling's content, never a raw file system error (the host's stat used to throw
      // Node's "ENOENT: no such file or directory, stat '<path>'" at the guest).
      for (const k of seen.keys()) {
        expect(k).toMatch(/^(sub\/\.\.\/)?race\/secret.txt -> (alice-race|FileNotFoundError: File not found: "(sub\/\.\.\/)?race\/secret.txt"|PermissionError: Access denied: "(sub\/\.\.\/)?race\/secret.txt" leads outside the workspace)$/);
      }
      expect(seen.get('race/secret.txt -> alice-race')).toBeGreaterThan(0);
      expect(seen.get('sub/../race/secret.txt -> alice-race')).toBeGreaterThan(0);
    } finally {
      swapper.kill('SIGKILL');
    }
  }, 90_000);

  it.runIf(linux)('HOLE 2 end to end: a file whose size a co-tenant keeps flipping is read at most once over, in the worker never past the limit', async () => {
    const file = path.join(a, 'flip.txt');
    fs.writeFileSync(file, 'flip-small');
    const flipper = spawn(
      process.execPath,
      ['-e', `const fs = require('fs'); const f = ${JSON.stringify(file)}; const end = Date.now() + 3000; while (Date.now() < end) { fs.truncateSync(f, 64 * 1024 * 1024); fs.writeFileSync(f, 'flip-small') }`],
      { stdio: 'ignore' },
    );
    try {
      const pid = w.sandboxPid();
      const before = rchar(pid);
      const r = await w.run(
        ALICE,
        `const got = {}; for (let i = 0; i < 3000; i++) { let k; try { const c = read_file('flip.txt'); k = c.length <= ${MAX_BYTES} && /^[a-z\\0-]*$/.test(c) ? 'ok' : 'bad ' + c.length } catch (e) { k = e.name + ': ' + e.message.replace(/\\d+ bytes,/, 'N bytes,') } got[k] = (got[k] || 0) + 1 } return got`,
        30,
      );
      const workerRead = rchar(pid) - before;
      expect(r.success, JSON.stringify(r)).toBe(true);
      for (const k of Object.keys(r.result as object)) {
        // Never content past the limit (the host used to read whatever the file had grown to after its
        // stat); a read torn by the co-tenant's rewrite is the file's own bytes, within the limit.
        expect(k).toMatch(/^(ok|WorkspaceError: "flip.txt" (is N bytes, over|grew past) the 1048576-byte file limit( while it was read)?|FileNotFoundError: File not found: "flip.txt")$/);
      }
      // 3000 reads of a 10-byte file plus the host replies: far below one 64 MiB read.
      expect(workerRead).toBeLessThan(32 * 1024 * 1024);
      const victim = await w.run(BOB, "return read_file('secret.txt')");
      expect(victim.result).toBe(SECRETS[0]);
    } finally {
      flipper.kill('SIGKILL');
    }
  }, 90_000);
  it('tricky but legal names: the worker answers exactly as the host does (content or message), and serves the plain ones itself', async () => {
    const names = [
      '\u00e9-nfc.txt',
      'e\u0301-nfd.txt',
      'sp ace.txt',
      ' lead.txt',
      'trail .txt',
      '...',
      '-dash',
      'serversX.txt',
      'servers.txt',
      '\uff53ervers.txt',
      '\u4e2d'.repeat(85),
      '\u{1F600}\u{1F601}.txt',
      '\u200b.txt',
      'x'.repeat(255),
      `${'d/'.repeat(300)}f`,
      `${'L/'.repeat(509)}z`, // 1019 characters: with the host's 3-character prefix, still under the 1024 limit
    ];
    names.forEach((n, i) => {
      fs.mkdirSync(path.dirname(path.join(a, n)), { recursive: true });
      fs.writeFileSync(path.join(a, n), `content-${i}`);
    });
    const probes = [
      ...names,
      'e\u0301-nfc.txt', // the other normalization of each: a different name on Linux, for both readers
      '\u00e9-nfd.txt',
      'x'.repeat(256),
      '\ud800.txt', // a lone surrogate
      'SERVERS.TXT',
    ];
    const viaHost = probes.map((p) => `.//${p}`); // an empty segment always goes to the host, which normalizes it to p
    const hostBefore = w.hostReads();
    const fast = await w.run(ALICE, `const paths = ${JSON.stringify(probes)};${PROBE}`);
    const fastHostCalls = w.hostReads() - hostBefore;
    const host = await w.run(ALICE, `const paths = ${JSON.stringify(viaHost)};${PROBE}`);
    assertClean(fast);
    assertClean(host);
    const f = fast.result as Probed[];
    const h = host.result as Probed[];
    probes.forEach((p, i) => {
      expect(f[i]!.ok, p).toBe(h[i]!.ok);
      expect(f[i]!.name, p).toBe(h[i]!.name);
      // The host names the path as it was given.
      expect(f[i]!.message?.replace(JSON.stringify(p.slice(0, 117)), 'P'), p).toBe(h[i]!.message?.replace(JSON.stringify(`.//${p}`.slice(0, 117)), 'P'));
      if (f[i]!.ok === undefined) assertPlainError(f[i]!, p);
    });
    names.forEach((n, i) => expect(f[i]!.ok, n).toBe(`content-${i}`));
    const tooLong = await w.run(ALICE, `try { return read_file(${JSON.stringify(`${'L/'.repeat(511)}zzz`)}) } catch (e) { return [e.name, e.message] }`);
    expect(tooLong.result).toEqual(['WorkspaceError', 'filename is 1025 characters; the limit is 1024']);
    // Every existing plain name was served in the worker; only the misses went to the host.
    expect(fastHostCalls).toBe(probes.length - names.length);
  });

  it('a guest cannot retarget the reader: tampering with the intrinsics it uses fails, and every agent after it reads its own file', async () => {
    fs.mkdirSync(path.join(a, 'servers'), { recursive: true });
    const r = await w.run(
      ALICE,
      `const tries = {
        startsWith: () => { String.prototype.startsWith = () => true },
        includes: () => { Array.prototype.includes = () => false },
        every: () => { Array.prototype.every = () => true },
        split: () => { String.prototype.split = function () { return ['..'] } },
        slice: () => { String.prototype.slice = () => '../agent-b/secret.txt' },
        regexpTest: () => { RegExp.prototype.test = () => true },
        regexpSplit: () => { RegExp.prototype[Symbol.split] = () => [] },
        objectRoot: () => { Object.defineProperty(Object.prototype, 'root', { get() { return '/' }, configurable: true }) },
        objectHostOnly: () => { Object.prototype.hostOnly = [] },
        objectReadGrant: () => { Object.prototype.readGrant = { root: '/', maxBytes: 1e9, hostOnly: [] } },
        bufferToString: () => { Uint8Array.prototype.toString = () => 'FORGED' },
        stash: () => { Object.prototype.stashed = read_file },
        functionProto: () => { Function.prototype.call = () => 'FORGED' },
      };
      const out = {};
      for (const [k, f] of Object.entries(tries)) { try { f(); out[k] = 'changed' } catch (e) { out[k] = e.name } }
      let climb; try { climb = read_file('../agent-b/secret.txt') } catch (e) { climb = e.name }
      return { out, own: read_file('mine.txt'), climb };`,
    );
    assertClean(r);
    const res = r.result as { out: Record<string, string>; own: string; climb: string };
    for (const [k, v] of Object.entries(res.out)) expect(v, k).toBe('TypeError');
    expect(res.own).toBe('alice-data');
    expect(res.climb).toBe('PermissionError');
    expect((await w.run(BOB, "return read_file('secret.txt')")).result).toBe(SECRETS[0]);
    expect((await w.run(CAROL, "return [read_file('secret.txt'), typeof Object.prototype.stashed, typeof Object.prototype.readGrant]")).result).toEqual([SECRETS[1], 'undefined', 'undefined']);
  });

  it('the grant, its root and the descriptors are out of reach: no endowment, proxy or error carries a host path', async () => {
    const r = await w.run(
      ALICE,
      `const strings = new Set(); const seen = new Set(); const queue = [globalThis];
      let nodes = 0;
      while (queue.length && nodes < 20000) {
        const o = queue.shift(); if ((typeof o !== 'object' && typeof o !== 'function') || o === null || seen.has(o)) continue;
        seen.add(o); nodes++;
        let keys = []; try { keys = Reflect.ownKeys(o) } catch {}
        for (const k of keys) {
          strings.add(String(k));
          let d; try { d = Object.getOwnPropertyDescriptor(o, k) } catch { continue }
          if (!d || !('value' in d)) continue;
          if (typeof d.value === 'string') strings.add(d.value); else queue.push(d.value);
        }
        try { queue.push(Object.getPrototypeOf(o)) } catch {}
      }
      const probes = {};
      const tryIt = (k, f) => { try { const v = f(); probes[k] = typeof v === 'object' && v !== null ? Object.keys(v) : String(v) } catch (e) { probes[k] = e.name + ': ' + e.message } };
      tryIt('tools.readGrant', () => tools.readGrant);
      tryIt('tools.task', () => tools.task);
      tryIt('tools.__proto__', () => tools.__proto__);
      tryIt('proto of tools', () => Object.getPrototypeOf(tools));
      tryIt('tools.constructor', () => tools.constructor);
      tryIt('read_file.caller', () => read_file.caller);
      tryIt('read_file.arguments', () => read_file.arguments);
      tryIt('read_file keys', () => Reflect.ownKeys(read_file).join());
      tryIt('read_file.constructor this', () => read_file.constructor('return this')() === globalThis);
      tryIt('workspace', () => workspace);
      for (const bad of ['missing.txt', 'sub', 'pipe', 'huge.bin', 'sibling/secret.txt', 'x'.repeat(300), 'a'.repeat(2000)]) tryIt('read ' + bad.slice(0, 20), () => read_file(bad));
      return { nodes, hits: [...strings].filter((s) => /readGrant|hostOnly|maxBytes|\\/tmp|\\/proc|\\/home|cem-/.test(s)), probes };`,
    );
    assertClean(r);
    const res = r.result as { nodes: number; hits: string[]; probes: Record<string, unknown> };
    expect(res.nodes).toBeGreaterThan(100);
    expect(res.hits).toEqual([]);
    expect(res.probes['workspace']).toBe('agent-a');
    expect(res.probes['read_file keys']).toBe('length,name');
    expect(String(res.probes['read_file.caller'])).toMatch(/^(undefined|TypeError: .*)$/);
    // A host function's constructor is the tamed Function: no way to the host's global object.
    expect(res.probes['read_file.constructor this']).toBe('TypeError: Function.prototype.constructor is not a valid constructor.');
    expect(res.probes['tools.readGrant']).not.toEqual(expect.arrayContaining(['root']));
  });

  it('workspace "none" never gets content, on the same worker right after calls that could read, and "read" reads only its own folder', async () => {
    const none = { ...FULL_PERMISSIONS, workspace: 'none' as const };
    const read = { ...FULL_PERMISSIONS, workspace: 'read' as const };
    const paths = ['mine.txt', './mine.txt', 'sub/deep.txt', 'inner-link.txt', 'sibling/secret.txt', '../agent-b/secret.txt'];
    for (let i = 0; i < 3; i++) {
      const full = await w.run(ALICE, "return read_file('mine.txt')");
      expect(full.result).toBe('alice-data');
      const hostBefore = w.hostReads();
      const denied = await w.run({ ...ALICE, agent: 'dave', permissions: none }, `const paths = ${JSON.stringify(paths)};${PROBE}`);
      assertClean(denied);
      expect(w.hostReads() - hostBefore).toBe(paths.length); // no grant: every read asked the host
      for (const [j, p] of paths.entries()) {
        const got = (denied.result as Probed[])[j]!;
        expect(got.ok, p).toBeUndefined();
        expect(got.name).toBe('PermissionError');
        expect(got.message).toBe(
          'permission denied: read_file needs the "workspace" permission "read", and agent "dave" has "none". An operator can grant it in the agent\'s "permissions.workspace" in the daemon configuration.',
        );
      }
      // The same agent flipped to none between two reading calls.
      const flipped = await w.run({ ...ALICE, permissions: none }, "try { return read_file('mine.txt') } catch (e) { return e.name }");
      expect(flipped.result).toBe('PermissionError');
      const ro = await w.run({ ...CAROL, permissions: read }, "return [read_file('secret.txt'), (() => { try { return read_file('../agent-a/mine.txt') } catch (e) { return e.name } })()]");
      expect(ro.result).toEqual([SECRETS[1], 'PermissionError']);
    }
  });

  it('servers/ is the host view for each agent, never a real folder planted under it', async () => {
    fs.writeFileSync(path.join(a, 'servers', 'x.ts'), 'SHADOW-FILE');
    const hostBefore = w.hostReads();
    const r = await w.run(ALICE, "return [read_file('servers/x.ts'), read_file('./servers/x.ts')]");
    expect(r.result).toEqual(['virtual view for alice', 'virtual view for alice']);
    expect(w.hostReads() - hostBefore).toBe(2);
    const b = await w.run(BOB, "return read_file('servers/x.ts')");
    expect(b.result).toBe('virtual view for bob');
  });

  it('token estimate: many large reads give an exact, finite, integer figure, marked estimated, and the coordinator carries on', async () => {
    fs.writeFileSync(path.join(a, 'mb.txt'), 'y'.repeat(MAX_BYTES));
    const before = w.executor.stats().context_savings!.tokens_in;
    const r = await w.run(ALICE, "let n = 0; for (let i = 0; i < 300; i++) n += read_file('mb.txt').length; return n", 30);
    expect(r.result).toBe(300 * MAX_BYTES);
    expect(r.context_savings).toMatchObject({ tokens_in: (300 * MAX_BYTES) / 4, estimated: true });
    expect(Number.isSafeInteger(r.context_savings!.tokens_in)).toBe(true);
    expect(w.executor.stats().context_savings!.tokens_in - before).toBe((300 * MAX_BYTES) / 4);
    const victim = await w.run(CAROL, "return read_file('secret.txt')");
    expect(victim.result).toBe(SECRETS[1]);
    expect(victim.context_savings?.tokens_in).toBe(Math.ceil(SECRETS[1]!.length / 4));
  });

  it('reads at every stack depth near the limit: only intrinsic RangeErrors, right content otherwise, and no descriptor leaks in the shared process', async () => {
    const fds = (): number => fs.readdirSync(`/proc/${w.sandboxPid()}/fd`).length;
    const before = fds();
    const wrappers = Array.from({ length: 24 }, (_, k) => `(r) => { ${Array.from({ length: k }, (_, i) => `let v${i} = r.length + ${i};`).join(' ')} const c = r('mine.txt'); return ${k ? `${Array.from({ length: k }, (_, i) => `v${i}`).join('+')} > -1 ? c : c` : 'c'}; }`);
    const r = await w.run(
      ALICE,
      `const wrappers = [${wrappers.join(',\n')}];
      const seen = {}; let ok = 0;
      for (let round = 0; round < 48; round++) {
        let budget = 0; const wr = wrappers[round % wrappers.length];
        const f = () => { try { f() } catch {} if (budget++ < 600) { try { const c = wr(read_file); if (c === 'alice-data') ok++; else seen['wrong ' + c] = 1 } catch (e) { const k = (Object.getPrototypeOf(e) === RangeError.prototype ? 'RangeError' : 'other ' + e.name) + ': ' + e.message; seen[k] = (seen[k] || 0) + 1 } } };
        f();
      }
      return { ok, seen };`,
      30,
    );
    expect(r.success, JSON.stringify(r).slice(0, 500)).toBe(true);
    assertClean(r);
    const res = r.result as { ok: number; seen: Record<string, number> };
    expect(Object.keys(res.seen)).toEqual(['RangeError: Maximum call stack size exceeded']);
    expect(res.ok).toBeGreaterThan(1000);
    expect(fds()).toBeLessThanOrEqual(before);
  }, 60_000);
  it("the attacker's whole namespace folder swapped for a link to the sibling's: neither reader follows it", async () => {
    const mineDir = path.join(base, 'ws', 'agent-a');
    // Swapped after the namespace is in use (its real path is known). A folder that is a link
    // before first use is taken as the namespace's real place (an operator may link one out).
    expect((await w.run(ALICE, "return read_file('mine.txt')")).result).toBe('alice-data');
    fs.renameSync(mineDir, `${mineDir}.parked`);
    fs.symlinkSync(path.join(base, 'ws', 'agent-b'), mineDir);
    try {
      const r = await w.run(ALICE, `const paths = ['secret.txt', './secret.txt', 'zz/../secret.txt'];${PROBE}`);
      assertClean(r);
      for (const got of r.result as Probed[]) {
        expect(got.ok).toBeUndefined();
        expect(got.name).toBe('PermissionError');
      }
    } finally {
      fs.rmSync(mineDir);
      fs.renameSync(`${mineDir}.parked`, mineDir);
    }
    expect((await w.run(ALICE, "return read_file('mine.txt')")).result).toBe('alice-data');
  });

  // Reads served in the worker add up in the task's shared buffer, which the pool host reads when
  // the call ends, however it ends: a terminated thread's reads are counted too.
  it('a call that reads in the worker and then times out still counts what it read', async () => {
    fs.writeFileSync(path.join(a, 'mb2.txt'), 'y'.repeat(MAX_BYTES));
    const r = await w.run(ALICE, "for (let i = 0; i < 20; i++) read_file('mb2.txt'); for (;;) {}", 1);
    expect(r.error_type).toBe('TimeoutError');
    expect(r.context_savings?.tokens_in).toBeGreaterThanOrEqual((20 * MAX_BYTES) / 4);
  });
  it('odd files a co-tenant plants (unreadable, a symlink loop, invalid UTF-8): a clear error or the same text the host gives', async () => {
    fs.writeFileSync(path.join(a, 'locked.txt'), 'LOCKED');
    fs.chmodSync(path.join(a, 'locked.txt'), 0o000);
    fs.symlinkSync(path.join(a, 'loop2'), path.join(a, 'loop1'));
    fs.symlinkSync(path.join(a, 'loop1'), path.join(a, 'loop2'));
    fs.writeFileSync(path.join(a, 'bad-utf8.txt'), Buffer.from([0x41, 0xff, 0xfe, 0xc3, 0x28, 0x42]));
    const paths = ['locked.txt', 'loop1/x.txt', 'bad-utf8.txt'];
    const fast = await w.run(ALICE, `const paths = ${JSON.stringify(paths)};${PROBE}`);
    const host = await w.run(ALICE, `const paths = ${JSON.stringify(paths.map((p) => `.//${p}`))};${PROBE}`);
    const f = fast.result as Probed[];
    const h = host.result as Probed[];
    expect(JSON.stringify(fast)).not.toContain(base);
    if (process.getuid?.() !== 0) {
      expect(f[0]).toMatchObject({ name: 'WorkspaceError', message: '"locked.txt" could not be opened (EACCES)' });
      assertPlainError(f[0]!, 'locked');
    }
    expect(f[1]).toMatchObject({ name: 'FileNotFoundError', message: 'File not found: "loop1/x.txt"' });
    expect(f[2]!.ok).toBe('A\ufffd\ufffd\ufffd(B');
    expect(h[2]!.ok).toBe(f[2]!.ok);
    fs.chmodSync(path.join(a, 'locked.txt'), 0o600);
  });
});
