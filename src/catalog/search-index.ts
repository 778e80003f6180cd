// Ranked full-text search over tool entries: MiniSearch (BM25+, prefix and fuzzy matching) with
// the name boosted over description, functions, use cases and category.
//
// The index is updated in place (add/discard per changed entry) rather than rebuilt per catalog
// generation: a file change then costs O(changed entries) instead of O(catalog), so a reload stays
// well under a second at 10,000 tools, and no searcher pays for a rebuild after a change. What the
// LRU caches instead are search results, keyed by generation (see catalog.ts).
import MiniSearch from 'minisearch';
import type { SearchOptions as MiniSearchOptions } from 'minisearch';
import type { ToolEntry } from './catalog-types.js';
import { processTerm, splitWords, tokenizeName, tokenizeQuery } from './text-analysis.js';

/** Field weights: a name hit counts most, then use cases and description. */
export const FIELD_BOOSTS = { name: 4, use_cases: 2, description: 1.2, functions: 1, category: 1.5 } as const;

/** Query terms considered; the rest are dropped so one huge query cannot stall the daemon. */
export const MAX_QUERY_TERMS = 24;

/** Fuzzy matching starts at this term length (shorter typos match too much). */
const FUZZY_MIN_CHARS = 4;
/** Allowed edit distance as a fraction of the term length (0.2: one edit per five letters). */
const FUZZY_FRACTION = 0.2;

interface IndexedTool {
  id: string;
  /** The category as stored for filtering (not indexed). */
  cat: string;
  name: string;
  /** Indexed text: the category and, when it differs, the server name. */
  category: string;
  description: string;
  functions: string;
  use_cases: string;
}

export interface SearchHit {
  id: string;
  score: number;
}

/** The document id of an entry: category and name, joined by a character neither can hold. */
export function entryId(category: string, name: string): string {
  return `${category}\u001f${name}`;
}

function toDocument(entry: ToolEntry): IndexedTool {
  return {
    id: entryId(entry.category, entry.name),
    cat: entry.category,
    name: entry.name,
    category: entry.mcp_server === entry.category ? entry.category : `${entry.category} ${entry.mcp_server}`,
    description: entry.description,
    functions: entry.functions.join(' '),
    use_cases: entry.use_cases.join(' \n '),
  };
}

const SEARCH_OPTIONS: MiniSearchOptions = {
  boost: FIELD_BOOSTS,
  prefix: (term) => term.length >= 2,
  fuzzy: (term) => (term.length >= FUZZY_MIN_CHARS ? FUZZY_FRACTION : false),
  maxFuzzy: 3,
  combineWith: 'OR',
};

export class ToolSearchIndex {
  readonly #mini: MiniSearch<IndexedTool>;
  readonly #ids = new Set<string>();

  constructor() {
    this.#mini = new MiniSearch<IndexedTool>({
      fields: ['name', 'description', 'functions', 'use_cases', 'category'],
      storeFields: ['cat'],
      tokenize: (text, field) => (field === 'name' || field === 'functions' ? tokenizeName(text) : splitWords(text)),
      processTerm,
      searchOptions: { ...SEARCH_OPTIONS, tokenize: tokenizeQuery, processTerm },
    });
  }

  get size(): number {
    return this.#ids.size;
  }

  has(id: string): boolean {
    return this.#ids.has(id);
  }

  add(entry: ToolEntry): void {
    const doc = toDocument(entry);
    if (this.#ids.has(doc.id)) this.#mini.discard(doc.id);
    this.#mini.add(doc);
    this.#ids.add(doc.id);
  }

  remove(id: string): void {
    if (!this.#ids.delete(id)) return;
    this.#mini.discard(id);
  }

  /** Hits for a free-text query, best first; `category` restricts to one category. */
  search(query: string, category?: string): SearchHit[] {
    // Terms are analysed here once, deduplicated after stemming ('file files' is one term, not a
    // double weight) and capped, then handed to MiniSearch as they are.
    const terms = [...new Set(tokenizeQuery(query).map(processTerm).filter((t): t is string => !!t))].slice(0, MAX_QUERY_TERMS);
    if (terms.length === 0) return [];
    const results = this.#mini.search(terms.join(' '), {
      tokenize: () => terms,
      processTerm: (term) => term,
      ...(category !== undefined ? { filter: (result) => result['cat'] === category } : {}),
    });
    return results.map((r) => ({ id: String(r.id), score: r.score }));
  }
}
