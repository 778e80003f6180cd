// A host call is served only with the secret key of the call it names (RunRequest.callKey, made
// per dispatch and given only to the thread that runs the call). A sandbox process whose thread
// was escaped knows other calls' ids but not their keys: what it sends in their name, over IPC or
// over the host link, reaches nobody. The stand-in process forges keys for a call it runs.

import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HostLinkServer } from '../../src/executor/host-link-server.js';
import { JAVASCRIPT_RUNTIME, runtimeProcess } from '../../src/executor/runtimes.js';
import { SandboxPool } from '../../src/executor/sandbox-pool.js';
import type { LaunchSandbox } from '../../src/executor/sandbox-process.js';
import { silentLogger } from '../../src/util/logger.js';

const FORGER = fileURLToPath(new URL('../fixtures/executor/forging-pool-host.mjs', import.meta.url));

let link: HostLinkServer;
beforeAll(async () => {
  link = await HostLinkServer.open(1024 * 1024, silentLogger());
});
afterAll(async () => {
  await link.close();
});

it('serves only host calls that carry the key of the call they name, over IPC and over the link', async () => {
  const launch: LaunchSandbox = (_script, args, options) => fork(FORGER, [...args], options);
  const pool = new SandboxPool({
    // The frame rules of the link itself: thread-links.test.ts.
    process: { ...runtimeProcess(JAVASCRIPT_RUNTIME), threads: 1, maxMemoryMb: 64, memoryPollMs: 20 },
    language: 'javascript',
    label: 'JavaScript',
    count: 1,
    maxQueued: 10,
    limits: () => ({ maxInFlight: 1, maxQueued: 10 }),
    log: silentLogger(),
    launch,
    hostLink: link,
  });
  await pool.start();
  try {
    const served: { method: string; key: string }[] = [];
    const finished = await pool.run({
      request: { code: 'x', language: 'javascript', timeoutMs: 5_000, memoryMb: 64, workspaceName: 'w', agent: 'victim', fetchAllowed: false, streamOutput: false, maxArgChars: 1000 },
      deadline: performance.now() + 5_000,
      onHostCall: (_callId, method, args, reply) => {
        served.push({ method, key: String(args[0]) });
        reply({ kind: 'host-reply', callId: _callId, ok: true, value: null });
      },
      onOutput: () => undefined,
    });
    expect(finished.outcome.ok).toBe(true);
    // Exactly one call per path got through: the one with the real key (a fresh UUID).
    expect(served.map((s) => s.method).sort()).toEqual(['probe_ipc', 'probe_link']);
    for (const s of served) expect(s.key).toMatch(/^[0-9a-f-]{36}$/);
  } finally {
    await pool.close();
  }
});
