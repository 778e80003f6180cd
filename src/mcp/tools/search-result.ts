// A search result as search_tools hands it to a model: the reason a tool cannot be called is
// nearly always its server's ("not connected: server "slack" is not configured; ..."), so ten
// tools of one server repeated one 30-token sentence ten times. It is said once per category.

import type { SearchResult, ToolView } from '../../catalog/index.js';
import { plain } from '../define-tool.js';
import type { Plain } from '../define-tool.js';

/** What search_tools answers: the result, with each category's shared reason said once. */
export type SearchAnswer = Plain<SearchResult> & { not_callable?: Record<string, string> };

/**
 * The result with `not_callable: { CATEGORY: why }` for each category whose listed tools that are
 * not callable all share one reason; those tools keep `callable: false` and lose their copy of it.
 * A category whose tools differ in their reasons (one tool denied by permission, say) keeps each
 * reason on its tool. Full definitions (detail_level "full") are left whole.
 */
export function reasonsOncePerCategory(result: SearchResult): SearchAnswer {
  const answer = plain(result);
  if (answer.detail_level === 'full') return answer;
  const reasons = new Map<string, string | null>();
  for (const t of answer.tools) {
    if (t.callable !== false || t.why === undefined) continue;
    const known = reasons.get(t.category);
    reasons.set(t.category, known === undefined || known === t.why ? t.why : null);
  }
  const shared = new Map([...reasons].filter((entry): entry is [string, string] => entry[1] !== null));
  if (shared.size === 0) return answer;
  const compacted = answer.tools.map((t): Plain<ToolView> => {
    if (t.callable !== false || !shared.has(t.category)) return t;
    const { why: _why, ...rest } = t;
    return rest;
  });
  return { ...answer, tools: compacted, not_callable: Object.fromEntries(shared) };
}
