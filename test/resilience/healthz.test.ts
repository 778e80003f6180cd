// GET /healthz reports live figures: sandbox processes alive/ready per language and upstream
// servers up/failed; 'degraded' names each problem, and HTTP 503 says no JavaScript process can
// run code (a supervisor or load balancer acts on the status code alone).

import { afterEach, describe, expect, it } from 'vitest';
import type { Daemon, Scratch } from '../fixtures/mcp/cli.js';
import { scratch, startDaemon } from '../fixtures/mcp/cli.js';
import type { HttpHarness } from '../fixtures/mcp/http-harness.js';
import { startHttpHarness } from '../fixtures/mcp/http-harness.js';
import { within } from './helpers.js';

let home: Scratch | undefined;
let daemon: Daemon | undefined;
let harness: HttpHarness | undefined;

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  home?.remove();
  home = undefined;
  await harness?.close();
  harness = undefined;
});

interface Health {
  status: string;
  processes?: Record<string, { alive: number; ready: number }>;
  upstream: { up: number; failed: number; connecting: number; servers: Record<string, string> };
  problems: string[];
  connections: number;
  sessions: number;
}

describe('/healthz', () => {
  it('reports ready sandbox processes and a failed upstream server as degraded, still 200 while JavaScript runs', async () => {
    home = scratch();
    const config = home.writeConfig({ mcpServers: { broken: { command: process.execPath, args: ['-e', 'process.exit(3)'] } } });
    daemon = await startDaemon(home.env, ['--config', config]);
    const health = await within(
      (async () => {
        for (;;) {
          const r = await fetch(`${daemon!.base}/healthz`);
          const body = (await r.json()) as Health;
          if (body.upstream.servers['broken'] !== 'connecting') return { status: r.status, body };
          await new Promise((res) => setTimeout(res, 100));
        }
      })(),
      20_000,
      'the broken upstream server leaving "connecting"',
    );
    expect(health.status).toBe(200);
    expect(health.body.status).toBe('degraded');
    expect(health.body.processes?.['js']).toEqual({ alive: 2, ready: 2 });
    expect(health.body.upstream.up).toBe(0);
    expect(health.body.upstream).toMatchObject({ failed: 1, servers: { broken: 'failed' } });
    expect(health.body.problems).toEqual([expect.stringMatching(/^upstream server "broken" is failed/)]);
    expect(health.body.connections).toBeGreaterThanOrEqual(1);
  }, 40_000);

  it('answers 503 when no JavaScript process is ready', async () => {
    harness = await startHttpHarness();
    let state = 'ready';
    // The fake executor lists one JavaScript process; the test decides its state.
    Object.assign(harness.executor, { processes: () => [{ kind: 'js', pid: 1, state, busy: 0 }] });
    const ok = await fetch(`${harness.base}/healthz`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ status: 'ok', processes: { js: { alive: 1, ready: 1 } }, problems: [] });
    state = 'dead';
    const down = await fetch(`${harness.base}/healthz`);
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ status: 'degraded', processes: { js: { alive: 0, ready: 0 } }, problems: [expect.stringMatching(/no JavaScript sandbox process is ready/)] });
  });
});
