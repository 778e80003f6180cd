// A search result as search_tools hands it to a model: the reason a tool cannot be called is
// nearly always its server's ("not connected: server "slack" is not configured; ..."), so ten
// tools of one server repeated one 30-token sentence ten times. It is said once per category.

import type { SearchResult } from '../../catalog/index.js';

interface Marked {
  category: string;
  callable?: boolean;
  why?: string;
}

/**
 * The result with `not_callable: { CATEGORY: why }` for each category whose listed tools that are
 * not callable all share one reason; those tools keep `callable: false` and lose their copy of it.
 * A category whose tools differ in their reasons (one tool denied by permission, say) keeps each
 * reason on its tool. Full definitions (detail_level "full") are left whole.
 */
export function reasonsOncePerCategory(result: SearchResult): Record<string, unknown> {
  if (result.detail_level === 'full') return result as unknown as Record<string, unknown>;
  const tools = result.tools as readonly Marked[];
  const reasons = new Map<string, string | null>();
  for (const t of tools) {
    if (t.callable !== false || t.why === undefined) continue;
    const known = reasons.get(t.category);
    reasons.set(t.category, known === undefined || known === t.why ? t.why : null);
  }
  const shared = new Map([...reasons].filter((entry): entry is [string, string] => entry[1] !== null));
  if (shared.size === 0) return result as unknown as Record<string, unknown>;
  const compacted = tools.map((t) => {
    if (t.callable !== false || !shared.has(t.category)) return t;
    const { why: _why, ...rest } = t;
    return rest;
  });
  return { ...result, tools: compacted, not_callable: Object.fromEntries(shared) };
}
