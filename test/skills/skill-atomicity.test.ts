// Saves are atomic: many writers of one name (in one store and across stores, as separate
// processes would be) never corrupt it, readers always see one whole version, and what a crash
// leaves behind is recovered on start, and swept while running.

import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import type { LoadedSkill, SkillStore, SkillStoreOptions } from '../../src/skills/index.js';
import { eventually, makeStore, makeTempDir } from './helpers.js';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** Version i: its code and its description name the same i, so a mixed read is detectable. */
const version = (i: number): { code: string; description: string } => ({
  code: `export function version() {\n  return ${i};\n}\nexport const padding = ${JSON.stringify('x'.repeat(2_000 + i))};\n`,
  description: `version ${i}`,
});

function assertWhole(loaded: LoadedSkill, versions: number): number {
  const match = /return (\d+);/.exec(loaded.code);
  expect(match).not.toBeNull();
  const i = Number(match?.[1]);
  expect(i).toBeGreaterThanOrEqual(0);
  expect(i).toBeLessThan(versions);
  expect(loaded.code).toBe(version(i).code);
  expect(loaded.metadata.description).toBe(version(i).description);
  expect(loaded.metadata.hash).toBe(sha256(loaded.code));
  return i;
}

async function assertOnDiskWhole(dir: string, name: string, versions: number): Promise<number> {
  const code = await readFile(join(dir, name, 'index.js'), 'utf8');
  const markdown = await readFile(join(dir, name, 'SKILL.md'), 'utf8');
  const i = Number(/return (\d+);/.exec(code)?.[1]);
  expect(code).toBe(version(i).code);
  expect(i).toBeLessThan(versions);
  expect(markdown).toContain(`hash: ${sha256(code)}\n`);
  expect(markdown).toContain(`description: ${version(i).description}\n`);
  return i;
}

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

function open(options: Partial<SkillStoreOptions> = {}): SkillStore {
  const store = makeStore(dir, options);
  stores.push(store);
  return store;
}

test('50 concurrent saves of one name leave exactly one saved version, whole, with a matching hash', async () => {
  const store = open();
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => store.save({ name: 'contended', ...version(i) })));
  expect(results.every((r) => r.success)).toBe(true);
  const loaded = await store.load('contended');
  const i = assertWhole(loaded, 50);
  expect(await assertOnDiskWhole(dir, 'contended', 50)).toBe(i);
  // Saves through one store are applied in call order: the last call wins.
  expect(i).toBe(49);
  expect(await readdir(dir)).toEqual(['contended']);
});

test('50 concurrent saves from five independent stores (as five processes would) never corrupt the skill', async () => {
  const writers = Array.from({ length: 5 }, () => open());
  await Promise.all(Array.from({ length: 50 }, (_, i) => writers[i % 5]?.save({ name: 'shared', ...version(i) })));
  const fresh = open();
  assertWhole(await fresh.load('shared'), 50);
  await assertOnDiskWhole(dir, 'shared', 50);
  expect(await readdir(dir)).toEqual(['shared']);
});

test('readers running during concurrent saves always see one whole version', async () => {
  const writers = Array.from({ length: 3 }, () => open());
  const diskReader = open(); // not started: reads the folder every time
  const started = open();
  await writers[0]?.save({ name: 'busy', ...version(0) });
  await started.start();
  let saving = true;
  const reads = { disk: 0, index: 0 };
  const readLoop = async (reader: SkillStore, key: 'disk' | 'index'): Promise<void> => {
    while (saving) {
      assertWhole(await reader.load('busy'), 60);
      reads[key]++;
      // An index read resolves without I/O; yield so the saves' I/O callbacks get to run.
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const readers = [readLoop(diskReader, 'disk'), readLoop(diskReader, 'disk'), readLoop(started, 'index')];
  await Promise.all(Array.from({ length: 60 }, (_, i) => writers[i % 3]?.save({ name: 'busy', ...version(i) })));
  saving = false;
  await Promise.all(readers);
  expect(reads.disk).toBeGreaterThan(0);
  expect(reads.index).toBeGreaterThan(0);
});

test('a crash between renaming the old folder aside and renaming the new one in is undone on start', async () => {
  // What a save leaves if the process dies between its two renames.
  const old = version(1);
  await mkdir(join(dir, '.old.recovered.abc123'));
  await writeFile(join(dir, '.old.recovered.abc123', 'index.js'), old.code);
  await writeFile(join(dir, '.old.recovered.abc123', 'SKILL.md'), `---\nname: recovered\ndescription: ${old.description}\nlanguage: javascript\n---\n`);
  await mkdir(join(dir, '.tmp.recovered.def456'));
  await writeFile(join(dir, '.tmp.recovered.def456', 'index.js'), version(2).code);
  const longAgo = new Date(Date.now() - 3_600_000);
  await utimes(join(dir, '.tmp.recovered.def456'), longAgo, longAgo);

  const store = open();
  await store.start();
  assertWhole(await store.load('recovered'), 2);
  expect((await store.load('recovered')).metadata.description).toBe('version 1');
  expect(await readdir(dir)).toEqual(['recovered']);
});

test('a crash while writing the new version leaves the old one served, and the debris is cleared', async () => {
  const store = open();
  await store.save({ name: 'intact', ...version(3) });
  // A half-written temp folder from a save that never reached its rename.
  await mkdir(join(dir, '.tmp.intact.zzz999'));
  await writeFile(join(dir, '.tmp.intact.zzz999', 'index.js'), 'export function version() {\n  ret');
  const longAgo = new Date(Date.now() - 3_600_000);
  await utimes(join(dir, '.tmp.intact.zzz999'), longAgo, longAgo);
  assertWhole(await store.load('intact'), 4);

  const restarted = open();
  await restarted.start();
  expect(assertWhole(await restarted.load('intact'), 4)).toBe(3);
  expect(await readdir(dir)).toEqual(['intact']);
});

test('a save in flight in another process (fresh temp folder) is not swept away on start', async () => {
  await mkdir(join(dir, '.tmp.inflight.aaa111'));
  const store = open();
  await store.start();
  expect(await readdir(dir)).toContain('.tmp.inflight.aaa111');
});

test('debris of a crash that happens while the store runs is swept without a restart (issue 11)', async () => {
  const store = open({ debrisSweepMs: 50 });
  await store.start();
  await store.save({ name: 'running', ...version(5) });
  const longAgo = new Date(Date.now() - 3_600_000);
  // Another process sharing the folder crashed mid-save: a stale temp folder, a displaced old
  // version whose replacement never arrived, and a half-removed deleted skill.
  await mkdir(join(dir, '.tmp.running.bbb222'));
  await writeFile(join(dir, '.tmp.running.bbb222', 'index.js'), 'export function version() {\n  ret');
  await utimes(join(dir, '.tmp.running.bbb222'), longAgo, longAgo);
  await mkdir(join(dir, '.old.displaced.ccc333'));
  await writeFile(join(dir, '.old.displaced.ccc333', 'index.js'), version(6).code);
  await writeFile(join(dir, '.old.displaced.ccc333', 'SKILL.md'), `---\nname: displaced\ndescription: ${version(6).description}\n---\n`);
  await mkdir(join(dir, '.del.gone.ddd444'));
  await writeFile(join(dir, '.del.gone.ddd444', 'index.js'), 'export const a = 1;\n');
  // A save in flight elsewhere: written to just now, so it is left alone.
  await mkdir(join(dir, '.tmp.busy.eee555'));

  await eventually(async () => (await readdir(dir)).sort().join(',') === '.tmp.busy.eee555,displaced,running');
  expect(assertWhole(await store.load('running'), 7)).toBe(5);
  expect(assertWhole(await store.load('displaced'), 7)).toBe(6);
});
