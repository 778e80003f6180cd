// A daemon killed mid-write (SIGKILL between admitting a write against the shared count and
// settling it) must not leave a namespace's count wrong for the daemons that go on. Before: the
// admission stayed "pending" in Redis for good, every later measure of the folder was refused
// (a write might be under way), and the dead write's bytes stayed counted: a namespace with an
// empty folder refused writes as over its quota until the key sat idle for an hour.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisConnection } from '../../src/cluster/redis/redis-connection.js';
import { RedisStore } from '../../src/cluster/redis/redis-store.js';
import { createLogger } from '../../src/util/logger.js';
import { Workspace } from '../../src/workspace/index.js';
import { measureUsage } from '../../src/workspace/quota.js';
import { PENDING_LEASE_MS, storeQuotas } from '../../src/workspace/store-quota.js';
import { startTestRedis } from './redis-server.js';
import type { TestRedis } from './redis-server.js';

const logger = createLogger('silent');
const dist = (file: string): string => pathToFileURL(path.resolve(import.meta.dirname, '../../dist', file)).href;
let redis: TestRedis;
let root: string;

beforeAll(async () => {
  redis = await startTestRedis();
  root = mkdtempSync(path.join(tmpdir(), 'quota-crash-'));
});

afterAll(async () => {
  await redis?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** A "daemon" in a child process: admits a 600 KB write for alice, says so, and never settles it. */
const DAEMON = `
  const { RedisConnection } = await import(${JSON.stringify(dist('src/cluster/redis/redis-connection.js'))});
  const { RedisStore } = await import(${JSON.stringify(dist('src/cluster/redis/redis-store.js'))});
  const { storeQuotas } = await import(${JSON.stringify(dist('src/workspace/store-quota.js'))});
  const { createLogger } = await import(${JSON.stringify(dist('src/util/logger.js'))});
  const logger = createLogger('silent');
  const [url, folder] = process.argv.slice(1);
  const connection = new RedisConnection({ url, sealingKey: Buffer.alloc(32, 7), logger });
  await connection.connect();
  const counter = storeQuotas(new RedisStore(connection), logger)('alice', async () => folder, { bytes: 1_000_000, files: 100 });
  const refused = await counter.admit(600_000, 1, 'big.txt', 'alice');
  console.log(refused ?? 'admitted');
  setInterval(() => {}, 1000);
`;

describe('the shared workspace quota after a daemon is killed mid-write', () => {
  it('forgets the dead write once its lease is over: the next daemon writes what the folder has room for', async () => {
    const folder = path.join(root, 'alice');
    const child = spawn(process.execPath, ['--input-type=module', '-e', DAEMON, redis.url, folder], { stdio: ['ignore', 'pipe', 'inherit'] });
    const said = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
    expect(said).toBe('admitted');
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));

    const connection = new RedisConnection({ url: redis.url, sealingKey: Buffer.alloc(32, 7), logger });
    await connection.connect();
    const ws = new Workspace({ root, maxFileBytes: 1_000_000, quotaBytes: 1_000_000, quotaFiles: 100, sweepIntervalMs: 0, quotaCounter: storeQuotas(new RedisStore(connection), logger) });
    try {
      // Within the lease the dead write still counts (it might be a live daemon's slow write).
      await expect(ws.namespace('alice').writeFile('after.txt', 'x'.repeat(600_000))).rejects.toThrow(/workspace quota exceeded/);
      await new Promise((resolve) => setTimeout(resolve, PENDING_LEASE_MS + 500));
      await ws.namespace('alice').writeFile('after.txt', 'x'.repeat(600_000));
      expect(await measureUsage(folder, 100)).toEqual({ bytes: 600_000, files: 1 });
      // And the count is the folder's again: 400 KB more fit, 1 byte past that does not.
      await ws.namespace('alice').writeFile('rest.txt', 'x'.repeat(400_000));
      await expect(ws.namespace('alice').writeFile('one-more.txt', 'x')).rejects.toThrow(/workspace quota exceeded/);
    } finally {
      ws.close();
      await connection.close();
    }
  }, 60_000);
});
