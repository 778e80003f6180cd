// search_tools' reasons in a list: one per category when its tools share it, on each tool when
// they differ, and nothing moved for callable tools or full definitions.

import { describe, expect, it } from 'vitest';
import type { SearchResult } from '../../src/catalog/index.js';
import { reasonsOncePerCategory } from '../../src/mcp/tools/search-result.js';

const result = (tools: Record<string, unknown>[], detail: 'summary' | 'full' = 'summary'): SearchResult =>
  ({ query: 'q', category: null, detail_level: detail, count: tools.length, tools }) as unknown as SearchResult;

describe('reasonsOncePerCategory', () => {
  it('says a reason the tools of one category share once, and keeps reasons that differ on their tools', () => {
    const out = reasonsOncePerCategory(
      result([
        { name: 'a', category: 'slack', callable: false, why: 'not connected' },
        { name: 'b', category: 'slack', callable: false, why: 'not connected' },
        { name: 'c', category: 'github', callable: false, why: 'your tools permission does not include github.c' },
        { name: 'd', category: 'github', callable: false, why: 'your tools permission does not include github.d' },
        { name: 'e', category: 'memory', callable: true },
      ]),
    );
    expect(out['not_callable']).toEqual({ slack: 'not connected' });
    expect(out['tools']).toEqual([
      { name: 'a', category: 'slack', callable: false },
      { name: 'b', category: 'slack', callable: false },
      { name: 'c', category: 'github', callable: false, why: 'your tools permission does not include github.c' },
      { name: 'd', category: 'github', callable: false, why: 'your tools permission does not include github.d' },
      { name: 'e', category: 'memory', callable: true },
    ]);
  });

  it('leaves a list of callable tools and full definitions as they are', () => {
    const callable = result([{ name: 'e', category: 'memory', callable: true }]);
    expect(reasonsOncePerCategory(callable)).toBe(callable);
    const full = result([{ name: 'a', category: 'slack', callable: false, why: 'x' }], 'full');
    expect(reasonsOncePerCategory(full)).toBe(full);
  });
});
