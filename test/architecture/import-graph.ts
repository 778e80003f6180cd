// The import graph of the daemon's own TypeScript (src/, workers/), read with the TypeScript
// compiler's parser (not regular expressions), for the layering test: every static import and
// re-export, `import type`, dynamic `import()` and `import('…').T` type references, each resolved
// to the file it names. Package imports (`node:…`, `redis`) are not part of the graph.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** One import of one file: repository-relative paths with forward slashes. */
export interface ImportEdge {
  from: string;
  /** The file it resolves to (`.js` in the specifier read as the `.ts` source). */
  to: string;
  /** 1-based line of the import in `from`. */
  line: number;
  /** `import type`, `export type`, or an `import('…')` type reference: gone after compilation. */
  typeOnly: boolean;
}

/** Every `.ts` file under `dirs` (repository-relative, sorted). */
export function sourceFiles(root: string, dirs: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(rel);
    }
  };
  for (const dir of dirs) walk(dir);
  return out.sort();
}

function isTypeOnlyImport(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (clause === undefined) return false; // `import './x.js'` runs the module
  if (clause.isTypeOnly) return true;
  const named = clause.namedBindings;
  return clause.name === undefined && named !== undefined && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
}

function isTypeOnlyExport(node: ts.ExportDeclaration): boolean {
  if (node.isTypeOnly) return true;
  const clause = node.exportClause;
  return clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly);
}

/** The relative specifiers `file` imports, with their line and whether only types cross. */
function specifiersOf(root: string, file: string): { specifier: string; line: number; typeOnly: boolean }[] {
  const text = readFileSync(path.join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: { specifier: string; line: number; typeOnly: boolean }[] = [];
  const add = (literal: ts.Node, typeOnly: boolean): void => {
    if (!ts.isStringLiteralLike(literal)) return;
    found.push({ specifier: literal.text, line: source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1, typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) add(node.moduleSpecifier, isTypeOnlyImport(node));
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined) add(node.moduleSpecifier, isTypeOnlyExport(node));
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node.moduleReference.expression, node.isTypeOnly);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] !== undefined) add(node.arguments[0], false);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal, true);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * Every import between files of the repository made by `files`. A relative specifier that names
 * no file here still becomes an edge (to the path it names), so the layer check can refuse it.
 */
export function importEdges(root: string, files: readonly string[]): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const from of files) {
    for (const { specifier, line, typeOnly } of specifiersOf(root, from)) {
      if (!specifier.startsWith('.')) continue;
      const named = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
      const asSource = named.replace(/\.js$/, '.ts');
      const to = existsSync(path.join(root, asSource)) ? asSource : named;
      edges.push({ from, to, line, typeOnly });
    }
  }
  return edges;
}

/** Nodes tied together by imports, and one circle through them. */
export interface Tie<N> {
  /** The strongly connected group: each member reaches every other. */
  members: N[];
  /** The shortest way from one member back to itself (first = last). */
  circle: N[];
}

/** Every group of `nodes` tied together around a circle (Tarjan's algorithm); empty when there is none. */
export function findCycles<N>(nodes: readonly N[], next: (node: N) => Iterable<N>): Tie<N>[] {
  const index = new Map<N, number>();
  const low = new Map<N, number>();
  const onStack = new Set<N>();
  const stack: N[] = [];
  const groups: N[][] = [];
  let counter = 0;
  const connect = (v: N): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of next(v)) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const group: N[] = [];
    let w: N;
    do {
      w = stack.pop() as N;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1 || [...next(v)].includes(v)) groups.push(group);
  };
  for (const node of nodes) if (!index.has(node)) connect(node);
  return groups.map((group) => ({ members: [...group].reverse(), circle: shortestCircle(group, next) }));
}

/** Breadth-first from the group's root back to it, inside the group. */
function shortestCircle<N>(group: readonly N[], next: (node: N) => Iterable<N>): N[] {
  const members = new Set(group);
  const start = group[group.length - 1] as N;
  const cameFrom = new Map<N, N>();
  const queue: N[] = [start];
  while (queue.length > 0) {
    const v = queue.shift() as N;
    for (const w of next(v)) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path: N[] = [start];
        for (let at: N | undefined = v; at !== undefined && at !== start; at = cameFrom.get(at)) path.unshift(at);
        return [start, ...path];
      }
      if (!cameFrom.has(w)) {
        cameFrom.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}
