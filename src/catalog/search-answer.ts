// A search result assembled from its ranked entries: each entry's line at the detail level asked
// for (compact lines in profiles other than `seed`), how the search was ranked (`ranking`), and,
// when no tool matches the query well, a `note` saying so with `suggested_categories`, so an
// agent does not take five weak matches for five answers.

import type { CatalogViewer, DetailLevel, SearchResult, ToolDefinition, ToolEntry, ToolView } from './catalog-types.js';
import type { Ranked } from './catalog-ranking.js';
import { oneLine } from './catalog-view.js';
import type { RankingInfo } from './search-index.js';
import { callabilityFields } from './search-options.js';

/**
 * A semantic match is good when the best tool's raw cosine with the query reaches GOOD_COSINE, or
 * the query has a likely typo (which the encoder misreads) and the best lexical hit holds at
 * least GOOD_COVERAGE of its terms; a lexical-only match by that coverage alone. Measured on the
 * real catalog (bench/search-bench.ts, "weak-match verdicts"): off-topic queries' best cosines
 * were 0.32-0.39, and 144 of the 154 evaluation queries' were 0.40 or more.
 */
export const GOOD_COVERAGE = 0.5;
export const GOOD_COSINE = 0.4;
/**
 * Ranked with the word vectors only: a match is good when the best tool's soft match with the
 * query reaches GOOD_WORD_MATCH (measured, bench "weak-match verdicts": off-topic queries' best
 * were 0.19-0.66, keyword queries' median 1.0, 0.43 the lowest) or, with a likely typo, by coverage.
 */
export const GOOD_WORD_MATCH = 0.7;
/** Categories suggested at most with a weak match. */
const SUGGESTED_CATEGORIES = 3;

export interface AnswerInput {
  query: string;
  category: string | null;
  detail: DetailLevel;
  compact: boolean;
  ranked: readonly Ranked[];
  /** How the search was ranked; undefined for an empty query (an alphabetical list). */
  info: RankingInfo | undefined;
  definition(entry: ToolEntry): ToolDefinition;
  /** The categories the caller can see, best first for the query (for suggestions). */
  categories(viewer: CatalogViewer | undefined): readonly string[];
  viewer: CatalogViewer | undefined;
}

/** Whether the best hit matches the query well (see GOOD_COVERAGE, GOOD_COSINE, GOOD_WORD_MATCH). */
export function matchesWell(info: RankingInfo): boolean {
  if (info.cosine === undefined) return info.coverage >= GOOD_COVERAGE;
  const good = info.ranking === 'semantic' ? GOOD_COSINE : GOOD_WORD_MATCH;
  return info.cosine >= good || (info.typo === true && info.coverage >= GOOD_COVERAGE);
}

function toView({ entry, callability }: Ranked, input: AnswerInput): ToolView {
  const all = callabilityFields(callability, true);
  // Compact lines say only what they add: a line without `callable` is callable.
  const marks = input.compact && all.callable === true ? {} : all;
  if (input.detail === 'name') return { name: entry.name, category: entry.category, ...marks };
  if (input.detail === 'summary') {
    const server = input.compact && entry.mcp_server === entry.category ? {} : { mcp_server: entry.mcp_server };
    return { name: entry.name, category: entry.category, description: oneLine(entry.description), ...server, ...(entry.description_only ? { description_only: true } : {}), ...marks };
  }
  return callability ? Object.freeze({ ...input.definition(entry), ...marks }) : input.definition(entry);
}

export function searchAnswer(input: AnswerInput): SearchResult {
  const setup: Record<string, unknown> = {};
  for (const { callability } of input.ranked) {
    if (callability && !callability.callable && callability.brief !== undefined) Object.assign(setup, callability.mcp_server_config);
  }
  const weak = input.info !== undefined && input.category === null && !matchesWell(input.info);
  const suggested = weak ? suggestions(input) : [];
  return Object.freeze({
    query: input.query,
    category: input.category,
    detail_level: input.detail,
    count: input.ranked.length,
    ...(input.info ? { ranking: input.info.ranking } : {}),
    tools: Object.freeze(input.ranked.map((r) => toView(r, input))),
    ...(weak
      ? {
          match: 'weak' as const,
          note: `No tool matches this query well; these are the closest. Try other words, or search one category${suggested.length > 0 ? ` (perhaps ${suggested.join(', ')})` : ''}; list_tool_categories lists them all.`,
          suggested_categories: Object.freeze(suggested),
        }
      : {}),
    ...(Object.keys(setup).length > 0 ? { setup: Object.freeze(setup) } : {}),
  });
}

/** The categories of the closest tools, then others the caller sees, at most SUGGESTED_CATEGORIES. */
function suggestions(input: AnswerInput): string[] {
  const out = new Set<string>();
  for (const { entry } of input.ranked) {
    if (out.size >= SUGGESTED_CATEGORIES) break;
    out.add(entry.category);
  }
  for (const c of input.categories(input.viewer)) {
    if (out.size >= SUGGESTED_CATEGORIES) break;
    out.add(c);
  }
  return [...out];
}
