// The nesting guard in front of the TypeScript stripper (workers/js/nesting.ts). Before it, every
// shape below reached amaro, whose WebAssembly stack ran out: the call failed, the thread reloaded
// the stripper (about 0.1 s) and kept 5-8 MB of the dead instance, for every agent the thread serves.

import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_NESTING, nestingDepth } from '../../workers/js/nesting.js';
import { NESTED_TOO_DEEPLY, stripperLoads, stripTypeScript } from '../../workers/js/strip-types.js';

/** Shapes that trapped the stripper (first figure: where it trapped, measured), at 150 levels. */
const SHAPES: Record<string, (n: number) => string> = {
  'parentheses (200)': (n) => `let x: number = ${'('.repeat(n)}1${')'.repeat(n)}`,
  'arrows (300)': (n) => `let f: any = ${'x => '.repeat(n)}1`,
  'arrows, one a line (300)': (n) => `let f: any = ${'x =>\n'.repeat(n)}1`,
  'template substitutions (300)': (n) => `let x: any = ${'`${'.repeat(n)}1${'}`'.repeat(n)}`,
  'spreads (300)': (n) => `let x: any = ${'[...'.repeat(n)}a${']'.repeat(n)}`,
  'assignments (500)': (n) => `let x: any; ${'x = '.repeat(n)}1`,
  'generics (500)': (n) => `let x: ${'A<'.repeat(n)}B${'>'.repeat(n)} = 1`,
  'ternaries (1,000)': (n) => `let x: any = ${'a ? b : '.repeat(n * 4)}c`,
  'ternaries, one a line (1,000)': (n) => `let x: any = a ? b\n${': a ? b\n'.repeat(n * 4)}: c`,
  'blocks (1,000)': (n) => `let x: number = 1;${'{'.repeat(n)}${'}'.repeat(n)}`,
  'ifs without braces (1,000)': (n) => `let x: number = 1;\n${'if (x)\n'.repeat(n * 4)}x++;`,
};

describe('nestingDepth', () => {
  it('counts brackets, template substitutions and chained operators, not strings or comments', () => {
    expect(nestingDepth('f(g(h(1)))')).toBe(3);
    expect(nestingDepth('"((((((" + \'[[[[\' // ((((((\n/* {{{{{{ */ 1')).toBe(0);
    expect(nestingDepth('`(((( ${a} ((((`')).toBe(1);
    expect(nestingDepth('`${`${`${1}`}`}`')).toBe(3);
    expect(nestingDepth('const f = a => b => c => 1')).toBe(4); // the `=` and three arrows
    expect(nestingDepth('a = 1; b = 2; c = 3')).toBe(1);
    expect(nestingDepth('const a = 1\nconst b = 2\nconst c = 3')).toBe(1);
  });

  it('keeps ordinary code far below the limit (every source file of this repository)', () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const files = execFileSync('git', ['ls-files', 'src', 'workers', 'test', 'bench'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(300);
    const deepest = Math.max(...files.map((f) => nestingDepth(readFileSync(path.join(root, f), 'utf8'))));
    expect(deepest).toBeLessThan(MAX_NESTING / 2);
  });
});

describe('the stripper never traps on nested code', () => {
  for (const [name, make] of Object.entries(SHAPES)) {
    it(`refuses ${name} before the stripper runs, and the next call works without a reload`, () => {
      stripTypeScript('let warm: number = 1', 'strip-only');
      const loads = stripperLoads();
      expect(stripTypeScript(make(150), 'strip-only')).toMatchObject({ ok: false, diagnostic: { message: NESTED_TOO_DEEPLY } });
      expect(stripTypeScript('let n: number = 1', 'strip-only')).toEqual({ ok: true, code: 'let n         = 1' });
      expect(stripperLoads()).toBe(loads);
    });
  }

  it('still strips code nested 60 levels deep', () => {
    expect(stripTypeScript(`let x: number = ${'('.repeat(60)}1${')'.repeat(60)}`, 'strip-only').ok).toBe(true);
  });
});
