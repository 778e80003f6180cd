// Sentence-encoder vectors kept on disk, so each tool's text is embedded once: a restart, or a
// second daemon on the same data directory, re-embeds nothing that did not change. A vector's key
// is a hash of the model's name and the exact text embedded. Two files are read: the cache in the
// data directory (read and written) and the vectors shipped with a catalog folder
// (`<catalog>/.vectors.bin`, read only; `npm run embed-catalog` regenerates the shipped catalog's).
//
// File format: one JSON header line `{"format":1,"model":…,"dimensions":…,"keys":[…]}`, then the
// vectors as little-endian Float32, one row per key. Writes are atomic (a temporary file renamed
// over the old one); a file that does not parse, or is for another model, is ignored.

import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { EMBEDDING_DIMENSIONS, EMBEDDING_MODEL } from './embedding-protocol.js';

/** The shipped vectors' file name inside a catalog folder (a dot file: the loader skips it). */
export const SHIPPED_VECTORS_FILE = '.vectors.bin';
/** The cache's file name inside its folder. */
export const CACHE_VECTORS_FILE = 'vectors.bin';
/** Most vectors the cache keeps (those used by this process first): 20,000 are about 40 MB. */
export const MAX_CACHED_VECTORS = 20_000;
/** A write follows the last new vector by this much, so a backlog is written once, not per batch. */
const FLUSH_DELAY_MS = 1_000;

interface Header {
  format: 1;
  model: string;
  dimensions: number;
  keys: string[];
}

/** The key of a text's vector under a model. */
export function vectorKey(model: string, text: string): string {
  return createHash('sha256').update(model).update('\u0000').update(text).digest('base64url').slice(0, 24);
}

/** The vectors of a file, by key; empty when the file is missing, unreadable or another model's. */
export function readVectorFile(file: string, model: string, dimensions: number): Map<string, Float32Array> {
  const out = new Map<string, Float32Array>();
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return out;
  }
  const newline = bytes.indexOf(10);
  if (newline < 0) return out;
  let header: Header;
  try {
    header = JSON.parse(bytes.subarray(0, newline).toString('utf8')) as Header;
  } catch {
    return out;
  }
  if (header.format !== 1 || header.model !== model || header.dimensions !== dimensions || !Array.isArray(header.keys)) return out;
  const body = bytes.subarray(newline + 1);
  if (body.length !== header.keys.length * dimensions * 4) return out;
  // Copied into an aligned buffer (the body starts at an arbitrary offset).
  const all = new Float32Array(header.keys.length * dimensions);
  new Uint8Array(all.buffer).set(body);
  header.keys.forEach((key, r) => out.set(key, all.subarray(r * dimensions, (r + 1) * dimensions)));
  return out;
}

/** Writes vectors atomically: a temporary file beside the target, renamed over it. */
export async function writeVectorFile(file: string, model: string, dimensions: number, vectors: ReadonlyMap<string, Float32Array>): Promise<void> {
  const keys = [...vectors.keys()];
  const header = Buffer.from(`${JSON.stringify({ format: 1, model, dimensions, keys } satisfies Header)}\n`, 'utf8');
  const body = new Float32Array(keys.length * dimensions);
  keys.forEach((key, r) => body.set(vectors.get(key) as Float32Array, r * dimensions));
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(tmp, Buffer.concat([header, Buffer.from(body.buffer, body.byteOffset, body.byteLength)]));
  await rename(tmp, file);
}

export interface VectorStoreOptions {
  model: string;
  dimensions: number;
  /** The cache file (read and written); none: vectors are kept for this process only. */
  cacheFile?: string;
  /** Read-only files of shipped vectors. */
  shipped?: readonly string[];
  /** Told when a cache write fails (the vectors stay in memory; search goes on). */
  onError?: (error: unknown) => void;
}

/** Vectors by model and text, from the shipped files and the cache; new ones are written back. */
export class VectorStore {
  readonly model: string;
  readonly #dimensions: number;
  readonly #cacheFile: string | undefined;
  readonly #onError: ((error: unknown) => void) | undefined;
  readonly #known = new Map<string, Float32Array>();
  /** Keys used or added by this process: kept first when the cache is trimmed. */
  readonly #used = new Set<string>();
  #dirty = false;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();

  constructor(options: VectorStoreOptions) {
    this.model = options.model;
    this.#dimensions = options.dimensions;
    this.#cacheFile = options.cacheFile;
    this.#onError = options.onError;
    for (const file of [...(options.shipped ?? []), ...(options.cacheFile !== undefined ? [options.cacheFile] : [])]) {
      if (!existsSync(file)) continue;
      for (const [key, vector] of readVectorFile(file, this.model, this.#dimensions)) this.#known.set(key, vector);
    }
  }

  get size(): number {
    return this.#known.size;
  }

  get(text: string): Float32Array | undefined {
    const key = vectorKey(this.model, text);
    const vector = this.#known.get(key);
    if (vector) this.#used.add(key);
    return vector;
  }

  put(text: string, vector: Float32Array): void {
    const key = vectorKey(this.model, text);
    this.#known.set(key, vector);
    this.#used.add(key);
    if (this.#cacheFile === undefined) return;
    this.#dirty = true;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
    this.#timer.unref();
  }

  /** Writes new vectors to the cache now; resolves once written or failed (a failure goes to onError). */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    const file = this.#cacheFile;
    if (!this.#dirty || file === undefined) return this.#writing;
    this.#dirty = false;
    const kept = new Map<string, Float32Array>();
    for (const key of this.#used) kept.set(key, this.#known.get(key) as Float32Array);
    for (const [key, vector] of this.#known) {
      if (kept.size >= MAX_CACHED_VECTORS) break;
      kept.set(key, vector);
    }
    // Never rejects: a write that fails (disk full, folder removed) must not take the daemon down.
    this.#writing = this.#writing.then(() => writeVectorFile(file, this.model, this.#dimensions, kept)).catch((error: unknown) => {
      this.#onError?.(error);
    });
    return this.#writing;
  }
}

/** A catalog's store: its folder's shipped vectors, and the cache in `cacheDir` when given. */
export function catalogVectorStore(catalogDir: string, cacheDir: string | undefined, onError?: (error: unknown) => void): VectorStore {
  return new VectorStore({
    ...(onError ? { onError } : {}),
    model: EMBEDDING_MODEL,
    dimensions: EMBEDDING_DIMENSIONS,
    shipped: [path.join(catalogDir, SHIPPED_VECTORS_FILE)],
    ...(cacheDir !== undefined ? { cacheFile: path.join(cacheDir, CACHE_VECTORS_FILE) } : {}),
  });
}
