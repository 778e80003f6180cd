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

/** Stems looked up at most between clears of the lookup memo (a catalog's vocabulary is a few thousand). */
const MEMO_MAX = 50_000;

/**
 * The vectors, read in place from the file's bytes: nothing is decoded up front (no table of
 * 50,000 strings, no norms), so loading costs one file read. A stem is found by binary search
 * over the sorted words' bytes, remembered, and its norm computed when first used.
 */
export class WordVectors {
  readonly dimensions: number;
  readonly stemProbe: string;
  readonly size: number;
  readonly #file: Buffer;
  /** Byte offset of each word in #file, and one past the last word's end. */
  readonly #starts: Uint32Array;
  readonly #idf: Uint8Array;
  readonly #q: Int8Array;
  /** 1 / |row| per word (NaN until first used), so a row scaled by it is a unit vector. */
  readonly #inverseNorm: Float32Array;
  readonly #memo = new Map<string, number>();

  constructor(file: Buffer) {
    if (file.toString('utf8', 0, MAGIC.length) !== MAGIC) throw new Error('not a word-vector file');
    const jsonLength = file.readUInt32LE(MAGIC.length);
    let at = MAGIC.length + 4;
    const header = JSON.parse(file.toString('utf8', at, at + jsonLength)) as Header;
    at += jsonLength;
    const starts = new Uint32Array(header.count + 1);
    let n = 0;
    starts[n++] = at;
    const end = at + header.wordBytes;
    for (let i = file.indexOf(10, at); i !== -1 && i < end && n <= header.count; i = file.indexOf(10, i + 1)) starts[n++] = i + 1;
    at = end;
    if (n !== header.count || file.length !== at + header.count * (1 + header.dimensions)) throw new Error('damaged word-vector file');
    // One past the last word, as if a separator followed it.
    starts[n] = end + 1;
    this.#file = file;
    this.#starts = starts;
    this.size = header.count;
    this.dimensions = header.dimensions;
    this.stemProbe = header.stemProbe;
    this.#idf = new Uint8Array(file.buffer, file.byteOffset + at, header.count);
    this.#q = new Int8Array(file.buffer, file.byteOffset + at + header.count, header.count * header.dimensions);
    this.#inverseNorm = new Float32Array(header.count).fill(Number.NaN);
  }

  /** The stem's row, by binary search over the sorted words (undefined when absent). */
  #row(term: string): number | undefined {
    const known = this.#memo.get(term);
    if (known !== undefined) return known < 0 ? undefined : known;
    const key = Buffer.from(term, 'utf8');
    let lo = 0;
    let hi = this.size - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = this.#file.compare(key, 0, key.length, this.#starts[mid] as number, (this.#starts[mid + 1] as number) - 1);
      if (c === 0) {
        found = mid;
        break;
      }
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    if (this.#memo.size >= MEMO_MAX) this.#memo.clear();
    this.#memo.set(term, found);
    return found < 0 ? undefined : found;
  }

  #scale(r: number): number {
    let inv = this.#inverseNorm[r] as number;
    if (Number.isNaN(inv)) {
      let s = 0;
      for (let c = 0; c < this.dimensions; c++) s += (this.#q[r * this.dimensions + c] as number) ** 2;
      inv = s > 0 ? 1 / Math.sqrt(s) : 0;
      this.#inverseNorm[r] = inv;
    }
    return inv;
  }

  /** Whether the stem is a word the vectors know (an English word, or one of the catalog's). */
  has(term: string): boolean {
    return this.#row(term) !== undefined;
  }

  /** The stem's inverse context frequency in the training text (0 when unknown). */
  idf(term: string): number {
    const r = this.#row(term);
    return r === undefined ? 0 : (this.#idf[r] as number) / IDF_SCALE;
  }

  /** Writes the stem's unit vector into `target` at `offset`; false when the stem has none. */
  unitInto(target: Float32Array, offset: number, term: string): boolean {
    const r = this.#row(term);
    if (r === undefined) return false;
    const scale = this.#scale(r);
    for (let c = 0; c < this.dimensions; c++) target[offset + c] = scale * (this.#q[r * this.dimensions + c] as number);
    return true;
  }

  /** The cosine of two stems' vectors (0 when either has none). */
  similarity(a: string, b: string): number {
    const x = this.#row(a);
    const y = this.#row(b);
    if (x === undefined || y === undefined) return 0;
    let dot = 0;
    for (let c = 0; c < this.dimensions; c++) dot += (this.#q[x * this.dimensions + c] as number) * (this.#q[y * this.dimensions + c] as number);
    return dot * this.#scale(x) * this.#scale(y);
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
