// Supervision of sandbox processes: a process that dies (killed from outside, as the kernel's OOM
// killer or V8's fatal OOM would) fails exactly the calls it was running, is replaced at once,
// and the coordinator keeps serving.

import { afterAll, beforeAll, expect, it } from 'vitest';
import { createExecutor, createHostApi } from '../../src/executor/index.js';
import type { CallIdentity, PooledExecutor } from '../../src/executor/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { Workspace } from '../../src/workspace/index.js';
import { FULL_PERMISSIONS, testConfig } from '../fixtures/config.js';

const config = testConfig();
const workspace = new Workspace({ root: config.workspaceDir, maxFileBytes: config.limits.maxFileBytes });
const agent: CallIdentity = { agent: 'a', sessionId: 's', workspaceNamespace: '', permissions: FULL_PERMISSIONS };
const other: CallIdentity = { ...agent, agent: 'b', sessionId: 's2' };
let executor: PooledExecutor;

beforeAll(async () => {
  executor = await createExecutor({ config, hostApi: createHostApi({ config, workspace, logger: silentLogger() }), logger: silentLogger(), workspace });
});

afterAll(async () => {
  await executor.close();
});

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

it('fails only the calls of a killed sandbox process, replaces it, and keeps serving', async () => {
  const before = executor.processes().map((p) => p.pid);
  // One long call on each process (two agents: one agent alone may hold all slots but one); then
  // kill the process running the first.
  const calls = [agent, other].map((who) => executor.execute({ code: 'await sleep(1500); return "done"', language: 'javascript', timeoutSeconds: 20, memoryMb: 256 }, who));
  await until(() => executor.processes().every((p) => p.busy === 1), 'both processes to be busy');
  const victim = executor.processes()[0]?.pid as number;
  process.kill(victim, 'SIGKILL');
  const [first, second] = await Promise.all(calls);
  const results = [first, second];
  const failed = results.filter((r) => !r?.success);
  expect(failed).toHaveLength(1);
  expect(failed[0]).toMatchObject({ error_type: 'SandboxCrashError' });
  expect(failed[0]?.error).toMatch(/replaced/);
  expect(results.filter((r) => r?.success && r.result === 'done')).toHaveLength(1);

  await until(() => executor.processes().every((p) => p.state === 'ready'), 'the replacement to be ready');
  const after = executor.processes().map((p) => p.pid);
  expect(after).not.toContain(victim);
  expect(after.filter((pid) => before.includes(pid))).toHaveLength(1);
  expect(executor.stats().process_restarts).toBe(1);
  const next = await Promise.all([0, 1, 2, 3].map((i) => executor.execute({ code: `return ${i}`, language: 'javascript', timeoutSeconds: 10, memoryMb: 256 }, agent)));
  expect(next.map((r) => r.result)).toEqual([0, 1, 2, 3]);
});

it('queues calls beyond free threads and serves them in order of arrival', async () => {
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, i) => executor.execute({ code: `await sleep(20); return ${i}`, language: 'javascript', timeoutSeconds: 20, memoryMb: 256 }, agent)),
  );
  expect(results.map((r) => r.result)).toEqual(Array.from({ length: 12 }, (_, i) => i));
  expect(executor.stats().queued).toBe(0);
});

it('a call waiting for a process that dies before starting it runs elsewhere instead of failing', async () => {
  const base = testConfig();
  // Two calls in flight for one agent on one process: the second waits (on the direct path sent
  // ahead to the thread, where it counts as started only once the call before it answers).
  const config1 = testConfig({ sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 0 }, limits: { ...base.limits, maxCallsInFlightPerAgent: 2 } });
  const ws = new Workspace({ root: config1.workspaceDir, maxFileBytes: config1.limits.maxFileBytes });
  const single = await createExecutor({ config: config1, hostApi: createHostApi({ config: config1, workspace: ws, logger: silentLogger() }), logger: silentLogger(), workspace: ws });
  try {
    const running = single.execute({ code: 'await sleep(2000); return "a"', language: 'javascript', timeoutSeconds: 20, memoryMb: 256 }, agent);
    await until(() => single.processes()[0]?.busy === 1, 'the first call to start');
    // The only thread is busy, so this one waits.
    const waiting = single.execute({ code: 'return "b"', language: 'javascript', timeoutSeconds: 20, memoryMb: 256 }, agent);
    await until(() => single.stats().queued === 1 || single.processes()[0]?.busy === 2, 'the second call to wait');
    process.kill(single.processes()[0]?.pid as number, 'SIGKILL');
    const [a, b] = await Promise.all([running, waiting]);
    expect(a).toMatchObject({ success: false, error_type: 'SandboxCrashError' });
    expect(b).toMatchObject({ success: true, result: 'b' });
  } finally {
    await single.close();
  }
});
