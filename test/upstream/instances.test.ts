// Stateful upstream servers: 'per-agent' gives each agent its own instance of the real
// server-memory (lazily started, idle ones closed) and max_concurrency 1 serializes the calls to
// each, so concurrent writers lose nothing and see only their own graph; the queue is FIFO,
// bounded and abort-aware.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConcurrencyLimit } from '../../src/upstream/concurrency-limit.js';
import { configFor } from '../../src/upstream/server-instances.js';
import { UpstreamError, UpstreamManager } from '../../src/upstream/index.js';
import { captureLogger, everythingConfig, memoryConfig, rejection, waitFor } from './helpers.js';

let dir: string;
let manager: UpstreamManager;
let clock = 0;

const ALICE = { agent: 'alice', workspaceNamespace: 'alice' };
const BOB = { agent: 'bob', workspaceNamespace: 'bob' };

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'upstream-instances-')));
  manager = new UpstreamManager({
    servers: {
      // server-memory rewrites its whole file on every change: even one agent's concurrent calls
      // race each other inside one process, so it needs max_concurrency 1 as well.
      memory: { ...memoryConfig(join(dir, 'memory-${agent}.jsonl')), instances: 'per-agent', max_concurrency: 1 },
      shelf: { ...memoryConfig(join(dir, 'shelf-${workspace}.jsonl')), instances: 'per-workspace' },
      slow: { ...everythingConfig(), max_concurrency: 1 },
    },
    logger: captureLogger().logger,
    instanceIdleMs: 60_000,
    now: () => clock,
  });
  await manager.start();
}, 60_000);

afterAll(async () => {
  await manager?.close();
  rmSync(dir, { recursive: true, force: true });
});

function entities(agent: string, count: number): { name: string; entityType: string; observations: string[] }[] {
  return Array.from({ length: count }, (_, i) => ({ name: `${agent}-${i}`, entityType: 'note', observations: [`written by ${agent}`] }));
}

async function graphNames(caller: { agent: string; workspaceNamespace: string }, server = 'memory'): Promise<string[]> {
  const graph = (await manager.callTool(server, 'read_graph', {}, { caller })) as { entities: { name: string }[] };
  return graph.entities.map((e) => e.name).sort();
}

describe("per-agent instances of the real server-memory", () => {
  it('lists the tools once, from the template, before any agent called', () => {
    expect(manager.tools('memory').map((t) => t.name)).toEqual(expect.arrayContaining(['create_entities', 'read_graph']));
    expect(manager.status()['memory']).toMatchObject({ state: 'ready', instances_mode: 'per-agent', instances: 0 });
  });

  it('two agents writing concurrently lose nothing and never see each other\'s entities', async () => {
    // 40 single-entity writes per agent, all in flight together.
    const writes = [ALICE, BOB].flatMap((caller) =>
      entities(caller.agent, 40).map((entity) => manager.callTool('memory', 'create_entities', { entities: [entity] }, { caller })),
    );
    await Promise.all(writes);
    expect(await graphNames(ALICE)).toEqual(entities('alice', 40).map((e) => e.name).sort());
    expect(await graphNames(BOB)).toEqual(entities('bob', 40).map((e) => e.name).sort());
    expect(manager.status()['memory']).toMatchObject({ instances: 2 });
  }, 60_000);

  it('per-workspace: agents sharing a namespace share an instance, others do not', async () => {
    const carol = { agent: 'carol', workspaceNamespace: 'team' };
    const dave = { agent: 'dave', workspaceNamespace: 'team' };
    await manager.callTool('shelf', 'create_entities', { entities: entities('carol', 1) }, { caller: carol });
    expect(await graphNames(dave, 'shelf')).toEqual(['carol-0']);
    expect(await graphNames(ALICE, 'shelf')).toEqual([]);
    expect(manager.status()['shelf']).toMatchObject({ instances: 2 });
  }, 60_000);

  it('closes idle instances; the next call starts a fresh one on the same file', async () => {
    clock += 60_000;
    expect(manager.sweepIdleInstances()).toBeGreaterThanOrEqual(2);
    expect(manager.status()['memory']).toMatchObject({ instances: 0 });
    expect(await graphNames(ALICE)).toHaveLength(40);
    expect(manager.status()['memory']).toMatchObject({ instances: 1 });
  }, 60_000);

  it('the template never takes calls, and an unknown tool is refused without starting an instance', async () => {
    const before = manager.status()['memory']?.instances;
    const error = await rejection(manager.callTool('memory', 'read_grahp', {}, { caller: { agent: 'erin', workspaceNamespace: 'erin' } }));
    expect(error.code).toBe('UNKNOWN_TOOL');
    expect(error.message).toContain('memory.read_graph');
    expect(manager.status()['memory']?.instances).toBe(before);
  });
});

describe('max_concurrency', () => {
  const op = { duration: 0.3, steps: 1 };

  it('runs one call at a time, the rest wait in order', async () => {
    const finished: number[] = [];
    const calls = [0, 1, 2].map((i) => manager.callTool('slow', 'trigger-long-running-operation', op).then(() => finished.push(i)));
    await waitFor(() => manager.status()['slow']?.waiting === 2, 'two calls waiting for the one slot');
    await Promise.all(calls);
    expect(finished).toEqual([0, 1, 2]);
    expect(manager.status()['slow']?.waiting).toBe(0);
  }, 30_000);

  it('a waiting call that is aborted leaves the queue and never runs', async () => {
    const first = manager.callTool('slow', 'trigger-long-running-operation', op);
    const abort = new AbortController();
    const second = rejection(manager.callTool('slow', 'trigger-long-running-operation', op, { signal: abort.signal }));
    await waitFor(() => manager.status()['slow']?.waiting === 1, 'the second call waiting');
    abort.abort('gave up');
    const error = await second;
    expect(error.code).toBe('ABORTED');
    expect(manager.status()['slow']?.waiting).toBe(0);
    await first;
  }, 30_000);
});

describe('ConcurrencyLimit', () => {
  const refuse = {
    full: (n: number) => new UpstreamError('SERVER_UNAVAILABLE', `queue full (${n})`),
    aborted: () => new UpstreamError('ABORTED', 'aborted'),
  };

  it('hands slots over first in, first out and refuses past the queue bound', async () => {
    const limit = new ConcurrencyLimit(1, 2);
    const release = await limit.acquire(undefined, refuse);
    const order: string[] = [];
    const a = limit.acquire(undefined, refuse).then((r) => (order.push('a'), r));
    const b = limit.acquire(undefined, refuse).then((r) => (order.push('b'), r));
    await expect(limit.acquire(undefined, refuse)).rejects.toThrow('queue full (2)');
    release();
    release(); // idempotent: frees one slot only
    (await a)();
    (await b)();
    expect(order).toEqual(['a', 'b']);
    expect(limit.active).toBe(0);
  });
});

describe('configFor', () => {
  it('puts the caller into args, env and cwd, and a file-name-safe spelling of odd names', () => {
    const config = configFor({ command: 'node', args: ['--db', '/d/${agent}.db'], env: { FILE: '/m/${workspace}.jsonl' }, cwd: '/w/${agent}' }, { agent: 'a_b', workspace: '_root' });
    expect(config).toMatchObject({ args: ['--db', '/d/a_b.db'], env: { FILE: '/m/_root.jsonl' }, cwd: '/w/a_b' });
  });
});
