// Guards the daemon's layering (as the MCP SDK's barrelClean test guards its own): reads every
// import of src/ and workers/ with the TypeScript parser and fails on an import that runs up the
// layer table below, on two folders of one layer that import each other around a circle, and on
// any circle of imports between files (type-only imports included: a circle of types still ties
// the files together). docs/architecture.md shows the same table ("Layers"), checked here too.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findCycles, importEdges, sourceFiles } from './import-graph.js';
import type { ImportEdge, Tie } from './import-graph.js';

interface Layer {
  name: string;
  /** Folders (ending in `/`) and single files; a file belongs to the longest path that holds it. */
  paths: readonly string[];
  /** What the layer holds, and why it sits where it does. */
  holds: string;
}

/**
 * The layers, top to bottom. A file may import files of its own layer and of the layers below
 * it, never above. So `workers/` (the bottom) imports nothing from `src/`, not even types: the
 * messages both sides share are defined in workers/kit/ (protocol.ts) and the coordinator
 * imports them from there. Only the composition root sits above the cluster
 * adapters, so only it picks an implementation (embedded or Redis) for a seam.
 */
const LAYERS: readonly Layer[] = [
  {
    name: 'composition root',
    paths: ['src/daemon.ts', 'src/cli/', 'src/cluster/shared-state.ts'],
    holds: 'the commands, and the wiring of the subsystems; picks each seam\'s implementation from the config (shared-state.ts: embedded or Redis)',
  },
  { name: 'cluster adapters', paths: ['src/cluster/'], holds: 'the Redis implementation of the shared-store primitives (redis/), the change bus, cluster membership and the load balancer\'s hash' },
  { name: 'MCP front', paths: ['src/mcp/'], holds: 'the MCP tools and resources, the HTTP daemon, the stdio bridge' },
  { name: 'sandbox host', paths: ['src/sandbox-api/'], holds: 'the host side of every sandbox power (permissions, PII, tools, fetch, skills)' },
  { name: 'executor', paths: ['src/executor/'], holds: 'the coordinator side of the sandbox: queues, pools, sandbox processes, host links' },
  {
    name: 'domains',
    paths: ['src/catalog/', 'src/pii/', 'src/skills/', 'src/workspace/', 'src/upstream/'],
    holds: 'what the daemon serves: tool catalog and search, PII detection and vaults, skills, workspaces, upstream MCP servers',
  },
  { name: 'config', paths: ['src/config/', 'src/access/'], holds: 'the options, declared once and resolved once; each language\'s facts; the one access check and its grants' },
  { name: 'kernel', paths: ['src/util/', 'src/store/'], holds: 'shared helpers below every subsystem: logger, atomic writes, locks, the store error, sealing; the shared-store primitives and their in-memory implementation (store/)' },
  {
    name: 'runtimes',
    paths: ['workers/js/', 'workers/python/'],
    holds: 'one folder per sandbox runtime (src/executor/runtimes.ts has its row): its worker thread, realm or interpreter, preprocessing',
  },
  {
    name: 'sandbox kit',
    paths: ['workers/kit/'],
    holds: 'what every runtime shares: the sandbox process (pool host, threads, memory watch), host links, the call scope, the sandbox API table, the messages shared with the coordinator',
  },
];

/** Folders of one layer that must not import each other at all (peers, not only no circle): a runtime uses the kit, never another runtime. */
const NO_PEER_IMPORTS: readonly string[] = ['runtimes'];

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOC = 'docs/architecture.md';
const DOC_START = '<!-- layers: generated from test/architecture/layering.test.ts -->';
const DOC_END = '<!-- /layers -->';

interface Place {
  layer: number;
  /** The table entry (folder or file) the file belongs to. */
  entry: string;
}

/** Where `file` sits: the longest path of the table that holds it. */
function placeOf(file: string): Place | undefined {
  let best: (Place & { length: number }) | undefined;
  LAYERS.forEach((layer, index) => {
    for (const entry of layer.paths) {
      const holds = entry.endsWith('/') ? file.startsWith(entry) : file === entry;
      if (holds && (best === undefined || entry.length > best.length)) best = { layer: index, entry, length: entry.length };
    }
  });
  return best && { layer: best.layer, entry: best.entry };
}

function tableText(): string {
  return LAYERS.map((layer, i) => `  ${i + 1}. ${layer.name}: ${layer.paths.join(', ')}`).join('\n');
}

function ruleOf(layer: number): string {
  const own = LAYERS[layer] as Layer;
  const below = LAYERS.slice(layer + 1).map((l) => l.name);
  const allowed = below.length === 0 ? 'only its own files' : `its own layer and ${below.join(', ')}`;
  return `${own.name} (${own.paths.join(', ')}) may import ${allowed}`;
}

function edgeText(edge: ImportEdge): string {
  return `${edge.from}:${edge.line} imports ${edge.to}${edge.typeOnly ? ' (type-only)' : ''}`;
}

/** A circle, each step's import, and the rest of the group it ties together. */
function tieText(tie: Tie<string>, edge: (from: string, to: string) => ImportEdge): string {
  const steps = tie.circle.slice(1).map((to, i) => `    ${edgeText(edge(tie.circle[i] as string, to))}`);
  const rest = tie.members.length + 1 > tie.circle.length ? [`    (${tie.members.length} tied together: ${tie.members.join(', ')})`] : [];
  return [`  ${tie.circle.join(' → ')}`, ...steps, ...rest].join('\n');
}

function failure(count: number, what: string, lines: readonly string[], fix: string): string {
  return [
    `${count} ${what}:`,
    ...lines,
    '',
    fix,
    'Layers, top to bottom (a file imports its own layer and the layers below it; test/architecture/layering.test.ts):',
    tableText(),
  ].join('\n');
}

/** The "Layers" table of docs/architecture.md, as this test writes it. */
function layersMarkdown(): string {
  const rows = LAYERS.map((layer, i) => `| ${i + 1}. ${layer.name} | ${layer.paths.map((p) => `\`${p}\``).join(', ')} | ${layer.holds} |`);
  return [DOC_START, '| Layer (top to bottom) | Files | What it holds |', '| --- | --- | --- |', ...rows, DOC_END].join('\n');
}

const files = sourceFiles(ROOT, ['src', 'workers']);
const edges = importEdges(ROOT, files);

describe('layering', () => {
  it('reads the import graph of src/ and workers/ (the parse found the imports)', () => {
    expect(files.length).toBeGreaterThan(100);
    // A known import of each kind, so a parser that silently read nothing cannot pass the rules below.
    expect(edges).toContainEqual(expect.objectContaining({ from: 'src/daemon.ts', to: 'src/catalog/index.ts', typeOnly: false }));
    expect(edges).toContainEqual(expect.objectContaining({ from: 'src/daemon.ts', to: 'src/config/config-types.ts', typeOnly: true }));
    expect(edges.some((e) => e.from.startsWith('src/') && e.to.startsWith('workers/'))).toBe(true);
  });

  it('places every file in exactly one layer, and every path of the table exists', () => {
    const unplaced = files.filter((file) => placeOf(file) === undefined);
    expect(unplaced, failure(unplaced.length, 'files belong to no layer', unplaced.map((f) => `  ${f}`), 'Fix: add their folder to LAYERS (and run this test with UPDATE_LAYERS_DOC=1).')).toEqual([]);
    const missing = LAYERS.flatMap((layer) => layer.paths).filter((p) => !existsSync(path.join(ROOT, p)));
    expect(missing, `LAYERS names paths that do not exist: ${missing.join(', ')}`).toEqual([]);
  });

  it('has no import that runs up the layers (workers/ imports nothing from src/; only the composition root picks implementations)', () => {
    const wrong: string[] = [];
    for (const edge of edges) {
      const from = placeOf(edge.from);
      const to = placeOf(edge.to);
      if (from === undefined) continue; // reported by the test above
      if (to === undefined) wrong.push(`  ${edgeText(edge)}\n    rule: src/ and workers/ import only files of the layers; ${edge.to} is in none`);
      else if (to.layer < from.layer) wrong.push(`  ${edgeText(edge)}\n    rule: ${ruleOf(from.layer)}; ${edge.to} is ${(LAYERS[to.layer] as Layer).name} (${to.entry})`);
    }
    const fix = 'Fix: move the shared piece down (an interface or helper into the lower layer), or the importing code up.';
    expect(wrong, failure(wrong.length, 'imports run the wrong way', wrong, fix)).toEqual([]);
  });

  it('has no two folders of one layer importing each other around a circle', () => {
    const entries = [...new Set(files.map((f) => placeOf(f)?.entry).filter((e) => e !== undefined))];
    const sameLayer = new Map<string, Map<string, ImportEdge>>();
    for (const edge of edges) {
      const from = placeOf(edge.from);
      const to = placeOf(edge.to);
      if (!from || !to || from.layer !== to.layer || from.entry === to.entry) continue;
      const out = sameLayer.get(from.entry) ?? new Map<string, ImportEdge>();
      if (!out.has(to.entry)) out.set(to.entry, edge);
      sameLayer.set(from.entry, out);
    }
    const circles = findCycles(entries, (entry) => sameLayer.get(entry)?.keys() ?? []);
    const lines = circles.map((tie) => tieText(tie, (from, to) => sameLayer.get(from)?.get(to) as ImportEdge));
    const fix = 'Fix: the folders of one layer are peers; what both need goes into a layer below them.';
    expect(lines, failure(lines.length, 'circles between folders of one layer', lines, fix)).toEqual([]);
  });

  it('has runtimes that import only the kit, never each other (a third runtime is one new folder)', () => {
    const peers = edges.filter((edge) => {
      const from = placeOf(edge.from);
      const to = placeOf(edge.to);
      return from && to && from.layer === to.layer && from.entry !== to.entry && NO_PEER_IMPORTS.includes((LAYERS[from.layer] as Layer).name);
    });
    const lines = peers.map((edge) => `  ${edgeText(edge)}`);
    const fix = 'Fix: what two runtimes share goes into workers/kit/.';
    expect(lines, failure(lines.length, 'imports between runtime folders', lines, fix)).toEqual([]);
  });

  it('has no circle of imports between files (type-only imports included)', () => {
    const next = new Map<string, Map<string, ImportEdge>>();
    for (const edge of edges) {
      const out = next.get(edge.from) ?? new Map<string, ImportEdge>();
      if (!out.has(edge.to) || !edge.typeOnly) out.set(edge.to, edge);
      next.set(edge.from, out);
    }
    const circles = findCycles(files, (file) => next.get(file)?.keys() ?? []);
    const lines = circles.map((tie) => tieText(tie, (from, to) => next.get(from)?.get(to) as ImportEdge));
    const fix = 'Fix: move what the files share (a type, a constant) into its own file, or into the one that does not import the other.';
    expect(lines, failure(lines.length, 'import circles', lines, fix)).toEqual([]);
  });

  it('shows the same table in docs/architecture.md ("Layers")', () => {
    const docPath = path.join(ROOT, DOC);
    const doc = readFileSync(docPath, 'utf8');
    const start = doc.indexOf(DOC_START);
    const end = doc.indexOf(DOC_END);
    const expected = layersMarkdown();
    const current = start >= 0 && end > start ? doc.slice(start, end + DOC_END.length) : '';
    if (current !== expected && process.env['UPDATE_LAYERS_DOC'] === '1' && current !== '') {
      writeFileSync(docPath, doc.slice(0, start) + expected + doc.slice(end + DOC_END.length));
      return;
    }
    const message = `${DOC}'s "Layers" table differs from LAYERS in test/architecture/layering.test.ts. Rewrite it with\n  UPDATE_LAYERS_DOC=1 npm test -- test/architecture/layering.test.ts\nor put this between the markers:\n${expected}`;
    expect(current, message).toBe(expected);
  });
});
