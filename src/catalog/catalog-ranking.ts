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
 * Share of the best score a hit needs to count as relevant. Callable tools come first only among
 * relevant hits: `list_skills` must not outrank `github.create_issue` for "create a github issue"
 * just because github is not connected (the agent then learns what to configure).
 */
export const RELEVANT_SHARE = 0.5;

/**
 * The best `limit` entries the viewer sees, in four groups, each by score: relevant ones it can
 * call, relevant ones it cannot (marked why), then weaker hits the same way. A hit list is walked
 * only until `limit` relevant callable entries (and their ties) are found.
 */
export function rankFor(view: CatalogView, index: ToolSearchIndex, viewer: CatalogViewer, query: string, category: string | null, limit: number, callableOnly: boolean): Ranked[] {
  const groups: Scored[][] = [[], [], [], []];
  let best: number | undefined;
  for (const { entry, score } of candidates(view, index, query, category)) {
    if (!viewer.visible(entry)) continue;
    best ??= score;
    const callability = viewer.callability(entry);
    if (!callability.callable && callableOnly) continue;
    const weak = best > 0 && score < best * RELEVANT_SHARE;
    const group = groups[(weak ? 2 : 0) + (callability.callable ? 0 : 1)] as Scored[];
    const first = groups[0] as Scored[];
    const last = first[first.length - 1];
    if (first.length >= limit && last && !sameScore(score, last.score)) break;
    if (group.length < limit || group === first) group.push({ entry, callability, score });
  }
  return groups
    .flatMap((g) => g.sort(byScore))
    .slice(0, limit)
    .map(({ entry, callability }) => ({ entry, callability }));
}
