// A sandbox process answers 'shutdown' at once (issue 35, item 1): every thread is ended and the
// process exits, with no wait for the coordinator's 2,000 ms backstop (on-demand.ts stopProcesses),
// whether it is idle or a call runs. Before, a JavaScript process's pool never closed (each thread
// serves its link in a task that never settles) and the backstop killed it every time.

import { afterAll, beforeAll, expect, it } from 'vitest';
import { HostLinkServer } from '../../src/executor/host-link-server.js';
import { JAVASCRIPT_RUNTIME, runtimeProcess } from '../../src/executor/runtimes.js';
import { SandboxPool } from '../../src/executor/sandbox-pool.js';
import type { Finished } from '../../src/executor/sandbox-process.js';
import { silentLogger } from '../../src/util/logger.js';

let link: HostLinkServer;
beforeAll(async () => {
  link = await HostLinkServer.open(1024 * 1024, silentLogger());
});
afterAll(async () => {
  await link.close();
});

function jsPool(): SandboxPool {
  return new SandboxPool({
    process: { ...runtimeProcess(JAVASCRIPT_RUNTIME), threads: 2, maxMemoryMb: 64, memoryPollMs: 20 },
    language: 'javascript',
    label: 'JavaScript',
    count: 1,
    maxQueued: 10,
    limits: () => ({ maxInFlight: 2, maxQueued: 10 }),
    log: silentLogger(),
    hostLink: link,
  });
}

function call(pool: SandboxPool, code: string): Promise<Finished> {
  return pool.run({
    request: { code, language: 'javascript', timeoutMs: 30_000, memoryMb: 64, workspaceName: 'w', agent: 'a', fetchAllowed: false, streamOutput: false, maxArgChars: 1000 },
    deadline: performance.now() + 30_000,
    onHostCall: () => undefined,
    onOutput: () => undefined,
  });
}

it('an idle JavaScript sandbox process exits at once when asked, not at the backstop', async () => {
  const pool = jsPool();
  await pool.start();
  expect((await call(pool, 'return 1')).outcome).toMatchObject({ ok: true, value: 1 });
  const started = performance.now();
  await pool.close();
  // The backstop kills at 2,000 ms: well under it means the process answered.
  expect(performance.now() - started).toBeLessThan(1_500);
}, 60_000);

it('a JavaScript sandbox process with a call running exits at once, and the call is answered as cancelled', async () => {
  const pool = jsPool();
  await pool.start();
  const running = call(pool, 'for (;;) {}');
  await new Promise((resolve) => setTimeout(resolve, 300));
  const started = performance.now();
  await pool.close();
  expect(performance.now() - started).toBeLessThan(1_500);
  const finished = await running;
  expect(finished.outcome).toMatchObject({ ok: false, error: { type: 'CancelledError' } });
}, 60_000);
