// Semantic re-ranking for catalog search: each tool's name and first sentence embedded by the
// sentence encoder (embedding-client.ts), the query too, and the cosine blended into the lexical
// score. Lexical ranking comes first: a semantic score only adds to it, and only while every tool
// has its vector (so results do not depend on how far a background backlog has got). Until the
// model is ready, when it is missing, or when a query's vector does not come in time, search is
// lexical exactly as before.

import type { Embedder } from './embedding-client.js';
import { EMBEDDING_DIMENSIONS } from '../../workers/embedding-protocol.js';

/** Weight of the semantic score (0..1) against the lexical one (0..1, coverage-weighted). */
export const SEMANTIC_WEIGHT = 1;
/**
 * A query with a likely typo (a word no tool contains and WordNet does not know) is one the
 * encoder misreads: its semantic weight is scaled down by this factor.
 */
export const TYPO_SEMANTIC_SHARE = 0.05;
/** Tools the semantic side adds at most beyond the lexical hits. */
export const SEMANTIC_CANDIDATES = 20;
/**
 * Largest catalog ranked semantically; a larger one is ranked lexically. Past it, the cosines
 * alone (512 multiply-adds a tool, on the coordinator) would cost more than a few milliseconds a
 * query, and embedding every tool would keep the worker busy for minutes after start.
 */
export const MAX_SEMANTIC_TOOLS = 3_000;
/** Texts sent to the worker per message: small, so the backlog yields to queries often. */
const BATCH_TEXTS = 4;
/** Characters of a description embedded: its first sentence, capped (cost grows with length). */
const MAX_TEXT_CHARS = 200;

/** The text a tool is embedded from: its name in words and the first sentence of its description. */
export function embeddingText(name: string, description: string): string {
  const first = /^[\s\S]*?[.!?](?:\s|$)/.exec(description)?.[0] ?? description;
  return `${name.replace(/[_\-.]+/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2')}: ${first.trim()}`.slice(0, MAX_TEXT_CHARS);
}

interface Slot {
  text: string;
  vector?: Float32Array;
}

/** Promises of backlogs in progress, process-wide, for embeddingsSettled(). */
const settling = new Set<Promise<void>>();

/** Resolves when no index has a backlog being embedded (benchmarks and tests wait on it). */
export async function embeddingsSettled(): Promise<void> {
  while (settling.size > 0) await Promise.all([...settling]);
}

export class SemanticIndex {
  readonly #slots = new Map<string, Slot>();
  readonly #embedder: () => Embedder;
  #started: Embedder | undefined;
  #missing = 0;
  #pumping = false;
  /** Bumped whenever semantic ranking starts or stops applying (search result caches key on it). */
  #version = 0;

  constructor(embedder: () => Embedder) {
    this.#embedder = embedder;
  }

  get version(): number {
    return this.#version;
  }

  /** Whether every tool has its vector and the model can embed queries. */
  get ready(): boolean {
    return this.#started?.state === 'ready' && this.#missing === 0 && !this.#pumping && this.#slots.size <= MAX_SEMANTIC_TOOLS;
  }

  set(id: string, text: string): void {
    const old = this.#slots.get(id);
    if (old?.text === text) return;
    if (old && !old.vector) this.#missing--;
    this.#slots.set(id, { text });
    this.#missing++;
    this.#changed();
  }

  remove(id: string): void {
    const old = this.#slots.get(id);
    if (!old) return;
    this.#slots.delete(id);
    if (!old.vector) this.#missing--;
  }

  /**
   * Starts the model on first use (a daemon nobody searches never loads it) and returns the
   * query's semantic scores, 0..1 relative to the catalog's spread, or undefined while lexical.
   */
  scores(query: string, accept: (id: string) => boolean): Map<string, number> | undefined {
    if (this.#slots.size > MAX_SEMANTIC_TOOLS) return undefined; // the model is not even started
    if (!this.#started) this.#start();
    if (!this.ready || !this.#started) return undefined;
    const q = this.#started.embedQuerySync(query);
    if (!q) return undefined;
    // The best SEMANTIC_CANDIDATES + 1 cosines, kept sorted by insertion: no sort of the catalog.
    const keep = SEMANTIC_CANDIDATES + 1;
    const best: { id: string; cos: number }[] = [];
    for (const [id, slot] of this.#slots) {
      const v = slot.vector;
      if (!v || !accept(id)) continue;
      let cos = 0;
      for (let i = 0; i < EMBEDDING_DIMENSIONS; i++) cos += (v[i] as number) * (q[i] as number);
      if (best.length === keep && cos <= (best[keep - 1] as { cos: number }).cos) continue;
      let at = best.length;
      while (at > 0 && (best[at - 1] as { cos: number }).cos < cos) at--;
      best.splice(at, 0, { id, cos });
      if (best.length > keep) best.pop();
    }
    // Scaled between the best cosine and the next after the candidates: the encoder's raw
    // cosines sit in a narrow band that differs per query, its ranks do not.
    const top = best[0]?.cos ?? 0;
    const floor = best[best.length - 1]?.cos ?? 0;
    const out = new Map<string, number>();
    if (top <= floor) return out;
    for (const { id, cos } of best.slice(0, SEMANTIC_CANDIDATES)) out.set(id, (cos - floor) / (top - floor));
    return out;
  }

  /** Embeds the query ahead of a search without blocking (see ToolSearchIndex.prepare). */
  async prepare(query: string): Promise<void> {
    if (this.#slots.size > MAX_SEMANTIC_TOOLS) return;
    if (!this.#started) this.#start();
    if (this.ready && this.#started) await this.#started.prepareQuery(query);
  }

  #start(): void {
    const embedder = this.#embedder();
    this.#started = embedder;
    embedder.onChange(() => {
      this.#version++;
      this.#changed();
    });
    this.#changed();
  }

  /** Embeds the backlog, one batch at a time, once the model is ready. */
  #changed(): void {
    const embedder = this.#started;
    if (!embedder || this.#pumping || this.#missing === 0 || embedder.state !== 'ready' || this.#slots.size > MAX_SEMANTIC_TOOLS) return;
    this.#pumping = true;
    const run = (async () => {
      try {
        for (;;) {
          const batch = [...this.#slots].filter(([, s]) => !s.vector).slice(0, BATCH_TEXTS);
          if (batch.length === 0) break;
          const vectors = await embedder.embed(batch.map(([, s]) => s.text));
          batch.forEach(([id, slot], i) => {
            // Skip a slot replaced or removed while its batch was out.
            if (this.#slots.get(id) !== slot || slot.vector) return;
            slot.vector = vectors.subarray(i * EMBEDDING_DIMENSIONS, (i + 1) * EMBEDDING_DIMENSIONS);
            this.#missing--;
          });
        }
      } catch {
        // The model went away: its state change has bumped the version; search is lexical.
      } finally {
        this.#pumping = false;
        this.#version++;
      }
    })();
    settling.add(run);
    void run.finally(() => settling.delete(run));
  }
}
