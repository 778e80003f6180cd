// The shipped word vectors (data/word-vectors.bin, src/catalog/word-vectors.ts) and what they give
// search in every install, with no sentence encoder: paraphrases found through words the tool does
// not use, and tools found by their input schema's words (src/catalog/word-vector-index.ts).

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Embedder } from '../../src/catalog/embedding-client.js';
import { setQueryExpansion } from '../../src/catalog/query-expansion.js';
import { entryId, ToolSearchIndex } from '../../src/catalog/search-index.js';
import type { ToolEntry } from '../../src/catalog/index.js';
import { processTerm } from '../../src/catalog/text-analysis.js';
import { sharedWordVectors, STEM_PROBE, WordVectors } from '../../src/catalog/word-vectors.js';

const FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../data/word-vectors.bin');

function tool(category: string, name: string, description: string, input_schema: Record<string, unknown> = { type: 'object' }): ToolEntry {
  return { name, description, category, mcp_server: category, functions: [], use_cases: [], input_schema, source: 'upstream' };
}

const TOOLS = [
  tool('google-maps', 'maps_elevation', 'Get elevation data for locations on the earth'),
  tool('filesystem', 'create_directory', 'Create a new directory or ensure a directory exists.'),
  tool('filesystem', 'move_file', 'Move or rename files and directories.'),
  tool('github', 'create_issue', 'Create a new issue in a GitHub repository'),
  tool('slack', 'slack_post_message', 'Post a new message to a Slack channel'),
  tool('stripe', 'list_disputes', 'List disputes on payments', { type: 'object', properties: { status: { type: 'string', enum: ['won', 'lost', 'needs_response'] } } }),
  tool('pandoc', 'convert', 'Convert a document between formats', { type: 'object', properties: { target_format: { type: 'string', description: 'the output format', enum: ['pdf', 'docx', 'epub'] } } }),
];

const off = new Embedder({ disabled: true });

function index(wordVectors?: WordVectors | null): ToolSearchIndex {
  const i = new ToolSearchIndex(() => off, undefined, false, wordVectors === undefined ? {} : { wordVectors });
  for (const t of TOOLS) i.add(t);
  return i;
}

const top = (i: ToolSearchIndex, query: string): unknown => i.search(query)[0]?.id;

describe('the shipped word vectors', () => {
  it('were built with the stemmer search uses now (else: npm run build && node dist/scripts/build-word-vectors.js)', () => {
    const vectors = sharedWordVectors();
    expect(vectors).not.toBeNull();
    expect(vectors?.stemProbe).toBe(STEM_PROBE.map((w) => processTerm(w) ?? '').join(' '));
  });

  it('know English words and place synonyms near each other', () => {
    const v = sharedWordVectors() as WordVectors;
    expect(v.size).toBeGreaterThan(20_000);
    for (const word of ['folder', 'altitude', 'dispute', 'remember']) expect(v.has(processTerm(word) as string), word).toBe(true);
    expect(v.has('screnshot')).toBe(false);
    expect(v.similarity('folder', 'directory')).toBeGreaterThan(0.6);
    expect(v.similarity('folder', 'directory')).toBeGreaterThan(v.similarity('folder', 'pizza') + 0.3);
    expect(v.similarity(processTerm('altitude') as string, processTerm('elevation') as string)).toBeGreaterThan(0.5);
  });

  it('refuse a damaged file', () => {
    const file = readFileSync(FILE);
    expect(() => new WordVectors(file.subarray(0, file.length - 1))).toThrow(/damaged/);
    expect(() => new WordVectors(Buffer.from('not vectors'))).toThrow(/not a word-vector file/);
  });
});

describe('search without the sentence encoder', () => {
  it('finds a tool described in other words through the word vectors, and says it ranked with them', () => {
    const i = index();
    expect(top(i, 'altitude of a mountain town')).toBe(entryId('google-maps', 'maps_elevation'));
    expect(top(i, 'make a new folder')).toBe(entryId('filesystem', 'create_directory'));
    expect(top(i, 'show the payment quarrels')).toBe(entryId('stripe', 'list_disputes'));
    expect(i.lastRanking.ranking).toBe('vectors');
  });

  it('is lexical, and misses those, when the vectors are missing (and WordNet: the default install before them)', () => {
    const i = index(null);
    setQueryExpansion(false);
    try {
      expect(top(i, 'altitude of a mountain town')).not.toBe(entryId('google-maps', 'maps_elevation'));
      expect(i.lastRanking.ranking).toBe('lexical');
    } finally {
      setQueryExpansion(true);
    }
  });

  it("finds a tool by its input schema's property descriptions and enum values, below its name and description", () => {
    const i = index();
    expect(top(i, 'epub')).toBe(entryId('pandoc', 'convert'));
    expect(top(i, 'needs_response')).toBe(entryId('stripe', 'list_disputes'));
    // A word of one tool's description outranks the same word in another tool's schema.
    i.add(tool('docs', 'output_report', 'Write a report of the output format choices'));
    expect(top(i, 'output format report')).toBe(entryId('docs', 'output_report'));
  });

  it('keeps exact names first: the vectors add to a lexical hit, they do not drown it', () => {
    const i = index();
    expect(top(i, 'move_file')).toBe(entryId('filesystem', 'move_file'));
    expect(top(i, 'create_issue')).toBe(entryId('github', 'create_issue'));
    expect(top(i, 'create directory')).toBe(entryId('filesystem', 'create_directory'));
  });
});
