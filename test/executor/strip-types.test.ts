// The TypeScript type stripper (amaro): positions kept, syntax errors pointed at the code as
// written, what has no type-only erasure transformed, and a trap in its WebAssembly (nesting
// deeper than its stack) answered with a clear message and no effect on the next call.

import { describe, expect, it } from 'vitest';
import { preprocess } from '../../workers/js/preprocess.js';
import { NESTED_TOO_DEEPLY, parseDiagnostic, stripTypeScript } from '../../workers/js/strip-types.js';

describe('stripTypeScript', () => {
  it('replaces types with spaces, keeping every position', () => {
    const code = 'const x: number = 1;\nfunction f<T>(a: T): T { return a }\ninterface I { a: string }\nexport { f };\n';
    const r = stripTypeScript(code, 'strip-only');
    expect(r).toEqual({ ok: true, code: 'const x         = 1;\nfunction f   (a   )    { return a }\n                         \nexport { f };\n' });
  });

  it('names what has no type-only erasure, with its line and column', () => {
    const r = stripTypeScript('const a = 1;\n  enum Color { Red }\n', 'strip-only');
    expect(r).toEqual({ ok: false, diagnostic: { message: 'TypeScript enum is not supported in strip-only mode', line: 2, column: 3, unsupported: true } });
  });

  it('reports a syntax error at its line and column', () => {
    const r = stripTypeScript('type T = { a: number };\nexport function f(x: T): number {\n  return x.a +* 2;\n}\n', 'strip-only');
    expect(r).toMatchObject({ ok: false, diagnostic: { message: 'Expression expected', line: 3, column: 15, unsupported: false } });
  });

  it('survives a trap from nesting deeper than its stack, and the next call works', () => {
    const deep = `let x: number[] = ${'['.repeat(5000)}${']'.repeat(5000)}`;
    expect(stripTypeScript(deep, 'strip-only')).toEqual({ ok: false, diagnostic: { message: NESTED_TOO_DEEPLY, line: 1, column: 1, unsupported: false, trapped: true } });
    expect(stripTypeScript('let n: number = 1', 'strip-only')).toEqual({ ok: true, code: 'let n         = 1' });
  });
});

describe('parseDiagnostic', () => {
  it('reads the first message and caret of two-digit line numbers', () => {
    const text = '  x TypeScript parameter property is not supported in strip-only mode\n    ,-[10:1]\n  9 | \n 10 | class C { constructor(private x: number) {} }\n    :                       ^^^^^^^^^\n 11 | namespace N {}\n    `----\n  x TypeScript namespace declaration is not supported\n';
    expect(parseDiagnostic(text)).toEqual({ message: 'TypeScript parameter property is not supported in strip-only mode', line: 10, column: 23, unsupported: true });
  });

  it('falls back to line 1, column 1 when no caret is drawn', () => {
    expect(parseDiagnostic('  x something odd\n')).toEqual({ message: 'something odd', line: 1, column: 1, unsupported: false });
  });
});

describe('preprocess of TypeScript', () => {
  it('keeps the sandbox wrapping and columns, top-level return and await included', () => {
    const r = preprocess('const v: number = await Promise.resolve(2);\nreturn v as number', 'typescript');
    expect(r).toMatchObject({ ok: true });
    if (r.ok) expect(r.source.split('\n').slice(0, 2)).toEqual(['(async function () {const v         = await Promise.resolve(2);', 'return v          ']);
  });

  it('transforms enums, namespaces and parameter properties', () => {
    const r = preprocess('enum E { A, B }\nnamespace N { export const a = 1 }\nclass C { constructor(private x: number) {} }\nreturn [E.B, N.a, new C(3)]', 'typescript');
    expect(r.ok).toBe(true);
  });

  it('points a syntax error at the code as submitted', () => {
    expect(preprocess('const x: = 1', 'typescript')).toMatchObject({ ok: false, error: { type: 'SyntaxError', line: 1, column: 10 } });
    expect(preprocess('let a = 1\nlet b: = 2', 'typescript')).toMatchObject({ ok: false, error: { type: 'SyntaxError', line: 2, column: 8 } });
  });

  it('refuses nesting deeper than the stripper can take, then runs the next call', () => {
    const deep = preprocess(`return ${'('.repeat(5000)}1${')'.repeat(5000)} as number`, 'typescript');
    expect(deep).toMatchObject({ ok: false, error: { type: 'SyntaxError', message: NESTED_TOO_DEEPLY } });
    expect(preprocess('return 1 as number', 'typescript').ok).toBe(true);
  });
});
