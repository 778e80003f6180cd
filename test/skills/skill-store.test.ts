// The skill store's API on a real folder: round trips per language, SKILL.md front matter, name
// validation (traversal, reserved names), syntax errors with positions, list and delete.

import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { SkillError } from '../../src/skills/index.js';
import type { SkillStore } from '../../src/skills/index.js';
import { makeStore, makeTempDir } from './helpers.js';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

function frontMatter(markdown: string): Record<string, unknown> {
  const match = /^---\n([\s\S]*?)\n---\n/.exec(markdown);
  if (!match) throw new Error('no front matter');
  return parse(match[1] ?? '') as Record<string, unknown>;
}

async function rejection(promise: Promise<unknown>): Promise<SkillError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SkillError) return error;
    throw error;
  }
  throw new Error('expected a SkillError');
}

let dir: string;
let cleanup: () => Promise<void>;
let store: SkillStore;
let clock: Date;

beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir());
  clock = new Date('2025-11-04T10:00:00.000Z');
  store = makeStore(dir, { now: () => clock });
});

afterEach(async () => {
  await store.close();
  await cleanup();
});

describe('round trips', () => {
  test('a JavaScript skill is saved as index.js with SKILL.md and loads back unchanged', async () => {
    const code = '/** Doubles a number. */\nexport function double(x) {\n  return x * 2;\n}\n';
    const saved = await store.save({ name: 'doubler', code, description: 'Doubles numbers' });
    expect(saved).toMatchObject({
      success: true,
      name: 'doubler',
      language: 'javascript',
      description: 'Doubles numbers',
      exports: ['double'],
      created: '2025-11-04T10:00:00.000Z',
      updated: '2025-11-04T10:00:00.000Z',
      hash: sha256(code),
      path: join(dir, 'doubler'),
    });
    expect((await readdir(join(dir, 'doubler'))).sort()).toEqual(['SKILL.md', 'index.js']);
    expect(await readFile(join(dir, 'doubler', 'index.js'), 'utf8')).toBe(code);

    const loaded = await store.load('doubler');
    expect(loaded.code).toBe(code);
    expect(loaded.metadata).toEqual({
      name: 'doubler',
      description: 'Doubles numbers',
      language: 'javascript',
      visibility: 'shared',
      created: '2025-11-04T10:00:00.000Z',
      updated: '2025-11-04T10:00:00.000Z',
      hash: sha256(code),
      exports: ['double'],
    });
  });

  test('a TypeScript skill is saved as index.ts and keeps its types', async () => {
    const code = 'export interface Item { risk: number }\nexport function risky(items: Item[], min: number = 5): Item[] {\n  return items.filter((i) => i.risk >= min);\n}\n';
    const saved = await store.save({ name: 'risky', code, language: 'typescript' });
    expect(saved.language).toBe('typescript');
    expect(saved.exports).toEqual(['risky']);
    expect(await readFile(join(dir, 'risky', 'index.ts'), 'utf8')).toBe(code);
    const loaded = await store.load('risky');
    expect(loaded.code).toBe(code);
    const markdown = await readFile(join(dir, 'risky', 'SKILL.md'), 'utf8');
    expect(markdown).toContain('### `risky(items: Item[], min: number = 5): Item[]`');
  });

  test('a Python skill is detected, saved as index.py, and its top-level defs are its exports', async () => {
    const code = 'import json\n\ndef summarize(rows):\n    """Count the rows."""\n    return {"count": len(rows)}\n\ndef _helper(x):\n    return x\n';
    const saved = await store.save({ name: 'py_summary', code });
    expect(saved.language).toBe('python');
    expect(saved.exports).toEqual(['summarize', '_helper']);
    expect(await readFile(join(dir, 'py_summary', 'index.py'), 'utf8')).toBe(code);
    expect((await store.load('py_summary')).code).toBe(code);
    const markdown = await readFile(join(dir, 'py_summary', 'SKILL.md'), 'utf8');
    expect(markdown).toContain('exec(load_skill("py_summary"))');
    expect(markdown).toContain('### `summarize(rows)`\n\nCount the rows.');
  });

  test('Python code is refused with the injected validator message and line', async () => {
    const python = makeStore(dir, {
      validatePython: async (code) => (code.includes('def broken(') ? { line: 2, message: "SyntaxError: expected ':'" } : null),
    });
    const error = await rejection(python.save({ name: 'bad_py', code: 'x = 1\ndef broken(a)\n    return a\n', language: 'python' }));
    expect(error.code).toBe('SYNTAX_ERROR');
    expect(error.line).toBe(2);
    expect(error.message).toContain("expected ':'");
    await python.close();
  });

  test('SKILL.md front matter carries name, description, language, visibility, created, updated and the sha256 of the code', async () => {
    const code = 'function greet(name) {\n  return `hi ${name}`;\n}\n';
    await store.save({ name: 'greeter', code, description: 'Greets: politely' });
    const fields = frontMatter(await readFile(join(dir, 'greeter', 'SKILL.md'), 'utf8'));
    expect(fields).toEqual({
      name: 'greeter',
      description: 'Greets: politely',
      language: 'javascript',
      visibility: 'shared',
      created: '2025-11-04T10:00:00.000Z',
      updated: '2025-11-04T10:00:00.000Z',
      hash: sha256(code),
    });
  });

  test('the generated body documents exported functions with parameters and doc comments', async () => {
    const code = [
      '/**',
      ' * Keep the items at or above a risk threshold.',
      ' * @param items rows with a risk_score',
      ' */',
      'function filter_high_risk(items, threshold = 7) { return items.filter(i => i.risk_score >= threshold) }',
      '',
      '// Adds two numbers.',
      'function add(a, b) { return a + b }',
      '',
    ].join('\n');
    const saved = await store.save({ name: 'filters', code });
    expect(saved.description).toBe('Keep the items at or above a risk threshold.');
    const markdown = await readFile(join(dir, 'filters', 'SKILL.md'), 'utf8');
    expect(markdown).toContain('const { filter_high_risk, add } = await import_skill("filters");');
    expect(markdown).toContain('### `filter_high_risk(items, threshold = 7)`\n\nKeep the items at or above a risk threshold.\n@param items rows with a risk_score');
    expect(markdown).toContain('### `add(a, b)`\n\nAdds two numbers.');
  });

  test('a body given by the caller replaces the generated one', async () => {
    await store.save({ name: 'documented', code: 'export const answer = 42;\n', body: '# Documented\n\nHand-written notes.\n' });
    const markdown = await readFile(join(dir, 'documented', 'SKILL.md'), 'utf8');
    expect(markdown.endsWith('\n# Documented\n\nHand-written notes.\n')).toBe(true);
  });

  test('created is preserved across updates while updated and hash follow the new code', async () => {
    await store.save({ name: 'evolving', code: 'function v() { return 1 }\n' });
    clock = new Date('2025-11-05T12:30:00.000Z');
    const second = 'function v() { return 2 }\n';
    const saved = await store.save({ name: 'evolving', code: second });
    expect(saved.created).toBe('2025-11-04T10:00:00.000Z');
    expect(saved.updated).toBe('2025-11-05T12:30:00.000Z');
    expect(saved.hash).toBe(sha256(second));
    // A fresh store reading the disk sees the same.
    const other = makeStore(dir);
    const loaded = await other.load('evolving');
    expect(loaded.metadata.created).toBe('2025-11-04T10:00:00.000Z');
    expect(loaded.metadata.updated).toBe('2025-11-05T12:30:00.000Z');
    expect(loaded.code).toBe(second);
    await other.close();
  });

  test('changing the language replaces the code file instead of leaving both', async () => {
    await store.save({ name: 'switcher', code: 'export const a = 1;\n' });
    await store.save({ name: 'switcher', code: 'export const a: number = 1;\n', language: 'typescript' });
    expect((await readdir(join(dir, 'switcher'))).sort()).toEqual(['SKILL.md', 'index.ts']);
  });

  test('extra files a user keeps in a skill folder survive a save', async () => {
    await store.save({ name: 'with_data', code: 'export const a = 1;\n' });
    await writeFile(join(dir, 'with_data', 'notes.txt'), 'keep me');
    await store.save({ name: 'with_data', code: 'export const a = 2;\n' });
    expect(await readFile(join(dir, 'with_data', 'notes.txt'), 'utf8')).toBe('keep me');
  });

  test('code without functions, braces or language is saved as JavaScript', async () => {
    const saved = await store.save({ name: 'plain', code: 'export const x = 1;\n' });
    expect(saved.language).toBe('javascript');
  });
});

describe('names', () => {
  const badNames = ['../x', 'a/b', '..', '.', '/etc/passwd', 'C:\\x', 'a\u0000b', '', ' a', 'a b', '1abc', '.hidden', 'x.js', 'a'.repeat(65)];
  test.each(badNames)('save refuses %j', async (name) => {
    const error = await rejection(store.save({ name, code: 'export const a = 1;\n' }));
    expect(error.code).toBe('INVALID_NAME');
    expect(await readdir(dir)).toEqual([]);
  });

  const reserved = ['con', 'CON', 'nul', 'aux', 'prn', 'com1', 'LPT9', 'node_modules', '__proto__', 'constructor', 'prototype'];
  test.each(reserved)('save refuses the reserved name %j', async (name) => {
    const error = await rejection(store.save({ name, code: 'export const a = 1;\n' }));
    expect(error.code).toBe('INVALID_NAME');
    expect(error.message).toContain('reserved');
  });

  test('load and delete refuse traversal too', async () => {
    expect((await rejection(store.load('../etc'))).code).toBe('INVALID_NAME');
    expect((await rejection(store.delete('a/../../b'))).code).toBe('INVALID_NAME');
    expect((await rejection(store.compileSkill('..'))).code).toBe('INVALID_NAME');
  });

  test('names up to 64 characters with letters, digits, _ and - are accepted', async () => {
    const name = `_A-z_09${'x'.repeat(57)}`;
    expect(name.length).toBe(64);
    await expect(store.save({ name, code: 'export const a = 1;\n' })).resolves.toMatchObject({ success: true });
  });

  test('a name differing only in case from an existing skill is refused', async () => {
    await store.save({ name: 'Report', code: 'export const a = 1;\n' });
    expect((await rejection(store.save({ name: 'report', code: 'export const a = 1;\n' }))).code).toBe('NAME_CONFLICT');
  });
});

describe('validation', () => {
  test('JavaScript that does not parse is refused with the parser message and line:column', async () => {
    const error = await rejection(store.save({ name: 'broken', code: 'export function f() {\n  return 1 +;\n}\n' }));
    expect(error.code).toBe('SYNTAX_ERROR');
    expect(error.line).toBe(2);
    expect(error.column).toBe(13);
    expect(error.message).toMatch(/Unexpected token \(line 2, column 13\)/);
    await expect(readdir(dir)).resolves.toEqual([]);
  });

  test('TypeScript errors point into the TypeScript as written', async () => {
    const code = 'type T = { a: number };\nexport function f(x: T): number {\n  return x.a +* 2;\n}\n';
    const error = await rejection(store.save({ name: 'broken_ts', code, language: 'typescript' }));
    expect(error.code).toBe('SYNTAX_ERROR');
    expect(error.line).toBe(3);
  });

  test('TypeScript without a type-only erasure (enum) is refused with its line', async () => {
    const error = await rejection(store.save({ name: 'enum_ts', code: 'const a = 1;\nenum Color { Red }\n', language: 'typescript' }));
    expect(error.code).toBe('SYNTAX_ERROR');
    expect(error.line).toBe(2);
    expect(error.message).toContain('not supported');
  });

  test('top-level await is accepted', async () => {
    await expect(store.save({ name: 'awaiting', code: 'const data = await Promise.resolve(3);\nexport const value = data;\n' })).resolves.toMatchObject({ exports: ['value'] });
  });

  test('importing anything but a skill is refused', async () => {
    const error = await rejection(store.save({ name: 'host_import', code: "import fs from 'node:fs';\nexport const a = fs;\n" }));
    expect(error.code).toBe('IMPORT_NOT_ALLOWED');
    expect(error.message).toContain('only other skills');
    expect(error.line).toBe(1);
    expect((await rejection(store.save({ name: 'dyn', code: "export async function f() {\n  return import('fs');\n}\n" }))).code).toBe('IMPORT_NOT_ALLOWED');
  });

  test('code over the size cap is refused', async () => {
    const small = makeStore(dir, { maxCodeBytes: 100 });
    expect((await rejection(small.save({ name: 'big', code: `export const s = "${'x'.repeat(200)}";\n` }))).code).toBe('CODE_TOO_LARGE');
    await small.close();
  });

  test('empty code, a bad language or a bad description are refused as arguments', async () => {
    expect((await rejection(store.save({ name: 'e', code: '  ' }))).code).toBe('INVALID_ARGUMENT');
    expect((await rejection(store.save({ name: 'e', code: 'x', language: 'ruby' as never }))).code).toBe('INVALID_ARGUMENT');
    expect((await rejection(store.save({ name: 'e', code: 'x', description: 5 as never }))).code).toBe('INVALID_ARGUMENT');
  });
});

describe('list, load, delete', () => {
  test('list is sorted by name and shows name, description, language, exports, updated, visibility', async () => {
    await store.save({ name: 'zeta', code: 'export function z() {}\n', description: 'Last' });
    await store.save({ name: 'alpha', code: 'def a(x):\n    return x\n', description: 'First' });
    expect(await store.list()).toEqual({
      count: 2,
      skills: [
        { name: 'alpha', description: 'First', language: 'python', exports: ['a'], updated: '2025-11-04T10:00:00.000Z', visibility: 'shared' },
        { name: 'zeta', description: 'Last', language: 'javascript', exports: ['z'], updated: '2025-11-04T10:00:00.000Z', visibility: 'shared' },
      ],
    });
  });

  test('an unknown skill is SKILL_NOT_FOUND with close names suggested', async () => {
    await store.save({ name: 'filter_high_risk', code: 'function filter_high_risk() {}\n' });
    const error = await rejection(store.load('filter_high_rsk'));
    expect(error.code).toBe('SKILL_NOT_FOUND');
    expect(error.suggestions).toEqual(['filter_high_risk']);
    expect(error.message).toContain('Did you mean "filter_high_risk"');
  });

  test('delete removes the folder; deleting again is SKILL_NOT_FOUND', async () => {
    await store.save({ name: 'temp', code: 'export const a = 1;\n' });
    await expect(store.delete('temp')).resolves.toEqual({ success: true });
    expect(await readdir(dir)).toEqual([]);
    expect((await rejection(store.load('temp'))).code).toBe('SKILL_NOT_FOUND');
    expect((await rejection(store.delete('temp'))).code).toBe('SKILL_NOT_FOUND');
  });

  test('a started store serves saves made through it at once and survives a restart', async () => {
    await store.start();
    await store.save({ name: 'persisted', code: 'export const a = 1;\n' });
    expect((await store.load('persisted')).code).toBe('export const a = 1;\n');
    await store.close();
    const restarted = makeStore(dir);
    await restarted.start();
    expect((await restarted.list()).skills.map((s) => s.name)).toEqual(['persisted']);
    await restarted.close();
  });

  test('close is idempotent and later calls fail with STORE_CLOSED', async () => {
    await store.start();
    await Promise.all([store.close(), store.close()]);
    await store.close();
    expect((await rejection(store.load('x'))).code).toBe('STORE_CLOSED');
    expect((await rejection(store.start())).code).toBe('STORE_CLOSED');
  });

  test('a hand-written skill without SKILL.md is served with metadata from the code', async () => {
    await mkdir(join(dir, 'hand_made'));
    await writeFile(join(dir, 'hand_made', 'index.ts'), '/** Sums numbers. */\nexport const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);\n');
    const loaded = await store.load('hand_made');
    expect(loaded.metadata).toMatchObject({ name: 'hand_made', language: 'typescript', exports: ['sum'], description: 'Sums numbers.' });
  });
});
