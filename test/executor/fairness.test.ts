// One agent's flood or busy loops cannot delay another agent's call: each agent has its own queue,
// agents are served round robin, and each has a share of calls in flight and waiting. Past its
// share only the flooding agent gets OverloadedError, with a retry hint.

import { afterAll, beforeAll, expect, it } from 'vitest';
import { createExecutor, createHostApi } from '../../src/executor/index.js';
import type { CallIdentity, ExecutionResult, PooledExecutor } from '../../src/executor/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { Workspace } from '../../src/workspace/index.js';
import { FULL_PERMISSIONS, testConfig } from '../fixtures/config.js';

const base = testConfig();
const who = (agent: string): CallIdentity => ({ agent, sessionId: `s-${agent}`, workspaceNamespace: agent, permissions: FULL_PERMISSIONS });
const alice = who('alice');
const bob = who('bob');
let executor: PooledExecutor;

/** A daemon with agents configured: only then is one agent's default share all slots but one. */
const AGENTS = ['alice', 'bob', 'carol'].map((name) => ({ name, token: `token-${name}-0123456789abcdef`, permissions: FULL_PERMISSIONS }));

async function start(overrides: Parameters<typeof testConfig>[0]): Promise<PooledExecutor> {
  const config = testConfig({ agents: AGENTS, ...overrides });
  const workspace = new Workspace({ root: config.workspaceDir, maxFileBytes: config.limits.maxFileBytes });
  return createExecutor({ config, hostApi: createHostApi({ config, workspace, logger: silentLogger() }), logger: silentLogger(), workspace });
}

beforeAll(async () => {
  // Two processes: each agent may hold one (all slots but one); ten calls of one agent may wait.
  executor = await start({ limits: { ...base.limits, maxQueuedPerAgent: 10 } });
});

afterAll(async () => {
  await executor.close();
});

it("one agent's 100 busy loops neither delay another agent's call nor refuse it; only the flooder is refused past its share", async () => {
  const flood = Array.from({ length: 100 }, () => executor.execute({ code: 'while (true) {}', language: 'javascript', timeoutSeconds: 2, memoryMb: 256 }, alice));
  const startedAt = performance.now();
  const mine = await executor.execute({ code: 'return "bob ran"', language: 'javascript', timeoutSeconds: 10, memoryMb: 256 }, bob);
  const waitedMs = performance.now() - startedAt;
  expect(mine).toMatchObject({ success: true, result: 'bob ran' });
  // Far less than one of alice's busy loops (2 s): bob never waited behind her.
  expect(waitedMs).toBeLessThan(1_500);

  const results = await Promise.all(flood);
  const refused = results.filter((r) => r.error_type === 'OverloadedError');
  // One running, ten waiting, the rest refused at once.
  expect(refused).toHaveLength(89);
  expect(refused[0]?.error).toMatch(/agent "alice" already has 10 calls waiting/);
  expect(refused[0]?.error).toMatch(/other agents are not affected/);
  expect(refused[0]?.error).toMatch(/retry in about \d+ s/);
  expect(results.filter((r) => r.error_type === 'TimeoutError').length).toBe(11);
}, 60_000);

it('serves agents round robin: a late agent waits for one turn, not behind the whole queue of another', async () => {
  const single = await start({ sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 0 } });
  try {
    let aliceDone = 0;
    const aliceCalls = Array.from({ length: 10 }, (_, i) =>
      single.execute({ code: `await sleep(150); return ${i}`, language: 'javascript', timeoutSeconds: 30, memoryMb: 256 }, alice).then((r: ExecutionResult) => {
        aliceDone++;
        return r;
      }),
    );
    const bobCall = await single.execute({ code: 'return "bob"', language: 'javascript', timeoutSeconds: 30, memoryMb: 256 }, bob);
    const doneBeforeBob = aliceDone;
    expect(bobCall).toMatchObject({ success: true, result: 'bob' });
    // Alice's running call and at most her next one (she was first in the round) go before bob.
    expect(doneBeforeBob).toBeLessThanOrEqual(2);
    const all = await Promise.all(aliceCalls);
    // Alice's own calls still run in the order she sent them.
    expect(all.map((r) => r.result)).toEqual(Array.from({ length: 10 }, (_, i) => i));
  } finally {
    await single.close();
  }
}, 60_000);

it("a JavaScript call goes back to the process that last ran the same agent's call", async () => {
  const pidOf = (agent: string): number | undefined => executor.processes().find((p) => p.agent === agent)?.pid;
  const seen: Record<string, Set<number | undefined>> = { alice: new Set(), bob: new Set() };
  for (let i = 0; i < 6; i++) {
    for (const identity of [alice, bob]) {
      const r = await executor.execute({ code: `return ${i}`, language: 'javascript', timeoutSeconds: 10, memoryMb: 256 }, identity);
      expect(r.success).toBe(true);
      seen[identity.agent]?.add(pidOf(identity.agent));
    }
  }
  expect(seen.alice?.size).toBe(1);
  expect(seen.bob?.size).toBe(1);
  expect([...(seen.alice ?? [])][0]).not.toBe([...(seen.bob ?? [])][0]);
});
