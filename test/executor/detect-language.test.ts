// Language detection for execute_code without `language`: a table of JavaScript, TypeScript,
// Python, ambiguous snippets and syntax errors, decided by the real parsers (acorn, the
// TypeScript path, and CPython's ast.parse in a real Pyodide worker), and the hints a syntax error
// gets when the code parses in another language.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectLanguage, MAX_PARSE_DETECT_CHARS, parsesAs, otherLanguageHint } from '../../src/executor/detect-language.js';
import { PYTHON_RUNTIME } from '../../src/executor/runtimes.js';
import { readings } from '../../src/executor/detect-reading.js';
import type { DetectOptions } from '../../src/executor/detect-language.js';
import type { Language } from '../../src/executor/executor-types.js';
import { PYTHON_START_MS, startPython } from '../python/helpers.js';
import type { PythonHarness } from '../python/helpers.js';

let h: PythonHarness;
let options: DetectOptions;
beforeAll(async () => {
  h = await startPython();
  options = {
    python: true,
    defaultLanguage: 'javascript',
    checkPython: async (code) => {
      const r = await h.run(PYTHON_RUNTIME.parseCheck ?? '', { contextVars: { src: code } });
      return r.success ? ((r.result as { line: number; message: string } | null) ?? null) : undefined;
    },
  };
}, PYTHON_START_MS);
afterAll(async () => {
  await h?.close();
});

const TABLE: [string, string, Language][] = [
  ['plain JavaScript', 'const xs = [1, 2, 3];\nreturn xs.map((x) => x * 2);', 'javascript'],
  ['JavaScript with top-level await', 'const r = await tools.github.search({ q: "x" })\nreturn r', 'javascript'],
  ['JavaScript reading JSON', 'const data = JSON.parse(read_file("a.json"))\nresult = data.length', 'javascript'],
  ['TypeScript annotations', 'const xs: number[] = [1, 2]\ninterface P { x: number }\nreturn xs.length as number', 'typescript'],
  ['TypeScript enum', 'enum Color { Red, Green }\nreturn Color.Green', 'typescript'],
  ["the seed's data example", 'data = json.loads(read_file("large_dataset.json"))\nfiltered = [d for d in data if d[\'status\'] == \'active\']\nresult = {\'active\': len(filtered)}', 'python'],
  ['Python that also parses as JavaScript', 'data = json.loads(read_file("x.json"))', 'python'],
  ['Python tuple unpacking', 'sanitized, tokens = tokenize_pii("a@b.example")\nresult = tokens', 'python'],
  ['Python def with a top-level return', 'def double(x):\n    return x * 2\n\nreturn double(21)', 'python'],
  ['Python imports and blocks', 'import math\nfor i in range(3):\n    print(math.sqrt(i))', 'python'],
  ["the seed's skill example", 'skill = load_skill("filter_high_risk")\nexec(skill)\nresult = filter_high_risk([])', 'python'],
  ['ambiguous: an assignment to result', 'result = 1 + 2', 'javascript'],
  ['ambiguous: a bare call', 'print("hello")', 'javascript'],
  ['ambiguous: an empty program', '', 'javascript'],
  ['JavaScript with a syntax error', 'const x = ;\nreturn x', 'javascript'],
  ['Python with a syntax error', 'def f(:\n    return 1\nfor x in range(2):\n    print(x)', 'python'],
];

describe('detectLanguage', () => {
  it.each(TABLE)('%s', async (_what, code, expected) => {
    expect((await detectLanguage(code, options)).language).toBe(expected);
  });

  it('never picks Python on a daemon without Python, and falls back to the configured default', async () => {
    const noPython = { ...options, python: false };
    expect((await detectLanguage('for x in xs:\n    print(x)', noPython)).language).toBe('javascript');
    expect((await detectLanguage('@@@ ???', { ...options, defaultLanguage: 'typescript' })).language).toBe('typescript');
    expect((await detectLanguage('@@@ ???', options))).toEqual({ language: 'javascript', reason: 'default' });
  });

  it('takes linear time on a megabyte of code', async () => {
    const big = 'const a = [1, 2, 3];\n'.repeat(50_000);
    const started = performance.now();
    expect((await detectLanguage(big, options)).language).toBe('javascript');
    // 50,000 declarations in one scope: acorn's bookkeeping is quadratic, so big code is not parsed here.
    const declarations = Array.from({ length: 50_000 }, (_, i) => `const a${i} = [1, 2];`).join('\n');
    expect((await detectLanguage(declarations, options)).language).toBe('javascript');
    const python = Array.from({ length: 50_000 }, (_, i) => `a${i} = [x for x in range(3)]`).join('\n');
    expect((await detectLanguage(python, options)).language).toBe('python');
    // What keeps it linear, checked by behaviour rather than by the clock: code this big is never
    // handed to acorn or the TypeScript compiler (both are superlinear on it) on the coordinator.
    expect(parsesAs(declarations, 'javascript')).toBe(false);
    expect(parsesAs(declarations, 'typescript')).toBe(false);
    // A generous bound that proves there is no stall (a quadratic parse of this takes minutes).
    expect(performance.now() - started).toBeLessThan(30_000);
  });
});

describe('readings of code both parsers accept', () => {
  it('take Python\'s layout: one unindented statement a line, or statements after a `;`', () => {
    expect(readings('x = 1;  y = 2')?.pythonCompatible).toBe(true);
    expect(readings('  x = 1')?.pythonCompatible).toBe(false);
    expect(readings('x = 1\n  y = 2')?.pythonCompatible).toBe(false);
    expect(readings('x = (1 +\n  2)')?.pythonCompatible).toBe(true);
    expect(readings('x = 1 +\n  2')?.pythonCompatible).toBe(false);
    expect(readings('x = 1 /* no */')?.pythonCompatible).toBe(false);
  });

  it('stay linear and never throw on the largest code they read', async () => {
    const noPython: DetectOptions = { python: true, defaultLanguage: 'javascript' };
    const started = performance.now();
    const lines = 'x = 1\n'.repeat(Math.floor(MAX_PARSE_DETECT_CHARS / 6) - 1);
    expect(readings(lines)?.pythonCompatible).toBe(true);
    const oneLine = 'x = 1; '.repeat(Math.floor(MAX_PARSE_DETECT_CHARS / 7) - 1);
    expect(readings(oneLine)?.pythonCompatible).toBe(true);
    // Assigning undeclared names is Python; deep nesting is judged without a stack overflow.
    expect((await detectLanguage(lines, noPython)).language).toBe('python');
    const deep = `result = ${'['.repeat(3000)}${']'.repeat(3000)}`;
    expect(['javascript', 'python']).toContain((await detectLanguage(deep, noPython)).language);
    // A generous bound that proves there is no stall (a quadratic pass over these takes far longer).
    expect(performance.now() - started).toBeLessThan(20_000);
  });
});

describe('otherLanguageHint', () => {
  it('names Python and the argument for Python code run as JavaScript', async () => {
    const code = 'rows = [r for r in range(3)]\nresult = len(rows)';
    expect(await otherLanguageHint(code, 'javascript', options)).toBe('this looks like Python; pass language: "python"');
  });

  it('names JavaScript for JavaScript code run as Python, and TypeScript where only it parses', async () => {
    expect(await otherLanguageHint('const x = [1].map((v) => v + 1);\nreturn x', 'python', options)).toBe('this looks like JavaScript; pass language: "javascript"');
    expect(await otherLanguageHint('let n: number = 1\nreturn n', 'python', options)).toBe('this looks like TypeScript; pass language: "typescript"');
  });

  it('gives no hint when no other language accepts the code', async () => {
    expect(await otherLanguageHint('const x = ;', 'javascript', options)).toBeUndefined();
    expect(await otherLanguageHint('def f(:', 'python', options)).toBeUndefined();
  });
});
