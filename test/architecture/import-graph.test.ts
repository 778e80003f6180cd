// The layering test's reader of imports and its circle finder, on small files written here: each
// kind of import is found (and told type-only or not), and a circle is reported with its members.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findCycles, importEdges, sourceFiles } from './import-graph.js';

const root = mkdtempSync(path.join(tmpdir(), 'import-graph-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function write(file: string, text: string): void {
  mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  writeFileSync(path.join(root, file), text);
}

describe('import graph', () => {
  it('finds every kind of import, resolves .js to the .ts source, and tells type-only ones apart', () => {
    write('src/a/types.ts', 'export interface T { x: number }\nexport const V = 1;\n');
    write('src/a/mixed.ts', "import { V, type T } from './types.js';\nexport const w: T = { x: V };\n");
    write('src/b/user.ts', [
      "import type { T } from '../a/types.js';",
      "import { type T as U } from '../a/mixed.js';",
      "export { V } from '../a/types.js';",
      "export type { T as T2 } from '../a/types.js';",
      "import 'node:fs';",
      "import './side-effect.js';",
      "export const lazy = () => import('../a/mixed.js');",
      "export type Later = import('../a/types.js').T;",
      'export type Both = T | U;',
    ].join('\n'));
    write('src/b/side-effect.ts', 'export {};\n');
    write('src/b/types.d.ts', 'declare const skipped: number;\n');
    const files = sourceFiles(root, ['src']);
    expect(files).toEqual(['src/a/mixed.ts', 'src/a/types.ts', 'src/b/side-effect.ts', 'src/b/user.ts']);
    const edges = importEdges(root, files).map(({ from, to, line, typeOnly }) => `${from}:${line} -> ${to}${typeOnly ? ' (type)' : ''}`);
    expect(edges).toEqual([
      'src/a/mixed.ts:1 -> src/a/types.ts',
      'src/b/user.ts:1 -> src/a/types.ts (type)',
      'src/b/user.ts:2 -> src/a/mixed.ts (type)',
      'src/b/user.ts:3 -> src/a/types.ts',
      'src/b/user.ts:4 -> src/a/types.ts (type)',
      'src/b/user.ts:6 -> src/b/side-effect.ts',
      'src/b/user.ts:7 -> src/a/mixed.ts',
      'src/b/user.ts:8 -> src/a/types.ts (type)',
    ]);
  });

  it('keeps an import of a file that does not exist as an edge to the path it names', () => {
    write('src/c/lost.ts', "export { x } from '../../test/helper.js';\n");
    expect(importEdges(root, ['src/c/lost.ts'])).toEqual([{ from: 'src/c/lost.ts', to: 'test/helper.js', line: 1, typeOnly: false }]);
  });

  it('reports each tied group once, with a shortest circle through it', () => {
    const graph: Record<string, string[]> = { a: ['b'], b: ['c', 'a'], c: ['a'], d: ['d'], e: ['a'], f: [] };
    const ties = findCycles(Object.keys(graph), (n) => graph[n] ?? []);
    expect(ties).toHaveLength(2);
    const abc = ties.find((t) => t.members.includes('a'));
    expect(abc?.members.slice().sort()).toEqual(['a', 'b', 'c']);
    // a -> b -> a is shorter than a -> b -> c -> a.
    expect(abc?.circle).toEqual(['a', 'b', 'a']);
    expect(ties.find((t) => t.members.includes('d'))?.circle).toEqual(['d', 'd']);
  });

  it('finds no circle in a graph without one', () => {
    const graph: Record<string, string[]> = { a: ['b', 'c'], b: ['c'], c: [] };
    expect(findCycles(Object.keys(graph), (n) => graph[n] ?? [])).toEqual([]);
  });
});
