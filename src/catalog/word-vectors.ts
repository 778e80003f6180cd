// The shipped word vectors (data/word-vectors.bin, built by scripts/build-word-vectors.ts from
// WordNet and the catalog): one int8 vector per word stem, the stem's inverse context frequency,
// read once per process. They are the search's semantic signal in every install: the file is
// part of the package, no model is loaded and nothing is downloaded.
//
// File layout: MAGIC, a uint32 (little-endian) header length, the JSON header, the words joined
// by '\n' (header.wordBytes), one uint8 idf×IDF_SCALE per word, then count × dimensions int8.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MAGIC = 'CEMWV1\n';
const IDF_SCALE = 16;

/** Words whose stems the file records: a stemmer that no longer agrees makes the file stale. */
export const STEM_PROBE: readonly string[] = ['files', 'searching', 'issues', 'created', 'queries', 'running', 'elevation', 'disputes', 'stored', 'memories'];

interface Header {
  dimensions: number;
  count: number;
  wordBytes: number;
  stemProbe: string;
}

export interface WordVectorData {
  readonly words: readonly string[];
  readonly dimensions: number;
  /** count × dimensions, row-major, any scale (each row is normalized before quantizing). */
  readonly vectors: Float32Array;
  readonly idf: readonly number[];
  readonly stemProbe: string;
}

/** The file's bytes for `data` (scripts/build-word-vectors.ts). */
export function encodeWordVectors(data: WordVectorData): Buffer {
  const words = Buffer.from(data.words.join('\n'), 'utf8');
  const header: Header = { dimensions: data.dimensions, count: data.words.length, wordBytes: words.length, stemProbe: data.stemProbe };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(json.length);
  const idf = Uint8Array.from(data.idf, (x) => Math.min(255, Math.round(x * IDF_SCALE)));
  const q = new Int8Array(data.words.length * data.dimensions);
  for (let r = 0; r < data.words.length; r++) {
    let max = 0;
    for (let c = 0; c < data.dimensions; c++) max = Math.max(max, Math.abs(data.vectors[r * data.dimensions + c] as number));
    for (let c = 0; c < data.dimensions; c++) q[r * data.dimensions + c] = max === 0 ? 0 : Math.round(((data.vectors[r * data.dimensions + c] as number) / max) * 127);
  }
  return Buffer.concat([Buffer.from(MAGIC, 'utf8'), length, json, words, idf, Buffer.from(q.buffer)]);
}

export class WordVectors {
  readonly dimensions: number;
  readonly stemProbe: string;
  readonly #rows: Map<string, number>;
  readonly #idf: Uint8Array;
  readonly #q: Int8Array;
  /** 1 / |row| per word, so a row scaled by it is a unit vector. */
  readonly #inverseNorm: Float32Array;

  constructor(file: Buffer) {
    if (file.toString('utf8', 0, MAGIC.length) !== MAGIC) throw new Error('not a word-vector file');
    const jsonLength = file.readUInt32LE(MAGIC.length);
    let at = MAGIC.length + 4;
    const header = JSON.parse(file.toString('utf8', at, at + jsonLength)) as Header;
    at += jsonLength;
    const words = file.toString('utf8', at, at + header.wordBytes).split('\n');
    at += header.wordBytes;
    if (words.length !== header.count || file.length !== at + header.count * (1 + header.dimensions)) throw new Error('damaged word-vector file');
    this.dimensions = header.dimensions;
    this.stemProbe = header.stemProbe;
    this.#rows = new Map(words.map((w, i) => [w, i]));
    this.#idf = new Uint8Array(file.buffer, file.byteOffset + at, header.count);
    this.#q = new Int8Array(file.buffer, file.byteOffset + at + header.count, header.count * header.dimensions);
    this.#inverseNorm = new Float32Array(header.count);
    for (let r = 0; r < header.count; r++) {
      let s = 0;
      for (let c = 0; c < this.dimensions; c++) s += (this.#q[r * this.dimensions + c] as number) ** 2;
      this.#inverseNorm[r] = s > 0 ? 1 / Math.sqrt(s) : 0;
    }
  }

  get size(): number {
    return this.#rows.size;
  }

  /** Whether the stem is a word the vectors know (an English word, or one of the catalog's). */
  has(term: string): boolean {
    return this.#rows.has(term);
  }

  /** The stem's inverse context frequency in the training text (0 when unknown). */
  idf(term: string): number {
    const r = this.#rows.get(term);
    return r === undefined ? 0 : (this.#idf[r] as number) / IDF_SCALE;
  }


  /** Writes the stem's unit vector into `target` at `offset`; false when the stem has none. */
  unitInto(target: Float32Array, offset: number, term: string): boolean {
    const r = this.#rows.get(term);
    if (r === undefined) return false;
    const scale = this.#inverseNorm[r] as number;
    for (let c = 0; c < this.dimensions; c++) target[offset + c] = scale * (this.#q[r * this.dimensions + c] as number);
    return true;
  }

  /** The cosine of two stems' vectors (0 when either has none). */
  similarity(a: string, b: string): number {
    const x = this.#rows.get(a);
    const y = this.#rows.get(b);
    if (x === undefined || y === undefined) return 0;
    let dot = 0;
    for (let c = 0; c < this.dimensions; c++) dot += (this.#q[x * this.dimensions + c] as number) * (this.#q[y * this.dimensions + c] as number);
    return dot * (this.#inverseNorm[x] as number) * (this.#inverseNorm[y] as number);
  }
}

const here = path.dirname(fileURLToPath(import.meta.url));
/** src/catalog/ when run from source (vitest), dist/src/catalog/ when built. */
const CANDIDATES = [path.resolve(here, '..', '..', 'data', 'word-vectors.bin'), path.resolve(here, '..', '..', '..', 'data', 'word-vectors.bin')];

let shared: WordVectors | null | undefined;

/** The package's word vectors, read on first use; null when the file is missing or damaged. */
export function sharedWordVectors(): WordVectors | null {
  if (shared !== undefined) return shared;
  shared = null;
  for (const file of CANDIDATES) {
    try {
      shared = new WordVectors(readFileSync(file));
      break;
    } catch {
      // not here (or damaged): try the next place; none means search without vectors
    }
  }
  return shared;
}
