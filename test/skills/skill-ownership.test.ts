// Skills have owners: with agents configured, an agent sees its own skills, published ones and the
// operator's library, changes only its own, and imports resolve among what the importing caller
// sees. With no agents configured (one user), everything is visible and changeable, as in the seed.

import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { SkillError, skillVisibleTo } from '../../src/skills/index.js';
import type { SkillCaller, SkillStore } from '../../src/skills/index.js';
import { importer, makeStore, makeTempDir } from './helpers.js';

const alice: SkillCaller = { agent: 'alice', agentsConfigured: true };
const bob: SkillCaller = { agent: 'bob', agentsConfigured: true };
const local: SkillCaller = { agent: 'local', agentsConfigured: false };

const SECRET_CODE = 'export function secret() {\n  return "alice-private-payload";\n}\n';

let dir: string;
let cleanup: () => Promise<void>;
let store: SkillStore;

beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir());
  store = makeStore(dir, { now: () => new Date('2025-11-04T10:00:00.000Z') });
  await store.start();
});

afterEach(async () => {
  await store.close();
  await cleanup();
});

async function rejection(promise: Promise<unknown>): Promise<SkillError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SkillError);
  return error as SkillError;
}

function frontMatter(markdown: string): Record<string, unknown> {
  const match = /^---\n([\s\S]*?)\n---/.exec(markdown);
  return parse(match?.[1] ?? '') as Record<string, unknown>;
}

describe('the visibility rule', () => {
  test('visible iff no agents configured, or not private, or the agent wrote it', () => {
    expect(skillVisibleTo(null, 'alice', 'private')).toBe(true);
    expect(skillVisibleTo('bob', 'alice', 'private')).toBe(false);
    expect(skillVisibleTo('alice', 'alice', 'private')).toBe(true);
    expect(skillVisibleTo('bob', 'alice', 'shared')).toBe(true);
    expect(skillVisibleTo('bob', undefined, 'shared')).toBe(true);
    expect(skillVisibleTo('bob', undefined, undefined)).toBe(true);
  });
});

describe('authorship on disk', () => {
  test('SKILL.md records the author and the visibility; a save is private by default, shared when asked', async () => {
    await store.save({ name: 'mine', code: 'export const a = 1;\n' }, alice);
    await store.save({ name: 'published', code: 'export const b = 2;\n', shared: true }, alice);
    expect(frontMatter(await readFile(join(dir, 'mine', 'SKILL.md'), 'utf8'))).toMatchObject({ author: 'alice', visibility: 'private' });
    expect(frontMatter(await readFile(join(dir, 'published', 'SKILL.md'), 'utf8'))).toMatchObject({ author: 'alice', visibility: 'shared' });
    expect((await store.load('mine', alice)).metadata).toMatchObject({ author: 'alice', visibility: 'private' });
  });

  test('a store reading the folder afresh keeps every owner (restart)', async () => {
    await store.save({ name: 'mine', code: 'export const a = 1;\n' }, alice);
    const fresh = makeStore(dir);
    await fresh.start();
    try {
      expect((await fresh.list(bob)).skills.map((s) => s.name)).toEqual([]);
      expect((await fresh.list(alice)).skills).toMatchObject([{ name: 'mine', author: 'alice', visibility: 'private' }]);
    } finally {
      await fresh.close();
    }
  });
});

describe("another agent's private skill does not exist for an agent", () => {
  beforeEach(async () => {
    await store.save({ name: 'secret_tool', code: SECRET_CODE, description: 'alice private description' }, alice);
  });

  test('list, load and import behave as if it did not exist, and suggestions do not name it', async () => {
    expect((await store.list(bob)).skills).toEqual([]);
    const loaded = await rejection(store.load('secret_tool', bob));
    expect(loaded.code).toBe('SKILL_NOT_FOUND');
    const near = await rejection(store.load('secret_tol', bob));
    expect(near.suggestions).toEqual([]);
    expect(near.message).not.toContain('secret_tool');
    expect((await rejection(store.compileSkill('secret_tool', bob))).code).toBe('SKILL_NOT_FOUND');
    expect((await rejection(importer(store, bob)('secret_tool'))).code).toBe('SKILL_NOT_FOUND');
    // Its author still has it.
    expect((await store.list(alice)).skills.map((s) => s.name)).toEqual(['secret_tool']);
    await expect(importer(store, alice)('secret_tool').then((m) => (m['secret'] as () => string)())).resolves.toBe('alice-private-payload');
  });

  test('saving over it is refused without revealing it, and it stays as it was', async () => {
    const error = await rejection(store.save({ name: 'secret_tool', code: 'export function secret() { return "planted"; }\n' }, bob));
    expect(error.code).toBe('NOT_OWNER');
    expect(error.message).toMatch(/belongs to another agent.*save under another name/);
    expect(error.message).not.toMatch(/alice|payload|description/);
    expect((await store.load('secret_tool', alice)).code).toBe(SECRET_CODE);
    expect(await readFile(join(dir, 'secret_tool', 'index.js'), 'utf8')).toBe(SECRET_CODE);
  });

  test('deleting it is SKILL_NOT_FOUND and leaves it on disk', async () => {
    expect((await rejection(store.delete('secret_tool', bob))).code).toBe('SKILL_NOT_FOUND');
    expect(await readdir(dir)).toEqual(['secret_tool']);
  });
});

describe("another agent's shared skill is read-only", () => {
  beforeEach(async () => {
    await store.save({ name: 'lib_tool', code: 'export const answer = 42;\n', shared: true }, alice);
  });

  test('listed and loaded with its author, importable', async () => {
    expect((await store.list(bob)).skills).toMatchObject([{ name: 'lib_tool', author: 'alice', visibility: 'shared' }]);
    expect((await store.load('lib_tool', bob)).metadata).toMatchObject({ author: 'alice', visibility: 'shared' });
    expect((await importer(store, bob)('lib_tool'))['answer']).toBe(42);
  });

  test('overwrite and delete are refused naming the owner; the skill is unchanged', async () => {
    const saved = await rejection(store.save({ name: 'lib_tool', code: 'export const answer = 0;\n' }, bob));
    expect(saved.code).toBe('NOT_OWNER');
    expect(saved.message).toContain('agent "alice"');
    const deleted = await rejection(store.delete('lib_tool', bob));
    expect(deleted.code).toBe('NOT_OWNER');
    expect(deleted.message).toMatch(/not deleted.*agent "alice"/);
    expect((await importer(store, bob)('lib_tool'))['answer']).toBe(42);
  });

  test('its author overwrites (keeping created) and deletes it', async () => {
    const saved = await store.save({ name: 'lib_tool', code: 'export const answer = 43;\n', shared: true }, alice);
    expect(saved).toMatchObject({ author: 'alice', visibility: 'shared', created: '2025-11-04T10:00:00.000Z' });
    await expect(store.delete('lib_tool', alice)).resolves.toEqual({ success: true });
    expect(await readdir(dir)).toEqual([]);
  });

  test('a case variant of a taken name is still refused', async () => {
    expect((await rejection(store.save({ name: 'LIB_TOOL', code: 'export const a = 1;\n' }, bob))).code).toBe('NAME_CONFLICT');
  });
});

describe("the operator's library (skills on disk without an author)", () => {
  beforeEach(async () => {
    await mkdir(join(dir, 'house_rules'));
    await writeFile(join(dir, 'house_rules', 'index.js'), 'export const rule = "be kind";\n');
    await writeFile(join(dir, 'house_rules', 'SKILL.md'), '---\nname: house_rules\ndescription: The house rules\n---\n');
  });

  test('is shared and read-only for every listed agent', async () => {
    const fresh = makeStore(dir);
    try {
      expect((await fresh.list(bob)).skills).toEqual([expect.objectContaining({ name: 'house_rules', visibility: 'shared' })]);
      expect((await fresh.list(bob)).skills[0]).not.toHaveProperty('author');
      expect((await importer(fresh, bob)('house_rules'))['rule']).toBe('be kind');
      const saved = await rejection(fresh.save({ name: 'house_rules', code: 'export const rule = "obey";\n' }, alice));
      expect(saved.code).toBe('NOT_OWNER');
      expect(saved.message).toContain("operator's library");
      expect((await rejection(fresh.delete('house_rules', alice))).code).toBe('NOT_OWNER');
      expect(await readFile(join(dir, 'house_rules', 'index.js'), 'utf8')).toBe('export const rule = "be kind";\n');
    } finally {
      await fresh.close();
    }
  });

  test('an author without a visibility field is private; a broken SKILL.md hides the folder from agents', async () => {
    await mkdir(join(dir, 'hand_private'));
    await writeFile(join(dir, 'hand_private', 'index.js'), 'export const x = 1;\n');
    await writeFile(join(dir, 'hand_private', 'SKILL.md'), '---\nname: hand_private\nauthor: alice\n---\n');
    await mkdir(join(dir, 'broken_md'));
    await writeFile(join(dir, 'broken_md', 'index.js'), 'export const y = 1;\n');
    await writeFile(join(dir, 'broken_md', 'SKILL.md'), '---\nauthor: [alice\n---\n');
    const fresh = makeStore(dir);
    try {
      expect((await fresh.list(bob)).skills.map((s) => s.name)).toEqual(['house_rules']);
      expect((await rejection(fresh.load('broken_md', bob))).code).toBe('SKILL_NOT_FOUND');
      expect((await rejection(fresh.save({ name: 'broken_md', code: 'export const y = 2;\n' }, alice))).code).toBe('NOT_OWNER');
      expect((await fresh.list(alice)).skills.map((s) => s.name)).toEqual(['hand_private', 'house_rules']);
      // Without a caller (the operator), the broken folder is reported as broken, not hidden.
      expect((await rejection(fresh.load('broken_md'))).code).toBe('SKILL_INVALID');
    } finally {
      await fresh.close();
    }
  });
});

describe("imports are pinned to the skills they named when the importer was saved", () => {
  test("a save cannot import a skill its agent cannot see, and a shared skill cannot import a private one", async () => {
    await store.save({ name: 'helper', code: 'export const who = "alice helper";\n' }, alice);
    const unseen = await rejection(store.save({ name: 'wrapper', code: "import { who } from 'skill:helper';\nexport const greeting = who;\n", shared: true }, bob));
    expect(unseen.code).toBe('SKILL_NOT_FOUND');
    expect(unseen.message).not.toContain('alice');
    const leaks = await rejection(store.save({ name: 'wrapper', code: "import { who } from 'skill:helper';\nexport const greeting = who;\n", shared: true }, alice));
    expect(leaks.message).toMatch(/is shared but imports "helper", which is private/);
    await store.save({ name: 'wrapper', code: "import { who } from 'skill:helper';\nexport const greeting = `hello from ${who}`;\n" }, alice);
    expect((await importer(store, alice)('wrapper'))['greeting']).toBe('hello from alice helper');
    expect(await store.checkImportGraph('wrapper', alice)).toEqual(['helper', 'wrapper']);
  });

  test("a name taken over by another owner after the save never runs in the importer's place", async () => {
    await store.save({ name: 'dep_a', code: 'export const v = "alice";\n', shared: true }, alice);
    await store.save({ name: 'user_a', code: "import { v } from 'skill:dep_a';\nexport const got = v;\n" }, alice);
    await store.delete('dep_a', alice);
    await store.save({ name: 'dep_a', code: 'export const v = "bob";\n', shared: true }, bob);
    const refused = await rejection(importer(store, alice)('user_a'));
    expect(refused.code).toBe('SKILL_NOT_FOUND');
    expect(refused.message).toMatch(/Skill "dep_a" of agent "alice", which the importing skill was saved against, no longer exists/);
  });
});

describe('one user (no agents configured) works as the seed did', () => {
  test("every skill is visible and changeable, whoever saved it; the local agent's saves are shared", async () => {
    await store.save({ name: 'bobs', code: 'export const v = 1;\n' }, bob);
    expect((await store.list(local)).skills.map((s) => s.name)).toEqual(['bobs']);
    expect((await store.load('bobs', local)).code).toBe('export const v = 1;\n');
    const saved = await store.save({ name: 'bobs', code: 'export const v = 2;\n' }, local);
    expect(saved).toMatchObject({ author: 'local', visibility: 'shared' });
    await store.save({ name: 'fresh', code: 'export const w = 1;\n' }, local);
    expect(frontMatter(await readFile(join(dir, 'fresh', 'SKILL.md'), 'utf8'))).toMatchObject({ author: 'local', visibility: 'shared' });
    await expect(store.delete('bobs', local)).resolves.toEqual({ success: true });
    await expect(store.delete('fresh', local)).resolves.toEqual({ success: true });
    expect(await readdir(dir)).toEqual([]);
  });
});
