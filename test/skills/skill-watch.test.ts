// Hand edits on disk reach a started store with no restart: skills added, changed, broken, fixed
// and removed by hand. Broken folders are reported in stats and never served.

import { readFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { SkillError } from '../../src/skills/index.js';
import type { SkillChange, SkillStore } from '../../src/skills/index.js';
import { eventually, importer, makeStore, makeTempDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
let store: SkillStore;
let changes: SkillChange[];

beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir());
  store = makeStore(dir);
  changes = [];
  store.onChange((change) => changes.push(change));
  await store.start();
});

afterEach(async () => {
  await store.close();
  await cleanup();
});

async function codeOf(name: string): Promise<string | null> {
  try {
    return (await store.load(name)).code;
  } catch {
    return null;
  }
}

const invalidNames = (): string[] => store.stats().invalid.map((i) => i.name);

test('a skill folder added by hand is picked up and served', async () => {
  await mkdir(join(dir, 'by_hand'));
  await writeFile(join(dir, 'by_hand', 'index.js'), 'function triple(x) { return 3 * x }\n');
  await eventually(async () => (await codeOf('by_hand')) !== null);
  const { triple } = (await importer(store)('by_hand')) as { triple: (x: number) => number };
  expect(triple(2)).toBe(6);
  expect((await store.list()).skills.map((s) => s.name)).toEqual(['by_hand']);
  expect(changes).toContainEqual({ name: 'by_hand', kind: 'added', source: 'disk' });
});

test('a hand edit to a saved skill is picked up, also after the store swapped its folder', async () => {
  await store.save({ name: 'edited', code: 'export const v = 1;\n', description: 'kept across hand edits' });
  await writeFile(join(dir, 'edited', 'index.js'), 'export const v = 2;\n');
  await eventually(async () => (await codeOf('edited')) === 'export const v = 2;\n');
  expect((await store.load('edited')).metadata.description).toBe('kept across hand edits');
  // A save swaps the whole folder; the watcher must follow the new one.
  await store.save({ name: 'edited', code: 'export const v = 3;\n' });
  await writeFile(join(dir, 'edited', 'index.js'), 'export const v = 4;\n');
  await eventually(async () => (await codeOf('edited')) === 'export const v = 4;\n');
  expect(changes).toContainEqual({ name: 'edited', kind: 'changed', source: 'disk' });
});

test('an edit made right after a reload is still picked up (chokidar drops changes close together)', async () => {
  await store.save({ name: 'rapid', code: 'export const v = 0;\n' });
  const edits: Promise<void>[] = [];
  // Each reload triggers the next edit at once, inside chokidar's 50 ms window after the last event.
  store.onChange((change) => {
    if (change.name !== 'rapid' || change.source !== 'disk') return;
    const current = Number(/v = (\d+)/.exec(readFileSync(join(dir, 'rapid', 'index.js'), 'utf8'))?.[1]);
    if (current < 5) edits.push(writeFile(join(dir, 'rapid', 'index.js'), `export const v = ${current + 1};\n`));
  });
  await writeFile(join(dir, 'rapid', 'index.js'), 'export const v = 1;\n');
  await eventually(async () => (await codeOf('rapid')) === 'export const v = 5;\n');
  await Promise.all(edits);
});

test('a hand edit of SKILL.md (description) is picked up', async () => {
  await store.save({ name: 'described', code: 'export const v = 1;\n', description: 'old words' });
  const markdown = await readFile(join(dir, 'described', 'SKILL.md'), 'utf8');
  await writeFile(join(dir, 'described', 'SKILL.md'), markdown.replace('old words', 'new words'));
  await eventually(async () => (await store.load('described')).metadata.description === 'new words');
});

test('a skill broken by hand is reported and not served, then served again once fixed', async () => {
  await store.save({ name: 'fragile', code: 'export const v = 1;\n' });
  await writeFile(join(dir, 'fragile', 'index.js'), 'export const v = ;\n');
  await eventually(() => invalidNames().includes('fragile'));
  const reason = store.stats().invalid.find((i) => i.name === 'fragile')?.reason ?? '';
  expect(reason).toMatch(/Unexpected token \(line 1, column 18\)/);
  const error = await store.load('fragile').catch((e: unknown) => e);
  expect(error).toBeInstanceOf(SkillError);
  expect((error as SkillError).code).toBe('SKILL_INVALID');
  expect((error as SkillError).message).toContain('broken on disk');
  await expect(store.compileSkill('fragile')).rejects.toMatchObject({ code: 'SKILL_INVALID' });
  expect((await store.list()).skills).toEqual([]);
  expect(changes).toContainEqual({ name: 'fragile', kind: 'invalid', source: 'disk' });

  await writeFile(join(dir, 'fragile', 'index.js'), 'export const v = 5;\n');
  await eventually(async () => (await codeOf('fragile')) === 'export const v = 5;\n');
  expect(invalidNames()).toEqual([]);
});

test('a broken SKILL.md is reported and not served', async () => {
  await store.save({ name: 'bad_meta', code: 'export const v = 1;\n' });
  await writeFile(join(dir, 'bad_meta', 'SKILL.md'), '---\nname: bad_meta\ndescription: [unclosed\n---\n');
  await eventually(() => invalidNames().includes('bad_meta'));
  expect(store.stats().invalid.find((i) => i.name === 'bad_meta')?.reason).toContain('not valid YAML');
  await expect(store.load('bad_meta')).rejects.toMatchObject({ code: 'SKILL_INVALID' });
  await writeFile(join(dir, 'bad_meta', 'SKILL.md'), '---\nname: bad_meta\nlanguage: python\n---\n');
  await eventually(() => store.stats().invalid.some((i) => i.name === 'bad_meta' && i.reason.includes('language')));
});

test('a skill folder removed by hand disappears', async () => {
  await store.save({ name: 'doomed', code: 'export const v = 1;\n' });
  await rm(join(dir, 'doomed'), { recursive: true });
  await eventually(async () => (await store.list()).count === 0);
  await expect(store.load('doomed')).rejects.toMatchObject({ code: 'SKILL_NOT_FOUND' });
  expect(changes).toContainEqual({ name: 'doomed', kind: 'removed', source: 'disk' });
});

test('a folder renamed by hand moves the skill', async () => {
  await store.save({ name: 'before', code: 'export const v = 1;\n' });
  await rename(join(dir, 'before'), join(dir, 'after'));
  await eventually(async () => (await store.list()).skills.map((s) => s.name).join() === 'after');
});

test('folders that are not skills are reported, hidden folders are ignored', async () => {
  await mkdir(join(dir, 'two_files'));
  await writeFile(join(dir, 'two_files', 'index.js'), 'export const a = 1;\n');
  await writeFile(join(dir, 'two_files', 'index.py'), 'def a():\n    pass\n');
  await mkdir(join(dir, 'not a name'));
  await writeFile(join(dir, 'not a name', 'index.js'), 'export const a = 1;\n');
  await mkdir(join(dir, '.git'));
  await writeFile(join(dir, '.git', 'index.js'), 'export const a = 1;\n');
  await eventually(() => invalidNames().length === 2);
  expect(invalidNames()).toEqual(['not a name', 'two_files']);
  expect(store.stats().invalid.find((i) => i.name === 'two_files')?.reason).toContain('more than one code file');
});

test('skills broken on disk before start are reported from the first scan', async () => {
  await store.close();
  await mkdir(join(dir, 'pre_broken'));
  await writeFile(join(dir, 'pre_broken', 'index.ts'), 'export const a: = 1;\n');
  await mkdir(join(dir, 'pre_good'));
  await writeFile(join(dir, 'pre_good', 'index.js'), 'export const a = 1;\n');
  store = makeStore(dir);
  await store.start();
  expect(store.stats()).toMatchObject({ count: 1, invalid: [{ name: 'pre_broken' }] });
});
