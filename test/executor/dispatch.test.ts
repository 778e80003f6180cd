// The isolation rule at the pool's dispatch: a Python process (one interpreter) that ran one
// agent's code never runs another agent's until it was recycled or replaced by a fresh process.
// Seen from outside: the pid each agent's call ran on, the pool's recycle count, and state one
// agent plants in the interpreter, which the next agent on that process must not see.

import { afterAll, beforeAll, expect, it } from 'vitest';
import { createExecutor, createHostApi } from '../../src/executor/index.js';
import type { CallIdentity, PooledExecutor } from '../../src/executor/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { Workspace } from '../../src/workspace/index.js';
import { FULL_PERMISSIONS, testConfig } from '../fixtures/config.js';
import { PYTHON_START_MS } from '../python/helpers.js';

const who = (agent: string): CallIdentity => ({ agent, sessionId: `s-${agent}`, workspaceNamespace: agent, permissions: FULL_PERMISSIONS });
let executor: PooledExecutor;

/** Which agent each Python pid last served, and the pool's recycle count at that moment. */
const owners = new Map<number, { agent: string; recycles: number }>();

async function python(agent: string, code: string): Promise<{ result: unknown; pid: number }> {
  const r = await executor.execute({ code, language: 'python', timeoutSeconds: PYTHON_START_MS / 1000 - 10, memoryMb: 256 }, who(agent));
  expect(r.success, `${r.error_type}: ${r.error}`).toBe(true);
  const proc = executor.processes().find((p) => p.kind === 'python' && p.agent === agent);
  expect(proc?.pid).toBeDefined();
  const pid = proc?.pid as number;
  const recycles = executor.health().python?.recycles ?? 0;
  const before = owners.get(pid);
  // The same pid serving another agent is allowed only after a recycle in between.
  if (before && before.agent !== agent) expect(recycles).toBeGreaterThan(before.recycles);
  owners.set(pid, { agent, recycles });
  return { result: r.result, pid };
}

beforeAll(async () => {
  const config = testConfig({ sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 2 } });
  const workspace = new Workspace({ root: config.workspaceDir, maxFileBytes: config.limits.maxFileBytes });
  // A recycle this branch's processes do not answer falls back to a fresh process after 2 s.
  executor = await createExecutor({ config, hostApi: createHostApi({ config, workspace, logger: silentLogger() }), logger: silentLogger(), workspace, pool: { recycleTimeoutMs: 2_000 } });
}, PYTHON_START_MS);

afterAll(async () => {
  await executor?.close();
});

const PLANT = "import string\nstring.Template.delimiter = '#'\nresult = string.Template.delimiter";
const PROBE = 'import string\nresult = string.Template.delimiter';

it('gives each agent its own Python process, and a third agent a recycled or fresh one, never a used one', async () => {
  const alice = await python('alice', PLANT);
  expect(alice.result).toBe('#');
  // The same agent keeps its process (and, documented, what it planted there).
  const again = await python('alice', PROBE);
  expect(again.pid).toBe(alice.pid);

  const bob = await python('bob', PROBE);
  expect(bob.pid).not.toBe(alice.pid);
  expect(bob.result).toBe('$');

  // No pristine process left: the least recently used idle one (alice's) is recycled for carol.
  const carol = await python('carol', PROBE);
  expect(carol.result).toBe('$');
  expect(carol.pid).not.toBe(bob.pid);
  expect(executor.health().python?.recycles).toBeGreaterThanOrEqual(1);

  // Alice comes back: her interpreter was recycled, so bob's (now least recently used) is.
  const back = await python('alice', PROBE);
  expect(back.result).toBe('$');
  expect(back.pid).not.toBe(carol.pid);
  expect(executor.health().python).toMatchObject({ processes: 2, canRun: true });
}, 4 * PYTHON_START_MS);
