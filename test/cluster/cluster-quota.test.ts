// Workspace quotas shared through a real Redis: two "daemons" (two Workspaces on one folder, each
// with its own Redis connection) writing at once for one namespace never pass its quota together;
// a delete through one frees room for the other; files removed by hand are taken in before a
// refusal; with Redis down a write fails with the store's clear error, and once Redis returns
// (empty) the count is seeded again from the folder.

import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisConnection } from '../../src/cluster/redis/redis-connection.js';
import { RedisStore } from '../../src/cluster/redis/redis-store.js';
import { createLogger } from '../../src/util/logger.js';
import { Workspace } from '../../src/workspace/index.js';
import { storeQuotas } from '../../src/workspace/store-quota.js';
import { measureUsage } from '../../src/workspace/quota.js';
import { startTestRedis } from './redis-server.js';
import type { TestRedis } from './redis-server.js';

const logger = createLogger('silent');
let redis: TestRedis;
let root: string;
const connections: RedisConnection[] = [];
const workspaces: Workspace[] = [];
const KB = 'x'.repeat(1000);

async function daemon(quotaBytes: number, quotaFiles: number): Promise<Workspace> {
  const connection = new RedisConnection({ url: redis.url, sealingKey: Buffer.alloc(32, 7), logger });
  await connection.connect();
  connections.push(connection);
  const ws = new Workspace({ root, maxFileBytes: 1_000_000, quotaBytes, quotaFiles, sweepIntervalMs: 0, quotaCounter: storeQuotas(new RedisStore(connection), logger) });
  workspaces.push(ws);
  return ws;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  redis = await startTestRedis();
  root = mkdtempSync(path.join(tmpdir(), 'cluster-quota-'));
});

afterAll(async () => {
  for (const w of workspaces) w.close();
  for (const c of connections) await c.close();
  await redis?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('workspace quotas shared in Redis', () => {
  it('never lets two daemons writing at once pass one namespace quota together', async () => {
    const [a, b] = [await daemon(10_500, 1_000), await daemon(10_500, 1_000)];
    const writes = Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).namespace('alice').writeFile(`f${i}.txt`, KB));
    const results = await Promise.allSettled(writes);
    const written = results.filter((r) => r.status === 'fulfilled').length;
    const refused = results.filter((r) => r.status === 'rejected');
    expect(written).toBe(10);
    for (const r of refused) expect(String((r as PromiseRejectedResult).reason)).toMatch(/workspace quota exceeded/);
    const disk = await measureUsage(path.join(root, 'alice'), 10_000);
    expect(disk).toEqual({ bytes: 10_000, files: 10 });
    // Each daemon reports the shared count, not its own.
    expect((await a.namespace('alice').usage()).bytes).toBe(10_000);
    expect((await b.namespace('alice').usage()).bytes).toBe(10_000);
  });

  it('counts files across daemons, and a delete through one frees room for the other', async () => {
    const [a, b] = [await daemon(1_000_000, 4), await daemon(1_000_000, 4)];
    await a.namespace('bob').writeFile('1.txt', 'one');
    await b.namespace('bob').writeFile('2.txt', 'two');
    await a.namespace('bob').writeFile('3.txt', 'three');
    await b.namespace('bob').writeFile('4.txt', 'four');
    await expect(a.namespace('bob').writeFile('5.txt', 'five')).rejects.toThrow(/already holds 4 files, the limit is 4/);
    await a.namespace('bob').deleteFile('2.txt');
    await sleep(50);
    await b.namespace('bob').writeFile('5.txt', 'five');
    await expect(b.namespace('bob').writeFile('6.txt', 'six')).rejects.toThrow(/limit is 4/);
  });

  it('counts concurrent overwrites of one file through two daemons exactly, never below what the disk holds', async () => {
    const [a, b] = [await daemon(10_000_000, 1_000), await daemon(10_000_000, 1_000)];
    const CHUNK = 'c'.repeat(100_000);
    await a.namespace('erin').writeFile('keep.txt', CHUNK);
    await a.namespace('erin').writeFile('target.txt', CHUNK);
    for (let round = 0; round < 3; round++) {
      // Each overwrite used to subtract the size it saw before writing: twenty at once subtracted it many times.
      await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 4 < 2 ? a : b).namespace('erin').writeFile('target.txt', i % 2 === 0 ? '' : CHUNK)));
      await b.namespace('erin').writeFile('target.txt', CHUNK);
    }
    await a.namespace('erin').deleteFile('keep.txt');
    const disk = await measureUsage(path.join(root, 'erin'), 1_000);
    expect(disk).toEqual({ bytes: 100_000, files: 1 });
    await sleep(50);
    expect(await a.namespace('erin').usage()).toMatchObject({ bytes: disk.bytes, files: disk.files });
  }, 30_000);

  it('deletes while Redis is down still free their room once it returns', async () => {
    const [a] = [await daemon(1_000_000, 100)];
    for (const n of [1, 2]) await a.namespace('fay').writeFile(`${n}.txt`, KB);
    await redis.stop();
    await a.namespace('fay').deleteFile('1.txt');
    await redis.start();
    const deadline = Date.now() + 10_000;
    while (!connections.every((c) => c.up) && Date.now() < deadline) await sleep(100);
    await a.namespace('fay').writeFile('3.txt', KB);
    expect(await measureUsage(path.join(root, 'fay'), 100)).toEqual({ bytes: 2_000, files: 2 });
  }, 30_000);

  it('takes in files removed by hand before refusing a write', async () => {
    const [a] = [await daemon(3_000, 100)];
    for (const n of [1, 2, 3]) await a.namespace('carol').writeFile(`${n}.txt`, KB);
    await expect(a.namespace('carol').writeFile('4.txt', KB)).rejects.toThrow(/quota/);
    unlinkSync(path.join(root, 'carol', '1.txt'));
    await a.namespace('carol').writeFile('4.txt', KB);
  });

  it('fails writes with the store error while Redis is down and seeds the count from the folder when it returns', async () => {
    const [a, b] = [await daemon(5_500, 100), await daemon(5_500, 100)];
    for (const n of [1, 2, 3]) await a.namespace('dave').writeFile(`${n}.txt`, KB);
    await redis.stop();
    const t = performance.now();
    await expect(b.namespace('dave').writeFile('4.txt', KB)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', message: expect.stringMatching(/quota.*unavailable.*Redis.*retry/) });
    expect(performance.now() - t).toBeLessThan(2_500);
    await redis.start();
    const deadline = Date.now() + 10_000;
    while (!connections.every((c) => c.up) && Date.now() < deadline) await sleep(100);
    // Redis came back empty: the count is measured from the folder (3 files), so two more fit, not five.
    const results = await Promise.allSettled([4, 5, 6, 7].map((n) => (n % 2 ? a : b).namespace('dave').writeFile(`${n}.txt`, KB)));
    expect(results.filter((r) => r.status === 'fulfilled').length).toBe(2);
    expect(await measureUsage(path.join(root, 'dave'), 100)).toEqual({ bytes: 5_000, files: 5 });
  }, 30_000);
});
