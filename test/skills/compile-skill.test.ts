// compileSkill produces the body of an async function that returns the skill's exports; these
// tests evaluate it as the sandbox does (`new AsyncFunction('import_skill', body)`), across
// export forms, skill-to-skill imports, import graphs and the compiled-module cache.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { SkillError } from '../../src/skills/index.js';
import type { SkillStore } from '../../src/skills/index.js';
import { AsyncFunction, eventually, importer, makeStore, makeTempDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
let store: SkillStore;

beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir());
  store = makeStore(dir);
});

afterEach(async () => {
  await store.close();
  await cleanup();
});

async function importSkill(name: string): Promise<Record<string, unknown>> {
  return importer(store)(name);
}

type Fn = (...args: unknown[]) => unknown;

describe('the seed example', () => {
  test('filter_high_risk in the seed style (a plain top-level function) saves, compiles and runs', async () => {
    const code = 'function filter_high_risk(items, threshold = 7) { return items.filter(i => i.risk_score >= threshold) }\n';
    const saved = await store.save({ name: 'filter_high_risk', code, description: 'Keep items whose risk_score is at least the threshold' });
    expect(saved.exports).toEqual(['filter_high_risk']);
    const compiled = await store.compileSkill('filter_high_risk');
    expect(compiled).toMatchObject({ name: 'filter_high_risk', language: 'javascript', hash: saved.hash, exports: ['filter_high_risk'], imports: [] });
    const { filter_high_risk } = (await new AsyncFunction('import_skill', compiled.body)(importer(store))) as { filter_high_risk: Fn };
    const items = [
      { id: 1, risk_score: 9 },
      { id: 2, risk_score: 3 },
      { id: 3, risk_score: 7 },
    ];
    expect(filter_high_risk(items)).toEqual([items[0], items[2]]);
    expect(filter_high_risk(items, 8)).toEqual([items[0]]);
  });

  test('a seed-style skill exports every top-level function, not its variables', async () => {
    await store.save({ name: 'helpers', code: 'const factor = 10;\nfunction scale(x) { return x * factor }\nasync function later(x) { return scale(x) }\n' });
    const module = await importSkill('helpers');
    expect(Object.keys(module).sort()).toEqual(['later', 'scale']);
    expect(await (module.later as Fn)(2)).toBe(20);
  });
});

describe('export forms', () => {
  test('functions, classes, destructured consts, lists, renames and string names are exported', async () => {
    const code = [
      'export function add(a, b) { return a + b }',
      'export async function* count(n) { for (let i = 0; i < n; i++) yield i }',
      'export class Box { constructor(v) { this.v = v } }',
      'export const { first, second: [second] } = { first: 1, second: [2] };',
      'const hidden = 3, renamed = 4;',
      'function internal() { return "not exported" }',
      'export { hidden, renamed as alias, renamed as "kebab-name" };',
      '',
    ].join('\n');
    await store.save({ name: 'forms', code });
    const compiled = await store.compileSkill('forms');
    expect(compiled.exports).toEqual(['add', 'count', 'Box', 'first', 'second', 'hidden', 'alias', 'kebab-name']);
    const module = await importSkill('forms');
    expect(Object.keys(module)).toEqual(compiled.exports);
    expect((module.add as Fn)(2, 3)).toBe(5);
    expect(new (module.Box as new (v: number) => { v: number })(7).v).toBe(7);
    expect([module.first, module.second, module.hidden, module.alias, module['kebab-name']]).toEqual([1, 2, 3, 4, 4]);
    const counted: unknown[] = [];
    for await (const i of (module.count as (n: number) => AsyncIterable<number>)(3)) counted.push(i);
    expect(counted).toEqual([0, 1, 2]);
    expect(module.internal).toBeUndefined();
  });

  test.each([
    ['an expression', 'export default 6 * 7\n', 42],
    ['an arrow function', 'export default (x) => x + 1\n(1);\n', 'function'],
    ['an anonymous function', 'export default function () { return "anon" }\n', 'function'],
    ['a named function', 'export default function named() { return "named" }\n', 'function'],
    ['a local renamed to default', 'const value = "v";\nexport { value as default };\n', 'v'],
  ])('export default of %s', async (_label, code, expected) => {
    await store.save({ name: 'defaults', code });
    const module = await importSkill('defaults');
    expect(Object.keys(module)).toEqual(['default']);
    if (expected === 'function') expect(typeof module.default).toBe('function');
    else expect(module.default).toBe(expected);
  });

  test('exported let bindings stay live, as in ES modules', async () => {
    await store.save({ name: 'counter', code: 'export let count = 0;\nexport function increment() { count++ }\n' });
    const module = await importSkill('counter');
    (module.increment as Fn)();
    (module.increment as Fn)();
    expect(module.count).toBe(2);
  });

  test('TypeScript skills are stripped of types and run', async () => {
    const code = 'interface Row { amount: number }\nexport type Total = number;\nexport function total(rows: Row[]): Total {\n  return rows.reduce((sum, r) => sum + r.amount, 0);\n}\n';
    await store.save({ name: 'totals', code, language: 'typescript' });
    const compiled = await store.compileSkill('totals');
    expect(compiled.exports).toEqual(['total']);
    expect((( await importSkill('totals')).total as Fn)([{ amount: 2 }, { amount: 3 }])).toBe(5);
  });

  test('the body keeps every line of the skill on its line and column', async () => {
    const code = [
      "import { helper } from 'skill:dep';",
      'export const a = 1;',
      'export function f() {',
      '  throw new Error("boom at line 4");',
      '}',
      'export default f;',
      '',
    ].join('\n');
    await store.save({ name: 'dep', code: 'export function helper() {}\n' });
    await store.save({ name: 'lines', code });
    const { body } = await store.compileSkill('lines');
    const bodyLines = body.split('\n');
    const codeLines = code.split('\n');
    expect(bodyLines.length).toBe(codeLines.length + 1);
    // The import moved onto line 1; `export` keywords became spaces; `export default` became a const.
    // The import names the skill it was pinned to when saved: the library's "dep" (no owner).
    expect(bodyLines[0]).toContain('await import_skill("dep@")');
    expect(bodyLines[0]?.endsWith(' '.repeat(codeLines[0]?.length ?? 0))).toBe(true);
    expect(bodyLines.slice(1, 6)).toEqual([
      '       const a = 1;',
      '       function f() {',
      '  throw new Error("boom at line 4");',
      '}',
      'const $$dflt = f;',
    ]);
    const module = await importSkill('lines');
    const error = (() => {
      try {
        (module.f as Fn)();
      } catch (e) {
        return e as Error;
      }
      return null;
    })();
    // new AsyncFunction puts two header lines before the body.
    expect(error?.stack).toMatch(/<anonymous>:6:9/);
  });

  test('a hashbang line is tolerated', async () => {
    await store.save({ name: 'bang', code: '#!/usr/bin/env node\nexport const a = 1;\n' });
    expect((await importSkill('bang')).a).toBe(1);
  });

  test('import.meta is refused', async () => {
    await expect(store.save({ name: 'meta', code: 'export const u = import.meta.url;\n' })).rejects.toMatchObject({ code: 'IMPORT_NOT_ALLOWED' });
  });

  test('Python skills compile to their own code with top-level defs as exports', async () => {
    const code = 'def a(x):\n    return x\n\nclass K:\n    def method(self):\n        pass\n\nasync def b():\n    pass\n';
    await store.save({ name: 'pyskill', code, language: 'python' });
    expect(await store.compileSkill('pyskill')).toMatchObject({ language: 'python', body: code, exports: ['a', 'b'], imports: [] });
  });
});

describe('imports between skills', () => {
  beforeEach(async () => {
    await store.save({ name: 'base', code: 'export function double(x) { return x * 2 }\nexport default function id(x) { return x }\n' });
  });

  test.each([
    ["import { double } from 'skill:base'", 'double(4)'],
    ["import { double } from 'skills/base'", 'double(4)'],
    ["import { double as twice } from './base'", 'twice(4)'],
    ["import { double } from '../base/index.js'", 'double(4)'],
    ["import * as b from 'skill:base'", 'b.double(4)'],
    ["import ident, { double } from 'skill:base'", 'ident(double(4))'],
    ["import ident, * as ns from 'skill:base'", 'ident(ns.double(4))'],
  ])('%s', async (statement, call) => {
    await store.save({ name: 'user', code: `export const run = () => ${call};\n${statement};\n` });
    const compiled = await store.compileSkill('user');
    expect(compiled.imports).toEqual(['base']);
    expect(((await importSkill('user')).run as Fn)()).toBe(8);
  });

  test('a chain of three skills, with re-exports, resolves', async () => {
    await store.save({ name: 'middle', code: "import { double } from 'skill:base';\nexport const quadruple = (x) => double(double(x));\nexport { double as twice } from 'skill:base';\n" });
    await store.save({ name: 'top', code: "import { quadruple, twice } from 'skill:middle';\nexport * from 'skill:middle';\nexport function octuple(x) { return twice(quadruple(x)) }\n" });
    const module = await importSkill('top');
    expect((module.octuple as Fn)(1)).toBe(8);
    expect(Object.keys(module).sort()).toEqual(['octuple', 'quadruple', 'twice']);
    expect(await store.checkImportGraph('top')).toEqual(['base', 'middle', 'top']);
  });

  test('a side-effect import loads the skill', async () => {
    await store.save({ name: 'side', code: "import 'skill:base';\nexport const ok = true;\n" });
    const loaded: string[] = [];
    const compiled = await store.compileSkill('side');
    const module = (await new AsyncFunction('import_skill', compiled.body)(async (name: string) => {
      loaded.push(name);
      return {};
    })) as { ok: boolean };
    expect(module.ok).toBe(true);
    expect(loaded).toEqual(['base@']);
  });

  test('importing a name the other skill does not export fails with a clear SyntaxError', async () => {
    await store.save({ name: 'wrong', code: "import { triple } from 'skill:base';\nexport const t = triple;\n" });
    await expect(importSkill('wrong')).rejects.toThrow(/The skill 'base' does not provide an export named 'triple' \(it exports: double, default\)/);
  });

  test('cycles are detected and named', async () => {
    // Imports must exist when a skill is saved, so a loop is closed by saving its first skill again.
    await store.save({ name: 'pong', code: 'export const pong = () => 1;\n' });
    await store.save({ name: 'ping', code: "import { pong } from 'skill:pong';\nexport const ping = () => pong;\n" });
    await store.save({ name: 'pong', code: "import { ping } from 'skill:ping';\nexport const pong = () => ping;\n" });
    const error = await store.checkImportGraph('ping').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SkillError);
    expect(error).toMatchObject({ code: 'IMPORT_CYCLE', chain: ['ping', 'pong', 'ping'] });
    expect((error as Error).message).toContain('ping -> pong -> ping');

    await expect(store.save({ name: 'selfish', code: "import { x } from 'skill:selfish';\nexport const y = x;\n" })).rejects.toMatchObject({
      code: 'IMPORT_CYCLE',
      chain: ['selfish', 'selfish'],
    });
  });

  test('a save importing a skill that does not exist is refused; one deleted later is SKILL_NOT_FOUND naming the chain', async () => {
    await expect(store.save({ name: 'early', code: "import { gone } from 'skill:not_yet';\nexport const y = gone;\n" })).rejects.toMatchObject({
      code: 'SKILL_NOT_FOUND',
      message: expect.stringContaining('it imports "not_yet", which is not a skill you can use. Save "not_yet" first') as unknown,
    });
    await store.save({ name: 'basse', code: 'export const gone = 1;\n' });
    await store.save({ name: 'orphan', code: "import { gone } from 'skill:basse';\nexport const y = gone;\n" });
    await store.delete('basse');
    const error = await store.checkImportGraph('orphan').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'SKILL_NOT_FOUND', chain: ['orphan', 'basse'], suggestions: ['base'] });
    expect((error as Error).message).toContain('Skill "orphan" imports "basse"');
  });

  test('a JavaScript skill cannot import a Python skill', async () => {
    await store.save({ name: 'pyhelper', code: 'def h():\n    return 1\n' });
    await expect(store.save({ name: 'mixer', code: "import { h } from 'skill:pyhelper';\nexport const y = h;\n" })).rejects.toMatchObject({ code: 'IMPORT_LANGUAGE' });
  });
});

describe('compiled-module cache', () => {
  test('an unchanged skill is served from the cache; a changed one is recompiled, never stale', async () => {
    await store.save({ name: 'hot', code: 'export const v = 1;\n' });
    const first = await store.compileSkill('hot');
    expect(store.stats().cache).toMatchObject({ hits: 0, misses: 1, size: 1 });
    const second = await store.compileSkill('hot');
    expect(second.body).toBe(first.body);
    expect(store.stats().cache).toMatchObject({ hits: 1, misses: 1 });

    await store.save({ name: 'hot', code: 'export const v = 2;\n' });
    const changed = await store.compileSkill('hot');
    expect(changed.hash).not.toBe(first.hash);
    expect((await importSkill('hot')).v).toBe(2);
    expect(store.stats().cache.misses).toBe(2);

    // Saving identical code again keeps the hash, so the compiled module is reused.
    await store.save({ name: 'hot', code: 'export const v = 2;\n' });
    await store.compileSkill('hot');
    expect(store.stats().cache.hits).toBeGreaterThanOrEqual(3);
    expect(store.stats().cache.misses).toBe(2);
  });

  test('a hand edit on a started store is compiled fresh', async () => {
    await store.start();
    await store.save({ name: 'edited_hot', code: 'export const v = 1;\n' });
    expect((await importSkill('edited_hot')).v).toBe(1);
    await writeFile(join(dir, 'edited_hot', 'index.js'), 'export const v = 9;\n');
    await eventually(async () => (await importSkill('edited_hot')).v === 9);
  });

  test('the cache is bounded by cacheSize', async () => {
    const small = makeStore(dir, { cacheSize: 2 });
    for (const name of ['c1', 'c2', 'c3']) {
      await small.save({ name, code: `export const name = "${name}";\n` });
      await small.compileSkill(name);
    }
    expect(small.stats().cache.size).toBe(2);
    await small.close();
  });
});
