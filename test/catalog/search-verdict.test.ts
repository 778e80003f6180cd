// What a search result says about itself (src/catalog/search-answer.ts): how it was ranked
// (`ranking`), and when no tool matches the query well, that it is weak, with categories to try.
// Ranked with the shipped word vectors here (the suite turns the encoder off); semantic-search.test.ts
// covers 'semantic', word-vectors.test.ts 'lexical' (no vectors).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../src/catalog/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { DEFAULT_CATALOG_DIR } from './helpers.js';

let catalog: Catalog;

beforeAll(async () => {
  catalog = new Catalog({ dir: DEFAULT_CATALOG_DIR, logger: silentLogger(), watch: false, semanticSearch: false });
  await catalog.start();
});

afterAll(async () => {
  await catalog.close();
});

describe('search verdicts', () => {
  it("says a search without the sentence encoder is ranked with the word vectors ('vectors'), and an empty query (a list) says nothing", () => {
    expect(catalog.search({ query: 'create a github issue' }).ranking).toBe('vectors');
    expect(catalog.search({ query: '' })).not.toHaveProperty('ranking');
    // Stats say why: here semantic search is off (without the encoder's packages: unavailable).
    expect(catalog.stats().ranking).toMatchObject({ mode: 'vectors', why: expect.stringMatching(/semantic search is off/) });
  });

  it('gives no warning when a tool matches well', () => {
    for (const query of ['create a github issue', 'read file', 'post a slack message']) {
      const r = catalog.search({ query });
      expect(r.match, query).toBeUndefined();
      expect(r.note, query).toBeUndefined();
    }
  });

  it('says so when no tool matches well, and suggests categories that exist', () => {
    for (const query of ['tune a guitar', 'check my blood pressure', 'water the plants in the garden']) expect(catalog.search({ query }).match, query).toBe('weak');
    const r = catalog.search({ query: 'bake a chocolate cake with strawberries' });
    expect(r.match).toBe('weak');
    expect(r.note).toMatch(/No tool matches this query well/);
    expect(r.note).toMatch(/list_tool_categories/);
    const categories = Object.keys(catalog.categories().categories);
    expect(r.suggested_categories?.length).toBeGreaterThan(0);
    for (const c of r.suggested_categories ?? []) expect(categories).toContain(c);
  });
});
