// Detection asks the TypeScript stripper only where a cheaper signal cannot decide: acorn's own
// error must point at TypeScript syntax. Code that fails as JavaScript before any type (or is
// Python) never reaches the stripper; TypeScript too deep for it is TypeScript (its run says why),
// not the default language plus a second trap for the syntax error's hint.

import { describe, expect, it } from 'vitest';
import { detectLanguage, parsesAs, typeScriptAt } from '../../src/executor/detect-language.js';
import { stripperLoads, stripperTraps, stripTypeScript } from '../../workers/js/strip-types.js';
import { TRAPPING_SHAPES } from './fixtures/trapping-typescript.js';

const keyof = TRAPPING_SHAPES['keyof chain (3,300)'] as (n: number) => string;

describe('detection and the type stripper', () => {
  it('does not run the stripper on code that fails as JavaScript before any TypeScript syntax', () => {
    stripTypeScript('let warm: number = 1', 'strip-only');
    const [loads, traps] = [stripperLoads(), stripperTraps()];
    // A JavaScript syntax error first (`)` with no `(`), then a chain that traps the stripper.
    expect(parsesAs(`return 1);\n${keyof(5000)}`, 'typescript')).toBe(false);
    expect(parsesAs('def f(x):\n    return x\nresult = f(1)', 'typescript')).toBe(false);
    expect([stripperLoads(), stripperTraps()]).toEqual([loads, traps]);
  });

  it('still finds TypeScript by where JavaScript stops', () => {
    for (const code of [
      'let x: number = 1',
      'interface A { a: string }\nreturn 1',
      'type T = { a: number }\nreturn 1',
      'enum E { A }\nreturn E.A',
      'const a = [1] as const\nreturn a',
      'const m = new Map<string, number>()\nreturn m.size',
      'function f<T>(a: T) { return a }\nreturn f(1)',
      'let y!: number\ny = 1\nreturn y',
      'abstract class A {}\nreturn 1',
      'class A { private x = 1 }\nreturn new A()',
    ]) {
      expect(parsesAs(code, 'typescript'), code).toBe(true);
    }
    expect(typeScriptAt('let x = ;', 8)).toBe(false);
  });

  it('calls TypeScript that traps the stripper TypeScript, with one trap', async () => {
    const traps = stripperTraps();
    const d = await detectLanguage(`const a: number = 1;\n${keyof(5000)}\nreturn a`, { python: false, defaultLanguage: 'javascript' });
    expect(d).toMatchObject({ language: 'typescript', reason: 'typescript-too-deep', tooDeep: expect.stringMatching(/^TypeScript too deeply nested for the type stripper/) });
    // (On the helper thread: this thread's stripper was not touched.)
    expect(stripperTraps()).toBe(traps);
  });
});
