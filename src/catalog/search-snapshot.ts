// A restart with an unchanged catalog computes nothing again: what the search index derives from
// the catalog's tools (MiniSearch's inverted index, each tool's terms, each tool's words with a
// word vector) is written to disk under a hash of those tools and of what analyses them, and read
// back on the next start instead of being rebuilt (at 500 tools that was seconds of CPU on a busy
// machine). A snapshot of other tools, other analysis code or a damaged file is not used.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { AsPlainObject } from 'minisearch';
import type { ToolEntry } from './catalog-types.js';
import { processTerm } from './text-analysis.js';
import { STEM_PROBE } from './word-vectors.js';

/** Bumped when the snapshot's own layout changes. */
export const SNAPSHOT_FORMAT = 1;

/**
 * The modules whose code decides what the index derives from a tool (fields, tokenizing, field
 * weights, word lists): their built bytes are part of the key, so an upgrade that changes any of
 * them never reads a snapshot made by the old code, with no version number to remember to bump.
 */
const ANALYSING_MODULES = ['search-index', 'text-analysis', 'word-vector-index', 'search-snapshot'];
let codeId: string | undefined;

/** A hash of the analysing modules' built files, read once per process. */
function analysingCode(): string {
  if (codeId === undefined) {
    const hash = createHash('sha256');
    // .js when built, .ts when the tests run the sources
    const ext = path.extname(new URL(import.meta.url).pathname);
    for (const name of ANALYSING_MODULES) hash.update(readFileSync(new URL(`./${name}${ext}`, import.meta.url)));
    codeId = hash.digest('hex');
  }
  return codeId;
}
/** The snapshot's file name inside the cache folder (beside the sentence encoder's vectors). */
export const SNAPSHOT_FILE = 'search-index.json';

export interface IndexSnapshot {
  readonly format: number;
  readonly key: string;
  /** MiniSearch's own serialized index (MiniSearch.loadJS). */
  readonly mini: AsPlainObject;
  /** Each tool id's distinct terms (document frequencies are counted from them). */
  readonly terms: readonly (readonly [string, readonly string[]])[];
  /** Each tool id's words with a vector and their field weights (word-vector-index.ts). */
  readonly words: readonly (readonly [string, readonly (readonly [string, number])[]])[];
}

/**
 * The hash a snapshot is kept under: the tools as they are, the analysing code, the stemmer's
 * answers and the word-vector file's identity (`vectorsId`), so a snapshot made by other code is
 * never read.
 */
export function snapshotKey(entries: readonly ToolEntry[], vectorsId: string): string {
  const hash = createHash('sha256');
  hash.update(`${SNAPSHOT_FORMAT}\n${analysingCode()}\n${vectorsId}\n${STEM_PROBE.map((w) => processTerm(w)).join(' ')}\n`);
  for (const entry of entries) hash.update(`${JSON.stringify([entry.category, entry.name, entry.mcp_server, entry.description, entry.functions, entry.use_cases, entry.input_schema])}\n`);
  return hash.digest('hex');
}

/** The snapshot in `file` when it was made under `key`; undefined when absent, stale or damaged. */
export function readSnapshot(file: string, key: string): IndexSnapshot | undefined {
  try {
    const snapshot = JSON.parse(readFileSync(file, 'utf8')) as Partial<IndexSnapshot>;
    if (snapshot.format !== SNAPSHOT_FORMAT || snapshot.key !== key || !snapshot.mini || !Array.isArray(snapshot.terms) || !Array.isArray(snapshot.words)) return undefined;
    return snapshot as IndexSnapshot;
  } catch {
    // absent or unreadable: the index is built, and the snapshot written again
    return undefined;
  }
}

/** Writes a snapshot atomically (a temporary file renamed over the old one). */
export async function writeSnapshot(file: string, snapshot: IndexSnapshot): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(tmp, JSON.stringify(snapshot));
  await rename(tmp, file);
}
