// Python on demand: no Python process until a Python call needs one, idle processes exit, and
// /healthz says `idle` (not degraded) meanwhile. Waiting for an interpreter to start is not the
// call's time: neither its timeout_seconds nor its execution_time_ms count it, and the result
// says how long it waited; a call no interpreter can be started for in time says that.

import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/config-types.js';
import { createExecutor, createHostApi } from '../../src/executor/index.js';
import type { ExecutionResult, PooledExecutor } from '../../src/executor/index.js';
import { operatorHealth } from '../../src/mcp/http/health.js';
import type { McpServices } from '../../src/mcp/mcp-types.js';
import { silentLogger } from '../../src/util/logger.js';
import { Workspace } from '../../src/workspace/index.js';
import { FULL_PERMISSIONS, testConfig } from '../fixtures/config.js';
import { PYTHON_START_MS } from './helpers.js';

const open: PooledExecutor[] = [];
afterEach(async () => {
  for (const executor of open.splice(0)) await executor.close();
});

async function executorWith(sandbox: Partial<Config['sandbox']>, pool?: { startWaitMs?: number }): Promise<PooledExecutor> {
  const config = testConfig({ sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 1, ...sandbox } });
  const workspace = new Workspace({ root: config.workspaceDir, maxFileBytes: config.limits.maxFileBytes });
  const logger = silentLogger();
  const hostApi = createHostApi({ config, workspace, logger });
  const executor = await createExecutor({ config, hostApi, logger, workspace, ...(pool ? { pool } : {}) });
  open.push(executor);
  return executor;
}

function run(executor: PooledExecutor, code: string, timeoutSeconds: number, agent = 'alice'): Promise<ExecutionResult> {
  return executor.execute({ code, language: 'python', timeoutSeconds, memoryMb: 256 }, { agent, sessionId: `s-${agent}`, workspaceNamespace: agent, permissions: FULL_PERMISSIONS });
}

function pythonProcesses(executor: PooledExecutor): number {
  return executor.processes().filter((p) => p.kind === 'python' && p.state !== 'dead').length;
}

function health(executor: PooledExecutor): ReturnType<typeof operatorHealth> {
  const services = { executor, version: 'test', now: () => performance.now(), startedAtMs: performance.now() } as unknown as McpServices;
  return operatorHealth(services, { sessions: 0, connections: 0, draining: false });
}

describe('Python on demand', () => {
  it(
    'starts no Python process with the daemon; /healthz says Python is idle, and ok',
    async () => {
      const executor = await executorWith({});
      expect(pythonProcesses(executor)).toBe(0);
      expect(executor.health().python).toMatchObject({ onDemand: true, idle: true });
      const report = health(executor);
      expect(report.body.processes?.['python']).toEqual({ alive: 0, ready: 0, idle: true });
      expect(report.body.problems).toEqual([]);
      expect(report.body.status).toBe('ok');
    },
    PYTHON_START_MS,
  );

  it(
    'starts one for the first Python call; the wait is neither in its timeout nor in execution_time_ms',
    async () => {
      const executor = await executorWith({});
      // Half a second: less than an interpreter takes to start on this machine class, let alone a loaded one.
      const first = await run(executor, 'result = 1 + 1', 0.5);
      expect(first.error).toBeUndefined();
      expect(first.result).toBe(2);
      expect(first.sandbox_start_wait_ms).toBeGreaterThan(0);
      expect(first.execution_time_ms).toBeLessThan(500);
      expect(pythonProcesses(executor)).toBe(1);
      // A call that finds the interpreter ready waited for nothing.
      const second = await run(executor, 'result = 3', 5);
      expect(second.result).toBe(3);
      expect(second.sandbox_start_wait_ms).toBeUndefined();
    },
    PYTHON_START_MS,
  );

  it(
    'lets an idle Python process exit, says idle again, and starts one for the next call',
    async () => {
      const executor = await executorWith({ pythonIdleSeconds: 1 });
      expect((await run(executor, 'result = "a"', 30)).result).toBe('a');
      const until = performance.now() + 60_000;
      while (pythonProcesses(executor) > 0 && performance.now() < until) await new Promise((r) => setTimeout(r, 100));
      expect(pythonProcesses(executor)).toBe(0);
      expect(executor.health().python?.idle).toBe(true);
      expect(health(executor).body.status).toBe('ok');
      const again = await run(executor, 'result = "b"', 30);
      expect(again.result).toBe('b');
      expect(again.sandbox_start_wait_ms).toBeGreaterThan(0);
    },
    PYTHON_START_MS,
  );

  it(
    'keeps Python warm from the start when asked (sandbox.pythonWarm)',
    async () => {
      const executor = await executorWith({ pythonWarm: true });
      expect(pythonProcesses(executor)).toBe(1);
      expect(executor.health().python?.onDemand).toBeUndefined();
    },
    PYTHON_START_MS,
  );

  it(
    'says that no interpreter could be started in time, not that the daemon is busy',
    async () => {
      const executor = await executorWith({}, { startWaitMs: 1 });
      const r = await run(executor, 'result = 1', 30);
      expect(r.success).toBe(false);
      expect(r.error_type).toBe('SandboxCrashError');
      expect(r.error).toMatch(/no Python sandbox became ready within .* so the code did not run/);
      expect(r.error).not.toMatch(/busy/);
    },
    PYTHON_START_MS,
  );
});
