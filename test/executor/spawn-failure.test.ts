// A sandbox process whose replacement cannot even be forked (EMFILE, EAGAIN: Node emits 'error' and
// never 'exit'; ENOMEM: fork throws) is retried with back-off until one starts; meanwhile health()
// says JavaScript is down, and the daemon serves again once a fork succeeds.

import { fork } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { expect, it } from 'vitest';
import { createExecutor, createHostApi } from '../../src/executor/index.js';
import type { CallIdentity, PooledExecutor } from '../../src/executor/index.js';
import type { LaunchSandbox, SandboxChild } from '../../src/executor/sandbox-process.js';
import { silentLogger } from '../../src/util/logger.js';
import { Workspace } from '../../src/workspace/index.js';
import { FULL_PERMISSIONS, testConfig } from '../fixtures/config.js';

const agent: CallIdentity = { agent: 'a', sessionId: 's', workspaceNamespace: '', permissions: FULL_PERMISSIONS };

/** A child_process whose fork failed the way Node reports EMFILE/EAGAIN: 'error', no pid, no 'exit'. */
function failedFork(code: 'EMFILE' | 'EAGAIN'): SandboxChild {
  const child = Object.assign(new EventEmitter(), { pid: undefined, connected: false, send: () => false, kill: () => false });
  process.nextTick(() => child.emit('error', Object.assign(new Error(`spawn ${code}`), { code, errno: -24, syscall: 'spawn' })));
  return child;
}

async function until(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = performance.now() + ms;
  while (!check()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

it('replaces a process whose respawn fails with EMFILE, EAGAIN or a throwing fork, and reports down until then', async () => {
  const config = testConfig({ sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 0 } });
  const workspace = new Workspace({ root: config.workspaceDir, maxFileBytes: config.limits.maxFileBytes });
  const failures: (() => SandboxChild)[] = [];
  let launches = 0;
  const launch: LaunchSandbox = (script, args, options) => {
    launches++;
    const fail = failures.shift();
    return fail ? fail() : fork(script, [...args], options);
  };
  const executor: PooledExecutor = await createExecutor({ config, hostApi: createHostApi({ config, workspace, logger: silentLogger() }), logger: silentLogger(), workspace, pool: { launch } });
  try {
    expect(executor.health()).toMatchObject({ status: 'ok', javascript: { ready: 1, canRun: true } });
    failures.push(
      () => failedFork('EMFILE'),
      () => failedFork('EAGAIN'),
      () => {
        throw Object.assign(new Error('spawn ENOMEM'), { code: 'ENOMEM' });
      },
    );
    const victim = executor.processes()[0]?.pid as number;
    process.kill(victim, 'SIGKILL');
    await until(() => executor.health().javascript.failedStartsInARow >= 2, 'two failed respawns');
    expect(executor.health()).toMatchObject({ status: 'down', javascript: { ready: 0, canRun: false } });
    // A call made while nothing can run waits for the replacement instead of failing.
    const call = executor.execute({ code: 'return "served again"', language: 'javascript', timeoutSeconds: 30, memoryMb: 256 }, agent);
    await until(() => executor.health().status === 'ok', 'a replacement to start');
    expect(await call).toMatchObject({ success: true, result: 'served again' });
    expect(launches).toBe(5);
    expect(executor.health().javascript).toMatchObject({ ready: 1, failedStartsInARow: 0, restarts: 4 });
    expect(executor.processes()[0]?.pid).not.toBe(victim);
  } finally {
    await executor.close();
  }
}, 60_000);
