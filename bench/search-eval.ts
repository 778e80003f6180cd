// The search evaluation: the real tool lists of 27 public MCP servers (harvested by
// bench/harvest-real-catalog.ts into test/fixtures/real-catalog/tools.json) and 114 queries
// written before ranking was tuned (queries.json: keyword, typo and paraphrase kinds). It reports
// hits@1 and hits@3 per kind for this project's ranking and for a plain BM25 scorer over the same
// tools (MiniSearch with no boosts, prefix or fuzzy matching: the textbook baseline).
// Used by `npm run bench -- search` and by test/catalog/search-eval.test.ts (with floors).

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import MiniSearch from 'minisearch';
import { Catalog } from '../src/catalog/index.js';
import type { DynamicToolEntry } from '../src/catalog/index.js';
import { silentLogger } from '../src/util/logger.js';
import { Embedder, sharedEmbedder } from '../src/catalog/embedding-client.js';
import type { EmbedderState } from '../src/catalog/embedding-client.js';
import { embeddingsSettled } from '../src/catalog/embedding-index.js';
import { entryId, ToolSearchIndex } from '../src/catalog/search-index.js';
import type { WordVectors } from '../src/catalog/word-vectors.js';

export type QueryKind = 'keyword' | 'typo' | 'paraphrase';
export const KINDS: readonly QueryKind[] = ['keyword', 'typo', 'paraphrase'];

export interface EvalQuery {
  query: string;
  kind: QueryKind;
  /** `server.tool` names that answer it. */
  expected: string[];
}

export interface HarvestedServer {
  package: string;
  server: string;
  version: string;
  tools: { name: string; description: string; inputSchema: Record<string, unknown> }[];
}

export interface KindScore {
  queries: number;
  hits1: number;
  hits3: number;
}

export type Scores = Record<QueryKind, KindScore>;

/** A ranker: the `server.tool` names it returns for a query, best first. */
export type Ranker = (query: string, limit: number) => string[];

const here = path.dirname(fileURLToPath(import.meta.url));
/** bench/ when run from source (vitest), dist/bench/ when built. */
const FIXTURES = [path.resolve(here, '..', 'test', 'fixtures', 'real-catalog'), path.resolve(here, '..', '..', 'test', 'fixtures', 'real-catalog')];

function fixture(name: string): string {
  for (const dir of FIXTURES) {
    try {
      return readFileSync(path.join(dir, name), 'utf8');
    } catch {
      // try the next location
    }
  }
  throw new Error(`test/fixtures/real-catalog/${name} not found`);
}

export function loadRealCatalog(): HarvestedServer[] {
  return (JSON.parse(fixture('tools.json')) as { servers: HarvestedServer[] }).servers;
}

export function loadQueries(): EvalQuery[] {
  return (JSON.parse(fixture('queries.json')) as { queries: EvalQuery[] }).queries;
}

/** The second query set (40), written before any ranking was run on it: the check on tuning. */
export function loadSecondQueries(): EvalQuery[] {
  return (JSON.parse(fixture('queries-second.json')) as { queries: EvalQuery[] }).queries;
}

/** Queries no tool of the real catalog answers: a search should call its match weak. */
export const OFF_TOPIC_QUERIES: readonly string[] = [
  'bake a chocolate cake',
  'what is the capital of france',
  'translate this sentence into japanese',
  'book a flight to tokyo',
  'play some jazz music',
  'check my blood pressure',
  'order a pizza for dinner',
  'tune a guitar',
  'water the plants in the garden',
  'convert celsius to fahrenheit',
];

/** The project's Catalog holding the harvested tools as live upstream entries, one category per server. */
export function realCatalog(servers: readonly HarvestedServer[], vectorCacheDir?: string, semanticSearch = true): { catalog: Catalog; close(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'cem-search-eval-'));
  const catalog = new Catalog({ dir, logger: silentLogger(), semanticSearch, ...(vectorCacheDir !== undefined ? { vectorCacheDir } : {}) });
  for (const s of servers) {
    const entries: DynamicToolEntry[] = s.tools.map((t) => ({
      name: t.name,
      description: t.description,
      mcp_server: s.server,
      functions: [],
      use_cases: [],
      input_schema: t.inputSchema,
      source: 'upstream',
    }));
    catalog.setDynamicTools(s.server, entries);
  }
  return { catalog, close: () => rmSync(dir, { recursive: true, force: true }) };
}

export function projectRanker(catalog: Catalog): Ranker {
  return (query, limit) => catalog.search({ query, limit, detail_level: 'name' }).tools.map((t) => `${t.category}.${t.name}`);
}

/**
 * Starts the sentence encoder through a first search and waits until every tool has its vector,
 * so the catalog's ranking is the semantic one. Returns the model's state ('unavailable': lexical).
 */
export async function warmSemantic(catalog: Catalog): Promise<EmbedderState> {
  // On even where the test suite turns it off; ranking quality, not this machine's load, is
  // measured: a query waits for its vector.
  sharedEmbedder({ disabled: false }).queryTimeoutMs = 5_000;
  catalog.search({ query: 'warm up', limit: 1, detail_level: 'name' });
  const state = await sharedEmbedder().settled();
  await embeddingsSettled();
  return state;
}

/**
 * The project's ranking with the sentence encoder off (the same index, hits in order): with the
 * shipped word vectors, or with `wordVectors` (null: none, lexical only).
 */
export function lexicalRanker(servers: readonly HarvestedServer[], wordVectors?: WordVectors | null): Ranker {
  const off = new Embedder({ disabled: true });
  const index = new ToolSearchIndex(() => off, undefined, false, wordVectors === undefined ? {} : { wordVectors });
  for (const s of servers) for (const t of s.tools) index.add({ name: t.name, description: t.description, category: s.server, mcp_server: s.server, functions: [], use_cases: [], input_schema: t.inputSchema, source: 'upstream' });
  const names = new Map(servers.flatMap((s) => s.tools.map((t) => [entryId(s.server, t.name), `${s.server}.${t.name}`] as const)));
  return (query, limit) => index.search(query).slice(0, limit).map((h) => names.get(String(h.id)) ?? String(h.id));
}

/** Plain BM25 over name (split into words) and description: no boosts, prefixes or fuzziness. */
export function bm25Ranker(servers: readonly HarvestedServer[]): Ranker {
  const index = new MiniSearch<{ id: string; name: string; description: string }>({ fields: ['name', 'description'], storeFields: [] });
  index.addAll(servers.flatMap((s) => s.tools.map((t) => ({ id: `${s.server}.${t.name}`, name: t.name.replace(/[_\-.]+/g, ' '), description: t.description }))));
  return (query, limit) =>
    index
      .search(query, { combineWith: 'OR' })
      .slice(0, limit)
      .map((r) => String(r.id));
}

export function evaluate(queries: readonly EvalQuery[], rank: Ranker): { scores: Scores; misses: { query: string; kind: QueryKind; got: string[] }[] } {
  const scores = Object.fromEntries(KINDS.map((k) => [k, { queries: 0, hits1: 0, hits3: 0 }])) as Scores;
  const misses: { query: string; kind: QueryKind; got: string[] }[] = [];
  for (const q of queries) {
    const got = rank(q.query, 3);
    const s = scores[q.kind];
    s.queries++;
    if (got[0] !== undefined && q.expected.includes(got[0])) s.hits1++;
    if (got.some((g) => q.expected.includes(g))) s.hits3++;
    else misses.push({ query: q.query, kind: q.kind, got });
  }
  return { scores, misses };
}

const STOPWORDS = new Set(
  'a an the and or of to in on at by for with from into onto out up down over under about as is are be been was were it its this that these those my me i you your we our us they them their he she his her who whom which what when where why how do does did done can could would should will shall may might must not no yes so than then too very just also any all each every some one two three get got let make made have has had use using used via per if else there here s t'.split(' '),
);

/** A word and its usual inflections share a stem ('nodes' 'node', 'connection' 'connect'). */
export function stem(word: string): string {
  let w = word.toLowerCase();
  for (const suffix of ['ations', 'ation', 'ings', 'ing', 'ions', 'ion', 'ies', 'ied', 'es', 'ed', 'ly', 'er', 's']) {
    if (w.length - suffix.length >= 3 && w.endsWith(suffix)) {
      w = w.slice(0, -suffix.length);
      break;
    }
  }
  return w;
}

/** The stems of a text's content words. */
export function contentStems(text: string): Set<string> {
  const words = text
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 2 && !STOPWORDS.has(w));
  return new Set(words.map(stem));
}
