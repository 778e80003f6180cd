// Semantic re-ranking for catalog search: each tool's name and first sentence embedded by the
// sentence encoder (embedding-client.ts), the query too, and the cosine blended into the lexical
// score. Lexical ranking comes first: a semantic score only adds to it, and only while every tool
// has its vector (so results do not depend on how far a background backlog has got). Until the
// model is ready, when it is missing, or when a query's vector does not come in time, search is
// lexical exactly as before, and says so (ToolSearchIndex.lastRanking).
//
// Vectors come from the store (vector-store.ts: shipped with the catalog, or cached on disk by an
// earlier run) when it has them, and are embedded in the worker otherwise, then stored. The model
// starts as soon as the index has tools, so a daemon whose vectors are cached ranks its first
// query semantically. A prepared search (prepare) has its cosine scan done in the worker, which
// keeps a copy of the vectors: the coordinator only blends the best few.

import { LRUCache } from 'lru-cache';
import type { Embedder } from './embedding-client.js';
import type { VectorStore } from './vector-store.js';
import { EMBEDDING_DIMENSIONS } from './embedding-protocol.js';

/** Tools the semantic side adds at most beyond the lexical hits. */
export const SEMANTIC_CANDIDATES = 20;
/**
 * Largest catalog ranked semantically; a larger one is ranked lexically. The scan runs in the
 * worker, so the bound is the worker's memory (2 KB a tool) and the time to embed a new catalog
 * (20-60 ms a tool, once: vectors are cached on disk).
 */
export const MAX_SEMANTIC_TOOLS = 20_000;
/** Prepared scans remembered (a repeated query in the same ranking version costs nothing). */
const SCAN_CACHE_SIZE = 500;
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

/** Semantic scores of a query and how close its best tool is (the raw cosine, for "no good match"). */
export interface SemanticScores {
  readonly scores: Map<string, number>;
  readonly topCosine: number;
}

/** Promises of backlogs in progress, process-wide, for embeddingsSettled(). */
const settling = new Set<Promise<void>>();

/** Resolves when no index has a backlog being embedded (benchmarks and tests wait on it). */
export async function embeddingsSettled(): Promise<void> {
  while (settling.size > 0) await Promise.all([...settling]);
}

/** Each index's table number in the worker (one worker serves every catalog of the process). */
let nextTable = 1;

/** The best `keep` of (id, cosine) pairs over slots the filter accepts, best first. */
function bestOf(slots: Iterable<[string, Slot]>, q: Float32Array, accept: (id: string) => boolean, keep: number): { id: string; cos: number }[] {
  const best: { id: string; cos: number }[] = [];
  for (const [id, slot] of slots) {
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
  return best;
}

export class SemanticIndex {
  readonly #slots = new Map<string, Slot>();
  readonly #embedder: () => Embedder;
  readonly #store: VectorStore | undefined;
  readonly #table = nextTable++;
  #started: Embedder | undefined;
  #startScheduled = false;
  #missing = 0;
  #pumping = false;
  /** Vectors and removals the worker's copy of the table has not been sent yet. */
  readonly #toStore = new Map<string, Float32Array>();
  readonly #toDrop = new Set<string>();
  /** Prepared scans by version and query: the best candidates over the whole catalog. */
  readonly #scans = new LRUCache<string, { id: string; cos: number }[]>({ max: SCAN_CACHE_SIZE });
  /** Bumped whenever semantic ranking starts or stops applying (search result caches key on it). */
  #version = 0;

  /** Set while the model waits for startModel() (CatalogOptions.deferModel). */
  #deferred: boolean;

  constructor(embedder: () => Embedder, store?: VectorStore, deferModel = false) {
    this.#embedder = embedder;
    this.#store = store;
    this.#deferred = deferModel;
  }

  /** Starts the model now if the catalog has tools to rank (a deferred start, or a no-op). */
  startModel(): void {
    this.#deferred = false;
    if (!this.#started && this.#slots.size > 0 && this.#slots.size <= MAX_SEMANTIC_TOOLS) this.#start();
  }

  get version(): number {
    return this.#version;
  }

  /** Whether every tool has its vector and the model can embed queries. */
  get ready(): boolean {
    return this.#started?.state === 'ready' && this.#missing === 0 && !this.#pumping && this.#slots.size <= MAX_SEMANTIC_TOOLS;
  }

  /** Whether the model is loading while every tool already has its vector (a search would wait for it). */
  get loading(): boolean {
    return this.#started?.state === 'starting' && this.#missing === 0;
  }

  /** Why ranking is lexical now ('' when semantic). */
  get why(): string {
    if (this.ready) return '';
    if (this.#slots.size > MAX_SEMANTIC_TOOLS) return `more than ${MAX_SEMANTIC_TOOLS} tools`;
    const embedder = this.#started;
    if (!embedder) return 'the sentence encoder has not started';
    if (embedder.state === 'unavailable') return `the sentence encoder is unavailable: ${embedder.reason}`;
    if (embedder.state === 'starting') return 'the sentence encoder is loading';
    return `${this.#missing} tools' vectors are being made`;
  }

  /** Tools still waiting for their vector. */
  get missing(): number {
    return this.#missing;
  }

  set(id: string, text: string): void {
    const old = this.#slots.get(id);
    if (old?.text === text) return;
    if (old && !old.vector) this.#missing--;
    const known = this.#store?.get(text);
    this.#slots.set(id, known ? { text, vector: known } : { text });
    this.#toDrop.delete(id);
    if (known) this.#toStore.set(id, known);
    else {
      this.#toStore.delete(id);
      this.#missing++;
    }
    this.#version++;
    if (this.#started) this.#changed();
    else this.#startSoon();
  }

  /**
   * Starts the model once the current burst of changes is in (a catalog loads all its tools in
   * one go), so a daemon ranks its first query semantically; never for a catalog past the bound.
   */
  #startSoon(): void {
    if (this.#startScheduled || this.#deferred) return;
    this.#startScheduled = true;
    setImmediate(() => {
      this.#startScheduled = false;
      if (!this.#started && this.#slots.size > 0 && this.#slots.size <= MAX_SEMANTIC_TOOLS) this.#start();
    }).unref();
  }

  remove(id: string): void {
    const old = this.#slots.get(id);
    if (!old) return;
    this.#slots.delete(id);
    this.#toStore.delete(id);
    this.#toDrop.add(id);
    if (!old.vector) this.#missing--;
    this.#version++;
  }

  /**
   * The query's semantic scores, 0..1 relative to the catalog's spread, or undefined while
   * lexical. A prepared query (prepare) uses the worker's scan; otherwise the query's vector is
   * taken from the encoder (blocking at most its queryTimeoutMs) and scanned here.
   */
  scores(query: string, category: string | undefined): SemanticScores | undefined {
    if (this.#slots.size > MAX_SEMANTIC_TOOLS) return undefined; // the model is not even started
    if (!this.#started) this.#start();
    if (!this.ready || !this.#started) return undefined;
    const keep = SEMANTIC_CANDIDATES + 1;
    const prefix = category !== undefined ? `${category}\u001f` : '';
    let best = category === undefined ? this.#scans.get(`${this.#version}\u0000${query}`) : undefined;
    if (!best) {
      const q = this.#started.embedQuerySync(query);
      if (!q) return undefined;
      best = bestOf(this.#slots, q, (id) => id.startsWith(prefix), keep);
    }
    // Scaled between the best cosine and the next after the candidates: the encoder's raw
    // cosines sit in a narrow band that differs per query, its ranks do not.
    const top = best[0]?.cos ?? 0;
    const floor = best[best.length - 1]?.cos ?? 0;
    const scores = new Map<string, number>();
    if (top > floor) for (const { id, cos } of best.slice(0, SEMANTIC_CANDIDATES)) scores.set(id, (cos - floor) / (top - floor));
    return { scores, topCosine: top };
  }

  /**
   * Embeds the query and scans the catalog in the worker, without blocking the event loop, so
   * the search that follows only blends. Resolves at once while the index is not ready.
   */
  async prepare(query: string): Promise<void> {
    if (this.#slots.size === 0 || this.#slots.size > MAX_SEMANTIC_TOOLS) return;
    if (!this.#started) this.#start();
    const embedder = this.#started;
    // A model still loading is waited for (the caller bounds the wait): with every vector at
    // hand, the first query of a fresh daemon is then ranked semantically.
    if (embedder?.state === 'starting' && this.#missing === 0) await embedder.settled();
    if (!embedder || !this.ready) return;
    const version = this.#version;
    const key = `${version}\u0000${query}`;
    if (this.#scans.has(key)) return;
    this.#sync();
    try {
      const { ids, cosines } = await embedder.scan(this.#table, query, SEMANTIC_CANDIDATES + 1);
      // A scan that began before a change would rank with stale vectors: it is not kept.
      if (this.#version === version) this.#scans.set(key, ids.map((id, i) => ({ id, cos: cosines[i] as number })));
    } catch {
      // the search falls back to the query vector or to lexical ranking
    }
  }

  #start(): void {
    const embedder = this.#embedder();
    this.#started = embedder;
    embedder.onChange(() => {
      this.#version++;
      // A new worker (or the first) holds none of this table yet.
      if (embedder.state === 'ready') for (const [id, slot] of this.#slots) if (slot.vector) this.#toStore.set(id, slot.vector);
      this.#changed();
    });
    this.#changed();
  }

  /** Sends the worker the vectors and removals it has not seen. */
  #sync(): void {
    const embedder = this.#started;
    if (!embedder || embedder.state !== 'ready') return;
    if (this.#toDrop.size > 0) {
      embedder.drop(this.#table, [...this.#toDrop]);
      this.#toDrop.clear();
    }
    if (this.#toStore.size > 0) {
      const ids = [...this.#toStore.keys()];
      const vectors = new Float32Array(ids.length * EMBEDDING_DIMENSIONS);
      ids.forEach((id, r) => vectors.set(this.#toStore.get(id) as Float32Array, r * EMBEDDING_DIMENSIONS));
      embedder.store(this.#table, ids, vectors);
      this.#toStore.clear();
    }
  }

  /** Embeds the backlog, one batch at a time, once the model is ready. */
  #changed(): void {
    const embedder = this.#started;
    if (!embedder || embedder.state !== 'ready') return;
    this.#sync();
    if (this.#pumping || this.#missing === 0 || this.#slots.size > MAX_SEMANTIC_TOOLS) return;
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
            slot.vector = vectors.slice(i * EMBEDDING_DIMENSIONS, (i + 1) * EMBEDDING_DIMENSIONS);
            this.#store?.put(slot.text, slot.vector);
            this.#toStore.set(id, slot.vector);
            this.#missing--;
          });
          this.#sync();
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
