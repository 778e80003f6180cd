// The semantic signal every install has: soft term matching over the shipped word vectors
// (word-vectors.ts). Each query word is compared with every distinct word of the catalog; a tool
// scores, per query word, the best similarity among its own words (weighted by the field the word
// is in), and its score is the idf-weighted mean over the query's words: 1 when every query word
// is in the tool, near 1 when each has a close synonym there ('folder' for 'directory'). Better
// than comparing mean vectors, which long descriptions dilute (measured: docs/search.md).
// A query costs one dot product per query word and catalog word (a few thousand), on the
// coordinator; a query word's matches are kept per catalog version.

import { LRUCache } from 'lru-cache';
import type { ToolEntry } from './catalog-types.js';
import { processTerm, splitWords } from './text-analysis.js';
import type { WordVectors } from './word-vectors.js';

/** How much a word counts by where it is in the tool: name and first sentence most, schema least. */
const FIELD_WEIGHTS = { name: 1, summary: 0.9, use_cases: 0.9, description: 0.3, schema: 0.3 } as const;
/** Catalog words a query word is matched with at most, and the least similarity that counts. */
const MATCHES_PER_WORD = 24;
const MIN_SIMILARITY = 0.45;
/** Query words' matches remembered (per catalog version). */
const MATCH_CACHE_SIZE = 2_000;

/** Property names, their descriptions and enum values of a JSON Schema, as text (nested objects too). */
export function schemaText(schema: unknown, depth = 0): string {
  if (depth > 4 || schema === null || typeof schema !== 'object') return '';
  const node = schema as Record<string, unknown>;
  const out: string[] = [];
  if (depth > 0 && typeof node['description'] === 'string') out.push(node['description']);
  if (Array.isArray(node['enum'])) for (const v of node['enum']) if (typeof v === 'string') out.push(v);
  const props = node['properties'];
  if (props !== null && typeof props === 'object') for (const [name, sub] of Object.entries(props)) out.push(name, schemaText(sub, depth + 1));
  if (node['items'] !== undefined) out.push(schemaText(node['items'], depth + 1));
  return out.join(' ');
}

/** Each stem of a text once. */
function stems(text: string): Set<string> {
  const out = new Set<string>();
  for (const word of splitWords(text)) {
    const t = processTerm(word);
    if (t) out.add(t);
  }
  return out;
}

/** Each tool's soft match with the query (0..1, tools with none left out), and the best. */
export interface VectorScores {
  readonly scores: Map<string, number>;
  readonly topCosine: number;
}

/** The first sentence of a description (what a tool is; the rest is how to call it). */
function firstSentence(text: string): string {
  return /^[\s\S]*?[.!?](?:\s|$)/.exec(text)?.[0] ?? text;
}

export class WordVectorIndex {
  readonly #vectors: WordVectors;
  /** Each tool's words and how much each counts there. */
  readonly #tools = new Map<string, Map<string, number>>();
  /** Each catalog word with a vector: the tools holding it (with the word's weight there). */
  readonly #postings = new Map<string, Map<string, number>>();
  /** The catalog words' unit vectors, row by row in #words' order; rebuilt after a change. */
  #words: string[] = [];
  #matrix: Float32Array | undefined;
  readonly #matches = new LRUCache<string, readonly [string, number][]>({ max: MATCH_CACHE_SIZE });

  constructor(vectors: WordVectors) {
    this.#vectors = vectors;
  }

  /** Whether the stem is a word the vectors know (English said differently, not a typo). */
  knows(term: string): boolean {
    return this.#vectors.has(term);
  }

  set(id: string, entry: ToolEntry): void {
    this.remove(id);
    const words = new Map<string, number>();
    const fields: [string, number][] = [
      [entry.name, FIELD_WEIGHTS.name],
      [firstSentence(entry.description), FIELD_WEIGHTS.summary],
      [entry.use_cases.join(' '), FIELD_WEIGHTS.use_cases],
      [entry.description, FIELD_WEIGHTS.description],
      [schemaText(entry.input_schema), FIELD_WEIGHTS.schema],
    ];
    for (const [text, weight] of fields) {
      for (const t of stems(text)) if (this.#vectors.has(t) && (words.get(t) ?? 0) < weight) words.set(t, weight);
    }
    this.#tools.set(id, words);
    for (const [t, weight] of words) {
      let posting = this.#postings.get(t);
      if (!posting) {
        posting = new Map();
        this.#postings.set(t, posting);
        this.#changed();
      }
      posting.set(id, weight);
    }
  }

  remove(id: string): void {
    const words = this.#tools.get(id);
    if (!words) return;
    this.#tools.delete(id);
    for (const t of words.keys()) {
      const posting = this.#postings.get(t);
      posting?.delete(id);
      if (posting?.size === 0) {
        this.#postings.delete(t);
        this.#changed();
      }
    }
  }

  #changed(): void {
    this.#matrix = undefined;
    this.#matches.clear();
  }

  /** The catalog words closest to a query word, with their similarity, best first. */
  #similar(term: string): readonly [string, number][] {
    const cached = this.#matches.get(term);
    if (cached) return cached;
    const d = this.#vectors.dimensions;
    if (!this.#matrix) {
      this.#words = [...this.#postings.keys()];
      this.#matrix = new Float32Array(this.#words.length * d);
      this.#words.forEach((w, i) => this.#vectors.unitInto(this.#matrix as Float32Array, i * d, w));
    }
    const q = new Float32Array(d);
    const found: [string, number][] = [];
    if (this.#vectors.unitInto(q, 0, term)) {
      const m = this.#matrix;
      for (let i = 0; i < this.#words.length; i++) {
        let dot = 0;
        for (let c = 0; c < d; c++) dot += (m[i * d + c] as number) * (q[c] as number);
        if (dot >= MIN_SIMILARITY) found.push([this.#words[i] as string, dot]);
      }
      found.sort((a, b) => b[1] - a[1]);
      found.length = Math.min(found.length, MATCHES_PER_WORD);
    }
    this.#matches.set(term, found);
    return found;
  }

  /** Each tool's soft match with the query's terms (in `category` only, when given); undefined when no term has a vector. */
  scores(terms: readonly string[], category: string | undefined): VectorScores | undefined {
    const prefix = category !== undefined ? `${category}\u001f` : '';
    const weighted = terms.map((t) => [t, this.#vectors.idf(t)] as const).filter(([, w]) => w > 0);
    const total = weighted.reduce((n, [, w]) => n + w, 0);
    if (total === 0) return undefined;
    const scores = new Map<string, number>();
    for (const [term, w] of weighted) {
      const best = new Map<string, number>();
      for (const [word, sim] of this.#similar(term)) {
        for (const [id, fieldWeight] of this.#postings.get(word) ?? []) {
          if (prefix !== '' && !id.startsWith(prefix)) continue;
          const s = sim * fieldWeight;
          if (s > (best.get(id) ?? 0)) best.set(id, s);
        }
      }
      for (const [id, s] of best) scores.set(id, (scores.get(id) ?? 0) + (w / total) * s);
    }
    let top = 0;
    for (const s of scores.values()) top = Math.max(top, s);
    return { scores, topCosine: top };
  }
}
