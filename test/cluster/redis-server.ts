// A throwaway redis-server on a free loopback port for tests (no persistence, own temp folder);
// stop() and start() again on the same port simulate an outage.

import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, redisAnswers, terminate } from '../../bench/cluster/local-cluster.js';

export interface TestRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startTestRedis(): Promise<TestRedis> {
  if (spawnSync('redis-server', ['--version']).error) {
    throw new Error('redis-server is not installed; the cluster tests need it: apt-get install -y redis-server nginx (.ci/run does it)');
  }
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'redis-test-'));
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    for (let i = 0; i < 100 && !(await redisAnswers(port)); i++) await new Promise((r) => setTimeout(r, 50));
    if (!(await redisAnswers(port))) throw new Error(`redis-server did not answer on port ${port} within 5 s`);
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, port, start, stop: () => terminate(child, 'SIGTERM', 5_000) };
}
