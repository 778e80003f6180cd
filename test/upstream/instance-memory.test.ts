// Per-agent upstream instances have a bound in bytes. Each agent's instance of a stateful server
// holds what that agent put in it; bounded by count only (32 instances), one agent could fill its
// own instance until the host ran out of memory for everyone. Now an instance whose process tree
// holds more than the server's `max_memory_mb` is closed at the agent's next call, which is
// refused with a message naming the bound; the other agent's instance and its state are untouched.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamManager } from '../../src/upstream/index.js';
import { processTreeRssMb } from '../../src/upstream/instance-memory.js';
import { captureLogger, rejection } from './helpers.js';

const hoarding = { command: process.execPath, args: [fileURLToPath(new URL('../fixtures/upstream/hoarding-server.mjs', import.meta.url))] };
const ALICE = { agent: 'alice', workspaceNamespace: 'alice' };
const BOB = { agent: 'bob', workspaceNamespace: 'bob' };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let manager: UpstreamManager;

beforeAll(async () => {
  manager = new UpstreamManager({ servers: { hoard: { ...hoarding, instances: 'per-agent', max_memory_mb: 150 } }, logger: captureLogger().logger });
  await manager.start();
}, 60_000);

afterAll(async () => {
  await manager?.close();
});

const held = async (caller: typeof ALICE): Promise<number> => Number(await manager.callTool('hoard', 'held', {}, { caller }));

describe('the memory bound of a per-agent upstream instance', () => {
  it("refuses alice's call once her instance holds more than max_memory_mb, closes it, and leaves bob's alone", async () => {
    await manager.callTool('hoard', 'hoard', { mb: 10 }, { caller: BOB });
    await manager.callTool('hoard', 'hoard', { mb: 200 }, { caller: ALICE });
    await sleep(1_100); // the bound is read at most once a second
    const refused = await rejection(manager.callTool('hoard', 'held', {}, { caller: ALICE }));
    expect(refused.code).toBe('SERVER_UNAVAILABLE');
    expect(refused.message).toMatch(/this caller's per-agent instance held \d+ MB, over its 150 MB bound \(mcpServers\.hoard\.max_memory_mb\); it was closed/);
    // Her next call starts a fresh instance (what it held is gone); bob's kept his.
    expect(await held(ALICE)).toBe(0);
    expect(await held(BOB)).toBe(10);
  }, 60_000);

  it('reads a process and its children', () => {
    const own = processTreeRssMb(process.pid) ?? 0;
    expect(own).toBeGreaterThan(10);
    expect(processTreeRssMb(2 ** 22 + 1)).toBeUndefined();
  });
});
