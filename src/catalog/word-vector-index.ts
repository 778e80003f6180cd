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
/** Tools a query's word-vector scores are kept for (the best; see scores()). */
const TOP_TOOLS = 50;
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
  /** Each tool's slot (a dense number, so a query adds up scores in typed arrays, not maps). */
  readonly #slots = new Map<string, number>();
  /** Each slot's tool id (undefined when free) and the free slots. */
  readonly #ids: (string | undefined)[] = [];
  readonly #free: number[] = [];
  /** Each tool's words and how much each counts there. */
  readonly #tools = new Map<string, Map<string, number>>();
  /** Each catalog word with a vector: the slots of the tools holding it (with the word's weight there). */
  readonly #postings = new Map<string, Map<number, number>>();
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

  /** What the index's derived data depends on besides the tools: the vector file's identity. */
  get vectorsId(): string {
    return `${this.#vectors.size}x${this.#vectors.dimensions}:${this.#vectors.stemProbe}`;
  }

  /** A tool's words with a vector and their weights (for a snapshot: search-snapshot.ts). */
  wordsOf(id: string): [string, number][] {
    return [...(this.#tools.get(id) ?? [])];
  }

  set(id: string, entry: ToolEntry): void {
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
    this.setWords(id, words);
  }

  /** Sets a tool's words as `set` derives them (or as a snapshot kept them). */
  setWords(id: string, words: ReadonlyMap<string, number>): void {
    this.remove(id);
    const slot = this.#free.pop() ?? this.#ids.length;
    this.#ids[slot] = id;
    this.#slots.set(id, slot);
    this.#tools.set(id, new Map(words));
    for (const [t, weight] of words) {
      let posting = this.#postings.get(t);
      if (!posting) {
        posting = new Map();
        this.#postings.set(t, posting);
        this.#changed();
      }
      posting.set(slot, weight);
    }
  }

  remove(id: string): void {
    const words = this.#tools.get(id);
    const slot = this.#slots.get(id);
    if (!words || slot === undefined) return;
    this.#tools.delete(id);
    this.#slots.delete(id);
    this.#ids[slot] = undefined;
    this.#free.push(slot);
    for (const t of words.keys()) {
      const posting = this.#postings.get(t);
      posting?.delete(slot);
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

  /**
   * The best TOP_TOOLS tools' soft match with the query's terms (in `category` only, when given);
   * undefined when no term has a vector. Only the best are blended: the rest could not reach the
   * top of a ranking, and blending every tool a common word touches cost most of a search.
   */
  scores(terms: readonly string[], category: string | undefined): VectorScores | undefined {
    const prefix = category !== undefined ? `${category}\u001f` : '';
    const weighted = terms.map((t) => [t, this.#vectors.idf(t)] as const).filter(([, w]) => w > 0);
    const total = weighted.reduce((n, [, w]) => n + w, 0);
    if (total === 0) return undefined;
    const n = this.#ids.length;
    const sum = new Float32Array(n);
    const best = new Float32Array(n);
    const touched: number[] = [];
    for (const [term, w] of weighted) {
      touched.length = 0;
      for (const [word, sim] of this.#similar(term)) {
        for (const [slot, fieldWeight] of this.#postings.get(word) ?? []) {
          const s = sim * fieldWeight;
          if ((best[slot] as number) === 0) touched.push(slot);
          if (s > (best[slot] as number)) best[slot] = s;
        }
      }
      for (const slot of touched) {
        sum[slot] = (sum[slot] as number) + (w / total) * (best[slot] as number);
        best[slot] = 0;
      }
    }
    const ranked: number[] = [];
    for (let slot = 0; slot < n; slot++) {
      if ((sum[slot] as number) <= 0) continue;
      if (prefix !== '' && !(this.#ids[slot] as string).startsWith(prefix)) continue;
      ranked.push(slot);
    }
    ranked.sort((a, b) => (sum[b] as number) - (sum[a] as number));
    const scores = new Map<string, number>();
    for (const slot of ranked.slice(0, TOP_TOOLS)) scores.set(this.#ids[slot] as string, sum[slot] as number);
    return { scores, topCosine: ranked[0] === undefined ? 0 : (sum[ranked[0]] as number) };
  }
}
