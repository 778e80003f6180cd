// Ranking of catalog search: the best `limit` entries for a query over the current view, for
// everyone (by score) or for one viewer (what it may see, the tools it can call first). Hit lists
// come sorted by score, so a walk stops at the first score past the cut: a broad query may match
// thousands of tools and none past the cut is looked at.

import type { Callability, CatalogViewer, ToolEntry } from './catalog-types.js';
import { compareEntries } from './catalog-view.js';
import type { CatalogView } from './catalog-view.js';
import type { ToolSearchIndex } from './search-index.js';
import { sameScore } from './search-options.js';

/** A ranked entry and, when a viewer asked, whether that viewer can call it. */
export interface Ranked {
  entry: ToolEntry;
  callability?: Callability;
}

interface Scored extends Ranked {
  score: number;
}

/** Best score first; equal scores by name (and category). */
const byScore = (a: Scored, b: Scored): number => (sameScore(a.score, b.score) ? compareEntries(a.entry, b.entry) : b.score - a.score);

/** Entries in the order the walk sees them: alphabetical for an empty query, else search hits. */
function* candidates(view: CatalogView, index: ToolSearchIndex, query: string, category: string | null): Generator<{ entry: ToolEntry; score: number }> {
  if (query.trim() === '') {
    for (const entry of category === null ? view.sorted : (view.byCategory.get(category) ?? [])) yield { entry, score: 0 };
    return;
  }
  for (const hit of index.search(query, category ?? undefined)) {
    const entry = view.byId.get(String(hit.id));
    if (entry) yield { entry, score: hit.score };
  }
}

/** The best `limit` entries for a query, best first; an empty query lists alphabetically. */
export function rankAll(view: CatalogView, index: ToolSearchIndex, query: string, category: string | null, limit: number): Ranked[] {
  const picked: Scored[] = [];
  for (const c of candidates(view, index, query, category)) {
    const last = picked[picked.length - 1];
    if (picked.length >= limit && last && !sameScore(c.score, last.score)) break;
    picked.push(c);
  }
  return picked.sort(byScore).slice(0, limit).map(({ entry }) => ({ entry }));
}

/**
 * The best `limit` entries the viewer sees: the ones it can call first, each group by score.
 * A hit list is walked only until `limit` callable entries (and their ties) are found.
 */
export function rankFor(view: CatalogView, index: ToolSearchIndex, viewer: CatalogViewer, query: string, category: string | null, limit: number, callableOnly: boolean): Ranked[] {
  const callable: Scored[] = [];
  const other: Scored[] = [];
  for (const { entry, score } of candidates(view, index, query, category)) {
    if (!viewer.visible(entry)) continue;
    const callability = viewer.callability(entry);
    if (!callability.callable) {
      if (!callableOnly && other.length < limit) other.push({ entry, callability, score });
      continue;
    }
    const last = callable[callable.length - 1];
    if (callable.length >= limit && last && !sameScore(score, last.score)) break;
    callable.push({ entry, callability, score });
  }
  return [...callable.sort(byScore), ...other.sort(byScore)].slice(0, limit).map(({ entry, callability }) => ({ entry, callability }));
}
