// Each agent's share of the store, at the store: concurrent saves of one agent reserve their room
// before their first await (never more than the limit pass together), a started store counts what
// it finds on disk, and code is read from disk when the byte-bounded LRU has let it go.

import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { SkillCaller, SkillStore } from '../../src/skills/index.js';
import { makeStore, makeTempDir } from './helpers.js';

const alice: SkillCaller = { agent: 'alice', agentsConfigured: true };
const bob: SkillCaller = { agent: 'bob', agentsConfigured: true };

let dir: string;
let cleanup: () => Promise<void>;
const stores: SkillStore[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir());
});

afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await cleanup();
});

function store(options: Parameters<typeof makeStore>[1]): SkillStore {
  const s = makeStore(dir, options);
  stores.push(s);
  return s;
}

describe("an agent's share", () => {
  test('ten saves at once of new names: exactly the count limit pass, the rest name the option', async () => {
    const s = store({ quota: { count: 3 } });
    await s.start();
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => s.save({ name: `s${i}`, code: `export const v = ${i};\n` }, alice)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    for (const r of results) if (r.status === 'rejected') expect(String(r.reason)).toMatch(/already has 3 skills, the limit is 3.*limits\.skillQuotaCount/);
    expect(s.usage('alice')).toMatchObject({ skills: 3, quota_count: 3 });
    // Bob's share is his own.
    await expect(s.save({ name: 'bobs', code: 'export const v = 1;\n' }, bob)).resolves.toMatchObject({ author: 'bob' });
  });

  test('bytes count code and SKILL.md; a restarted store counts what is on disk', async () => {
    const first = store({ quota: { bytes: 5_000 } });
    await first.start();
    await first.save({ name: 'big', code: `export const v = ${JSON.stringify('x'.repeat(3_000))};\n` }, alice);
    const used = first.usage('alice').bytes;
    expect(used).toBeGreaterThan(3_000);
    await first.close();
    const second = store({ quota: { bytes: 5_000 } });
    await second.start();
    expect(second.usage('alice').bytes).toBe(used);
    await expect(second.save({ name: 'big2', code: `export const v = ${JSON.stringify('y'.repeat(3_000))};\n` }, alice)).rejects.toMatchObject({
      code: 'QUOTA_EXCEEDED',
      message: expect.stringMatching(/over its 5000-byte quota.*limits\.skillQuotaBytes/) as unknown,
    });
  });
});

describe('a store not started (one-shot use)', () => {
  test("counts the agent's share from disk, and a save over an existing skill completes", async () => {
    const s = store({ quota: { count: 2 } });
    await s.save({ name: 'one', code: 'export const v = 1;\n' }, alice);
    await s.save({ name: 'one', code: 'export const v = 2;\n' }, alice);
    await s.save({ name: 'two', code: 'export const v = 2;\n' }, alice);
    await expect(s.save({ name: 'three', code: 'export const v = 3;\n' }, alice)).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED' });
    expect((await s.load('one', alice)).code).toBe('export const v = 2;\n');
  });
});

describe('code in memory', () => {
  test('is bounded by bytes; code let go is read from disk, unchanged', async () => {
    const s = store({ codeCacheBytes: 10_000 });
    await s.start();
    const code = (i: number): string => `export const v${i} = ${JSON.stringify(String(i).repeat(4_000))};\n`;
    for (let i = 0; i < 6; i++) await s.save({ name: `c${i}`, code: code(i) }, alice);
    const cache = s.stats().code_cache;
    expect(cache.bytes).toBeLessThanOrEqual(10_000);
    expect(cache.entries).toBeLessThan(6);
    for (let i = 0; i < 6; i++) expect((await s.load(`c${i}`, alice)).code).toBe(code(i));
    expect((await s.compileSkill('c0', alice)).exports).toEqual(['v0']);
  });
});
