// Messages between the catalog (coordinator) and the embedding worker, defined once for both
// sides. The worker holds the sentence encoder; the coordinator only holds vectors.

/** Dimensions of the Universal Sentence Encoder lite vectors. */
export const EMBEDDING_DIMENSIONS = 512;

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
  | { kind: 'query'; text: string; slot: SharedArrayBuffer };

export type EmbeddingResponse =
  | { kind: 'ready'; load_ms: number }
  | { kind: 'unavailable'; reason: string }
  /** Row-major vectors, one per text, L2-normalised. */
  | { kind: 'vectors'; id: number; vectors: Float32Array }
  | { kind: 'failed'; id: number; reason: string };
