// Ranked full-text search over tool entries: MiniSearch (BM25+, prefix and fuzzy matching) with
// the name boosted over description, functions, use cases and category.
//
// The index is updated in place (add/discard per changed entry) rather than rebuilt per catalog
// generation: a file change then costs O(changed entries) instead of O(catalog), so a reload stays
// well under a second at 10,000 tools, and no searcher pays for a rebuild after a change. What the
// LRU caches instead are search results, keyed by generation (see catalog.ts).
import MiniSearch from 'minisearch';
import type { Query, SearchOptions as MiniSearchOptions } from 'minisearch';
import type { SearchRanking, ToolEntry } from './catalog-types.js';
import { processTerm, splitWords, tokenizeName, tokenizeQuery } from './text-analysis.js';
import { expandQuery, NUDGE_SHARE, STAND_IN_SHARE, wordNetKnows } from './query-expansion.js';
import type { Expansion } from './query-expansion.js';
import { sharedEmbedder } from './embedding-client.js';
import type { Embedder } from './embedding-client.js';
import { embeddingText, SemanticIndex } from './embedding-index.js';
import type { VectorStore } from './vector-store.js';
import { blend, FITTED_BLEND } from './search-blend.js';
import type { BlendWeights } from './search-blend.js';
import { sharedWordVectors } from './word-vectors.js';
import type { WordVectors } from './word-vectors.js';
import { schemaText, WordVectorIndex } from './word-vector-index.js';
import { readSnapshot, SNAPSHOT_FORMAT, snapshotKey, writeSnapshot } from './search-snapshot.js';
import type { IndexSnapshot } from './search-snapshot.js';

/**
 * Field weights: a name hit counts most, then use cases and description; the input schema's
 * property names, descriptions and enum values least (they say what a tool takes, not what it is).
 */
export const FIELD_BOOSTS = { name: 4, use_cases: 2, description: 1.2, functions: 1, category: 1.5, schema: 0.4 } as const;

/** Query terms considered; the rest are dropped so one huge query cannot stall the daemon. */
export const MAX_QUERY_TERMS = 24;

/**
 * A query term found in more than this share of the tools ('records', 'json' in a catalog whose
 * every description says "returns records as JSON") is dropped when rarer terms remain, and
 * alone it is matched against names first: its BM25 weight is near zero, yet it would drag
 * every tool into scoring and sorting. Only from MIN_DOCS_FOR_PRUNING tools on, where it
 * matters for latency; smaller catalogs are scored on every term and field.
 */
const COMMON_TERM_SHARE = 0.3;
const MIN_DOCS_FOR_PRUNING = 500;

/** Share of the tools a related word may be found in at most (see #isTelling). */
const EXPANSION_MAX_SHARE = 0.03;

function scaledBoosts(weight: number): Record<string, number> {
  return Object.fromEntries(Object.entries(FIELD_BOOSTS).map(([k, v]) => [k, v * weight]));
}

/** Fields a term no tool contains (a likely typo) is fuzzily matched against. */
const TYPO_FIELDS = ['name', 'use_cases', 'category'];

/** Fuzzy matching starts at this term length (shorter typos match too much). */
const FUZZY_MIN_CHARS = 4;
/** Allowed edit distance as a fraction of the term length (0.2: one edit per five letters). */
const FUZZY_FRACTION = 0.2;

interface IndexedTool {
  id: string;
  name: string;
  /** Indexed text: the category and, when it differs, the server name. */
  category: string;
  description: string;
  functions: string;
  use_cases: string;
  schema: string;
}

export interface SearchHit {
  readonly id: unknown;
  readonly score: number;
}

/** How the last search was ranked, and how well its best hit matched (see Catalog.search). */
export interface RankingInfo {
  readonly ranking: SearchRanking;
  /** Share of the query's terms the best lexical hit contains (0 when none). */
  readonly coverage: number;
  /** The best tool's raw cosine with the query: the encoder's when 'semantic', the word vectors' when 'vectors'. */
  readonly cosine?: number;
  /** Whether the query has a likely typo (the encoder misreads those; the lexical side does not). */
  readonly typo?: boolean;
}

/** The document id of an entry: category and name, joined by a character neither can hold. */
export function entryId(category: string, name: string): string {
  return `${category}\u001f${name}`;
}

/**
 * What a `functions` line adds beyond the name and category fields: 'tools.github.create_issue({
 * owner, repo })' indexes as its argument names only, so the tool's own name is not counted twice.
 */
function callArguments(line: string): string {
  const open = line.indexOf('(');
  return open === -1 ? line : line.slice(open);
}

function toDocument(entry: ToolEntry): IndexedTool {
  return {
    id: entryId(entry.category, entry.name),
    name: entry.name,
    category: entry.mcp_server === entry.category ? entry.category : `${entry.category} ${entry.mcp_server}`,
    description: entry.description,
    functions: entry.functions.map(callArguments).join(' '),
    use_cases: entry.use_cases.join(' \n '),
    schema: schemaText(entry.input_schema),
  };
}

/** Options every term shares; fuzziness and fields are chosen per term in `#run`. */
const SEARCH_OPTIONS: MiniSearchOptions = {
  boost: FIELD_BOOSTS,
  prefix: (term) => term.length >= 2,
  maxFuzzy: 3,
  combineWith: 'OR',
};

/**
 * Names are indexed whole and as words; other fields as words only. (Whole argument names such
 * as 'invoice_id' in `functions` would only echo their words and widen every prefix match.)
 */
const tokenizeField = (text: string, field?: string): string[] => (field === 'name' ? tokenizeName(text) : splitWords(text));

const INDEXED_FIELDS = ['name', 'description', 'functions', 'use_cases', 'category', 'schema'] as const;

const MINISEARCH_OPTIONS = { fields: [...INDEXED_FIELDS], tokenize: tokenizeField, processTerm, searchOptions: SEARCH_OPTIONS };

/** The distinct processed terms of a document, for document frequencies. */
function documentTerms(doc: IndexedTool): string[] {
  const terms = new Set<string>();
  for (const field of INDEXED_FIELDS) {
    for (const token of tokenizeField(doc[field], field)) {
      const term = processTerm(token);
      if (term) terms.add(term);
    }
  }
  return [...terms];
}

export class ToolSearchIndex {
  #mini: MiniSearch<IndexedTool>;
  /** Indexed ids and each one's distinct terms. */
  readonly #docTerms = new Map<string, string[]>();
  /** Document frequency of each term. */
  readonly #df = new Map<string, number>();
  /** Semantic re-ranking (embedding-index.ts); lexical only until its model and vectors are ready. */
  readonly #semantic: SemanticIndex;
  /** The shipped word vectors' side (word-vector-index.ts); absent only when the data file is. */
  readonly #vectors: WordVectorIndex | undefined;
  readonly #weights: BlendWeights;
  #last: RankingInfo = { ranking: 'lexical', coverage: 0 };
  /** Where the index's derived data is kept across restarts (search-snapshot.ts); none: not kept. */
  readonly #snapshotFile: string | undefined;
  #indexed = 0;
  #snapshotWrite: Promise<void> = Promise.resolve();

  /**
   * `embedder`: the sentence encoder to use (default: the process's shared worker); `store`: where
   * tool vectors are found and kept (default: none, every tool is embedded); `tuning`: the word
   * vectors and blend weights (default: the shipped file and the fitted weights; the fit script
   * and tests pass others) and the snapshot file the derived data is kept in (default: none).
   */
  constructor(embedder: () => Embedder = sharedEmbedder, store?: VectorStore, deferModel = false, tuning: { wordVectors?: WordVectors | null; weights?: BlendWeights; snapshotFile?: string } = {}) {
    this.#snapshotFile = tuning.snapshotFile;
    this.#semantic = new SemanticIndex(embedder, store, deferModel);
    const wordVectors = tuning.wordVectors === undefined ? sharedWordVectors() : tuning.wordVectors;
    this.#vectors = wordVectors ? new WordVectorIndex(wordVectors) : undefined;
    this.#weights = tuning.weights ?? FITTED_BLEND;
    this.#mini = new MiniSearch<IndexedTool>(MINISEARCH_OPTIONS);
  }

  /** Tools this index analysed itself (not read back from a snapshot): what a restart should not redo. */
  get toolsIndexed(): number {
    return this.#indexed;
  }

  /** Resolves when the last snapshot write has ended (written or failed). */
  snapshotWritten(): Promise<void> {
    return this.#snapshotWrite;
  }

  /**
   * Adds or replaces entries. Into an empty index, with a snapshot file: the snapshot of exactly
   * these entries is read back when there is one, and written after they are indexed when not.
   */
  addAll(entries: readonly ToolEntry[]): void {
    if (entries.length === 0) return;
    if (this.#snapshotFile === undefined || this.size > 0) {
      for (const entry of entries) this.add(entry);
      return;
    }
    const key = snapshotKey(entries, this.#vectors?.vectorsId ?? 'none');
    const snapshot = readSnapshot(this.#snapshotFile, key);
    if (snapshot && this.#restore(snapshot, entries)) return;
    for (const entry of entries) this.add(entry);
    const made: IndexSnapshot = {
      format: SNAPSHOT_FORMAT,
      key,
      mini: this.#mini.toJSON(),
      terms: [...this.#docTerms],
      words: [...this.#docTerms.keys()].map((id) => [id, this.#vectors?.wordsOf(id) ?? []] as const),
    };
    const file = this.#snapshotFile;
    // Written off the search path; a failed write only means the next start builds again.
    this.#snapshotWrite = this.#snapshotWrite.then(() => writeSnapshot(file, made)).catch(() => undefined);
  }

  /** The snapshot's data in place of indexing `entries`; false (nothing changed) when it does not fit them. */
  #restore(snapshot: IndexSnapshot, entries: readonly ToolEntry[]): boolean {
    const byId = new Map(entries.map((e) => [entryId(e.category, e.name), e] as const));
    if (snapshot.terms.length !== byId.size || !snapshot.terms.every(([id]) => byId.has(id))) return false;
    this.#mini = MiniSearch.loadJS<IndexedTool>(snapshot.mini, MINISEARCH_OPTIONS);
    for (const [id, terms] of snapshot.terms) {
      this.#docTerms.set(id, [...terms]);
      for (const term of terms) this.#df.set(term, (this.#df.get(term) ?? 0) + 1);
    }
    for (const [id, words] of snapshot.words) this.#vectors?.setWords(id, new Map(words));
    for (const [id, entry] of byId) this.#semantic.set(id, embeddingText(entry.name, entry.description));
    return true;
  }

  /** Starts a deferred sentence encoder (CatalogOptions.deferModel). */
  startModel(): void {
    this.#semantic.startModel();
  }

  /** Changes when semantic ranking starts or stops applying: part of any search result cache key. */
  get rankingVersion(): number {
    return this.#semantic.version;
  }

  get size(): number {
    return this.#docTerms.size;
  }

  /** How the last `search` was ranked (read right after it: search is synchronous). */
  get lastRanking(): RankingInfo {
    return this.#last;
  }

  /** Whether semantic ranking applies now (model ready, every tool embedded). */
  get semanticReady(): boolean {
    return this.#semantic.ready;
  }

  /** Whether the model is still loading while every tool has its vector. */
  get semanticLoading(): boolean {
    return this.#semantic.loading;
  }

  /** How search ranks now, for stats. */
  get rankingStatus(): { mode: SearchRanking; tools_without_vectors: number; why?: string } {
    const why = this.#semantic.why;
    const mode = why === '' ? 'semantic' : this.#vectors ? 'vectors' : 'lexical';
    return { mode, tools_without_vectors: this.#semantic.missing, ...(why !== '' ? { why } : {}) };
  }

  has(id: string): boolean {
    return this.#docTerms.has(id);
  }

  add(entry: ToolEntry): void {
    this.#indexed++;
    const doc = toDocument(entry);
    this.remove(doc.id);
    this.#mini.add(doc);
    const terms = documentTerms(doc);
    this.#docTerms.set(doc.id, terms);
    this.#semantic.set(doc.id, embeddingText(entry.name, entry.description));
    this.#vectors?.set(doc.id, entry);
    for (const term of terms) this.#df.set(term, (this.#df.get(term) ?? 0) + 1);
  }

  remove(id: string): void {
    const terms = this.#docTerms.get(id);
    if (!terms) return;
    this.#docTerms.delete(id);
    this.#mini.discard(id);
    this.#semantic.remove(id);
    this.#vectors?.remove(id);
    for (const term of terms) {
      const n = (this.#df.get(term) ?? 1) - 1;
      if (n > 0) this.#df.set(term, n);
      else this.#df.delete(term);
    }
  }

  /**
   * Whether a related word is worth adding: some tool contains it, and few do. A word half the
   * catalog's long descriptions contain ('project', 'see') would rank by description length.
   */
  #isTelling(term: string): boolean {
    const df = this.#df.get(term) ?? 0;
    return df > 0 && df <= Math.max(3, this.#docTerms.size * EXPANSION_MAX_SHARE);
  }

  /** Whether a term is in more than COMMON_TERM_SHARE of the tools of a large catalog. */
  #isCommon(term: string): boolean {
    const total = this.#docTerms.size;
    return total >= MIN_DOCS_FOR_PRUNING && (this.#df.get(term) ?? 0) > total * COMMON_TERM_SHARE;
  }

  /**
   * Embeds the query for semantic ranking without blocking the event loop: a search for the same
   * text right after it does not wait for the encoder. Optional (search works without it).
   */
  prepare(query: string): Promise<void> {
    return this.#semantic.prepare(query);
  }

  /** Hits for a free-text query, by score, best first; `category` restricts to one category. */
  search(query: string, category?: string): readonly SearchHit[] {
    // Terms are analysed here once, deduplicated after stemming ('file files' is one term, not a
    // double weight) and capped, then handed to MiniSearch as they are.
    const terms = [...new Set(tokenizeQuery(query).map(processTerm).filter((t): t is string => !!t))].slice(0, MAX_QUERY_TERMS);
    this.#last = { ranking: 'lexical', coverage: 0 };
    if (terms.length === 0) return [];
    const rare = terms.filter((t) => !this.#isCommon(t));
    const kept = rare.length > 0 ? rare : terms;
    const expansion = expandQuery(query, new Set(terms), { contains: (t) => this.#df.has(t), isTelling: (t) => this.#isTelling(t) });
    // A lone common term is looked for in names first; all fields only if no name has it.
    let results = this.#run(kept, category, true, expansion);
    if (results.length === 0 && rare.length === 0) results = this.#run(kept, category, false, expansion);
    const own = new Set([...terms, ...expansion.standIns]);
    const coverage = results[0] ? Math.min(1, results[0].queryTerms.filter((t) => own.has(t)).length / terms.length) : 0;
    const encoder = this.#semantic.scores(query, category);
    const vectors = this.#vectors?.scores(terms, category);
    if (!encoder && !vectors) {
      this.#last = { ranking: 'lexical', coverage };
      return results;
    }
    const typo = this.#hasLikelyTypo(query);
    this.#last = encoder
      ? { ranking: 'semantic', coverage, cosine: encoder.topCosine, typo }
      : { ranking: 'vectors', coverage, cosine: (vectors as { topCosine: number }).topCosine, typo };
    const best = results[0];
    const nameHit = best !== undefined && terms.every((t) => best.match[t]?.includes('name') === true);
    return blend({ hits: results, own, termCount: terms.length, vectors: vectors?.scores, encoder: encoder?.scores, typo, nameHit }, this.#weights);
  }

  /**
   * Whether a query word looks misspelt: no tool contains it and WordNet does not know it (a word
   * it knows is English said differently); without WordNet, the word vectors do not know its stem
   * (they know fewer misspellings' stems apart: 'scarpe' stems to 'scarp'). Semantic signals
   * misread such words.
   */
  #hasLikelyTypo(query: string): boolean {
    return tokenizeQuery(query).some((word) => {
      const term = processTerm(word);
      if (!term || word.length < FUZZY_MIN_CHARS || this.#df.has(term) || !/^[a-z]+$/i.test(word)) return false;
      return !(wordNetKnows(word) ?? this.#vectors?.knows(term) ?? false);
    });
  }

  #run(terms: readonly string[], category: string | undefined, narrowCommon: boolean, expansion?: Expansion): ReturnType<MiniSearch['search']> {
    const perTerm: Query[] = terms.filter((term) => !expansion?.replaced.has(term)).map((term) => {
      if (!this.#df.has(term)) {
        // A term no tool contains is a typo or a partial word: it is matched fuzzily (from
        // FUZZY_MIN_CHARS letters) and by prefix against the short fields, where a correction
        // is telling and a common word of long descriptions cannot flood the results.
        return { queries: [term], fields: TYPO_FIELDS, fuzzy: term.length >= FUZZY_MIN_CHARS ? FUZZY_FRACTION : false };
      }
      return { queries: [term], fuzzy: false, ...(narrowCommon && this.#isCommon(term) ? { fields: ['name'] } : {}) };
    });
    const groups: Query[] = [];
    if (perTerm.length > 0) groups.push({ combineWith: 'OR', queries: perTerm });
    if (expansion?.nudges.length) groups.push({ combineWith: 'OR', queries: expansion.nudges, fuzzy: false, prefix: false, boost: scaledBoosts(NUDGE_SHARE) });
    if (expansion?.standIns.length) groups.push({ combineWith: 'OR', queries: expansion.standIns, fuzzy: false, prefix: false, boost: scaledBoosts(STAND_IN_SHARE) });
    const query: Query = { combineWith: 'OR', queries: groups };
    return this.#mini.search(
      query,
      {
        tokenize: (text) => [text],
        processTerm: (term) => term,
        // Ids start with the category (entryId), so no stored field is needed to filter.
        ...(category !== undefined ? { filter: (result) => String(result.id).startsWith(`${category}\u001f`) } : {}),
      },
    );
  }
}
