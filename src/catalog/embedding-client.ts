// The coordinator's side of the embedding worker (embedding-worker.ts): one worker per
// process, started on first use. Tool texts are embedded asynchronously, one small batch at a
// time; a query is embedded synchronously (search is synchronous), the coordinator blocking on a
// shared slot for at most QUERY_TIMEOUT_MS, so a busy or broken worker costs a bounded wait and
// search falls back to lexical ranking.

import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import { EMBEDDING_DIMENSIONS, SLOT_BYTES, SLOT_EMPTY, SLOT_FILLED } from './embedding-protocol.js';
import type { EmbeddingRequest, EmbeddingResponse } from './embedding-protocol.js';

/**
 * Longest the coordinator blocks for a query's vector before it ranks lexically: 0, it never
 * does. Callers embed the query first, off the event loop (Catalog.prepareSearch); the evaluation
 * and tests that rank without preparing raise it.
 */
export const QUERY_TIMEOUT_MS = 0;

export type EmbedderState = 'starting' | 'ready' | 'unavailable';

/** Query vectors remembered (2 KB each): a repeated query, in any catalog generation, costs no wait. */
const QUERY_CACHE_SIZE = 1_000;

/**
 * CODE_EXEC_SEMANTIC_SEARCH=false (the test suite sets it): never start the model. The daemon reads
 * the variable through its configuration (semanticSearch); this covers catalogs made directly.
 */
function disabledByEnvironment(): boolean {
  return ['false', '0', 'no', 'off'].includes((process.env['CODE_EXEC_SEMANTIC_SEARCH'] ?? '').trim().toLowerCase());
}

function workerUrl(): URL | undefined {
  // From source (vitest) the worker is taken from the build, as the sandbox workers are.
  const fromSource = import.meta.url.endsWith('.ts');
  const url = fromSource ? new URL('../../dist/src/catalog/embedding-worker.js', import.meta.url) : new URL('./embedding-worker.js', import.meta.url);
  return existsSync(url) ? url : undefined;
}

interface Pending {
  resolve(answer: Float32Array | Scan): void;
  reject(error: Error): void;
}

/** A query's vector and its best tools of a table, best first, with their cosines. */
export interface Scan {
  readonly vector: Float32Array;
  readonly ids: readonly string[];
  readonly cosines: readonly number[];
}

export class Embedder {
  #worker: Worker | undefined;
  #state: EmbedderState = 'starting';
  #reason = '';
  #loadMs: number | undefined;
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();
  readonly #listeners = new Set<() => void>();
  /** Longest a query blocks for its vector (the evaluation raises it to measure ranking, not load). */
  queryTimeoutMs = QUERY_TIMEOUT_MS;
  readonly #queries = new LRUCache<string, Float32Array>({ max: QUERY_CACHE_SIZE });
  /** Queries ranked lexically because their vector did not come in time or failed. */
  fallbacks = 0;
  /** Tool texts sent to the model to embed (a restart with every vector cached sends none). */
  embeddedTexts = 0;

  /** `disabled`: never start the model (lexical search); default: CODE_EXEC_SEMANTIC_SEARCH=false. */
  constructor(options: { disabled?: boolean } = {}) {
    const off = options.disabled ?? disabledByEnvironment();
    const url = off ? undefined : workerUrl();
    if (!url) {
      this.#fail(off ? 'semantic search is off' : 'embedding worker not built');
      return;
    }
    const worker = new Worker(url);
    // Referenced while it loads or has batches in flight (someone awaits them), unreferenced when
    // idle: an idle model must not keep the daemon, a bench or a test run alive.
    worker.on('message', (m: EmbeddingResponse) => this.#onMessage(m));
    worker.on('error', (error) => this.#fail(error.message));
    worker.on('exit', () => this.#fail('embedding worker exited'));
    this.#worker = worker;
  }

  get state(): EmbedderState {
    return this.#state;
  }

  /** Why the model is unavailable ('' while it is not). */
  get reason(): string {
    return this.#reason;
  }

  /** Milliseconds the worker took to load the model and compile it, once ready. */
  get loadMs(): number | undefined {
    return this.#loadMs;
  }

  /** Resolves once the model is ready or known to be unavailable. */
  async settled(): Promise<EmbedderState> {
    if (this.#state === 'starting') await new Promise<void>((resolve) => { const off = this.onChange(() => { off(); resolve(); }); });
    return this.#state;
  }

  /** Called whenever the state changes. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Unit vectors of the texts, row-major; rejects when the model is unavailable. */
  embed(texts: readonly string[]): Promise<Float32Array> {
    this.embeddedTexts += texts.length;
    return this.#ask((id) => ({ kind: 'texts', id, texts: [...texts] })) as Promise<Float32Array>;
  }

  /**
   * Embeds a query in the worker and scans a table there: the query's vector (remembered, so a
   * following embedQuerySync of the same text does not wait) and its `keep` best tools.
   */
  async scan(table: number, text: string, keep: number): Promise<Scan> {
    const answer = (await this.#ask((id) => ({ kind: 'scan', id, table, text, keep }))) as Scan;
    this.#queries.set(text, answer.vector);
    return answer;
  }

  /** Sets tools' vectors in the worker's copy of a table (row-major, one per id). */
  store(table: number, ids: readonly string[], vectors: Float32Array): void {
    this.#worker?.postMessage({ kind: 'store', table, ids: [...ids], vectors } satisfies EmbeddingRequest);
  }

  /** Removes tools from the worker's copy of a table. */
  drop(table: number, ids: readonly string[]): void {
    this.#worker?.postMessage({ kind: 'drop', table, ids: [...ids] } satisfies EmbeddingRequest);
  }

  #ask(request: (id: number) => EmbeddingRequest): Promise<Float32Array | Scan> {
    const worker = this.#worker;
    if (!worker || this.#state === 'unavailable') return Promise.reject(new Error(this.#reason));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage(request(id));
    });
  }

  /**
   * Embeds a query without blocking and remembers its vector, so a following embedQuerySync of
   * the same text does not wait. Resolves once done (or failed, or the model is not ready).
   */
  async prepareQuery(text: string): Promise<void> {
    if (this.#state !== 'ready' || this.#queries.has(text)) return;
    try {
      this.#queries.set(text, (await this.#ask((id) => ({ kind: 'texts', id, texts: [text] }))) as Float32Array);
    } catch {
      // the synchronous path will try again, and fall back to lexical
    }
  }

  /**
   * The unit vector of a query, computed while the caller blocks, or undefined (model not ready,
   * worker busy past QUERY_TIMEOUT_MS, or failed). Only call it when no batch is in flight.
   */
  embedQuerySync(text: string): Float32Array | undefined {
    if (!this.#worker || this.#state !== 'ready') return undefined;
    const known = this.#queries.get(text);
    if (known) return known;
    // A slot per query: a late answer to an abandoned query lands in a slot nobody reads.
    const slot = new SharedArrayBuffer(SLOT_BYTES);
    const state = new Int32Array(slot, 0, 1);
    this.#worker.postMessage({ kind: 'query', text, slot } satisfies EmbeddingRequest);
    const outcome = Atomics.wait(state, 0, SLOT_EMPTY, this.queryTimeoutMs);
    if (outcome === 'timed-out' || Atomics.load(state, 0) !== SLOT_FILLED) {
      this.fallbacks++;
      return undefined;
    }
    const vector = new Float32Array(slot, 4, EMBEDDING_DIMENSIONS);
    this.#queries.set(text, vector);
    return vector;
  }

  close(): void {
    void this.#worker?.terminate();
    this.#fail('closed');
  }

  #onMessage(m: EmbeddingResponse): void {
    if (m.kind === 'ready') {
      this.#loadMs = m.load_ms;
      this.#worker?.unref();
      this.#setState('ready');
    } else if (m.kind === 'unavailable') this.#fail(m.reason);
    else {
      const pending = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      if (this.#pending.size === 0) this.#worker?.unref();
      if (m.kind === 'vectors') pending?.resolve(m.vectors);
      else if (m.kind === 'scanned') pending?.resolve({ vector: m.vector, ids: m.ids, cosines: m.cosines });
      else pending?.reject(new Error(m.reason));
    }
  }

  #fail(reason: string): void {
    if (this.#state === 'unavailable') return;
    this.#reason = reason;
    this.#worker = undefined;
    for (const p of this.#pending.values()) p.reject(new Error(reason));
    this.#pending.clear();
    this.#setState('unavailable');
  }

  #setState(state: EmbedderState): void {
    this.#state = state;
    for (const l of this.#listeners) l();
  }
}

let shared: Embedder | undefined;
let lexical: Embedder | undefined;

/** The embedder of a catalog configured without semantic search (semanticSearch: false): never started. */
export function lexicalEmbedder(): Embedder {
  lexical ??= new Embedder({ disabled: true });
  return lexical;
}

/** The process's embedder, started on first call (`options` apply to that first call only). */
export function sharedEmbedder(options?: { disabled?: boolean }): Embedder {
  shared ??= new Embedder(options);
  return shared;
}
