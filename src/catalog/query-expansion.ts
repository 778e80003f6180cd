// Query expansion from WordNet (wordnet.ts): the words a query means without saying them, its
// words' synonyms and, for a word no tool contains, also hypernyms and derivations, kept only where
// some tool contains them. Their weight against the query's own words is a share of the field
// boosts (search-index.ts). The words of WordNet's definitions (glosses) were tried as a third
// kind and measured no better (docs/search.md).

import { processTerm, tokenizeQuery } from './text-analysis.js';
import { WordNet } from './wordnet.js';

/** Words of the query looked up in WordNet at most, and related words kept per query word. */
const EXPANDED_WORDS = 8;
const EXPANSIONS_PER_WORD = 6;
/** A word some tool contains: its related words only nudge the ranking (share of the field boosts). */
export const NUDGE_SHARE = 0.15;
/**
 * A word no tool contains but WordNet knows is English said differently from the catalog, not a
 * typo: its related words stand in for it (a word WordNet does not know stays a likely typo).
 */
export const STAND_IN_SHARE = 0.8;

export interface Expansion {
  /** Related terms of words some tool contains. */
  nudges: string[];
  /** Related terms standing in for words no tool contains. */
  standIns: string[];
  /** Those words' own terms: matched through their stand-ins, not fuzzily as typos. */
  replaced: Set<string>;
}

/** What expansion asks of the catalog's terms. */
export interface TermStats {
  /** Whether some tool contains the term. */
  contains(term: string): boolean;
  /** Whether some tool contains it and few do (a word half the catalog holds ranks by length). */
  isTelling(term: string): boolean;
}

/** One WordNet reader for the process: it holds file handles and an LRU of answers only. */
let wordnet: WordNet | undefined;
/** Query expansion from WordNet on or off, process-wide (the evaluation measures both). */
let expansionOn = true;

/** Turns WordNet query expansion on or off for the process (bench/search-bench.ts measures its worth). */
export function setQueryExpansion(on: boolean): void {
  expansionOn = on;
}

/** Whether WordNet knows the word (or a base form of it); undefined when WordNet is not installed. */
export function wordNetKnows(word: string): boolean | undefined {
  if (!expansionOn) return undefined;
  wordnet ??= new WordNet();
  return wordnet.available ? wordnet.knows(word) : undefined;
}

/**
 * Terms the query means without saying them: WordNet's related words of its words, kept when
 * some tool contains them and the query does not already.
 */
export function expandQuery(query: string, own: ReadonlySet<string>, stats: TermStats): Expansion {
  const expansion: Expansion = { nudges: [], standIns: [], replaced: new Set() };
  if (!expansionOn) return expansion;
  wordnet ??= new WordNet();
  if (!wordnet.available) return expansion;
  const seen = new Set<string>();
  const keep = (candidates: readonly string[], max: number): string[] => {
    const taken: string[] = [];
    for (const word of candidates) {
      const term = processTerm(word);
      if (!term || own.has(term) || seen.has(term) || !stats.isTelling(term)) continue;
      seen.add(term);
      taken.push(term);
      if (taken.length >= max) break;
    }
    return taken;
  };
  const words = [...new Set(tokenizeQuery(query).map((w) => w.toLowerCase()))].slice(0, EXPANDED_WORDS);
  for (const word of words) {
    const term = processTerm(word);
    if (!term) continue;
    const known = stats.contains(term);
    const taken = keep(wordnet.related(word, known ? 'synonyms' : 'broad'), EXPANSIONS_PER_WORD);
    if (known) expansion.nudges.push(...taken);
    else if (taken.length > 0) {
      expansion.standIns.push(...taken);
      expansion.replaced.add(term);
    }
  }
  return expansion;
}
