// The search evaluation as a test with floors (bench/search-eval.ts; `npm run bench -- search`
// prints the table): the evaluation set keeps its shape (real tools of 15+ servers, 100+ queries,
// half of them paraphrases that share no content word with the tool they expect), and ranking
// stays at least as good as plain BM25 on every kind and above the floors it reached.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Catalog } from '../../src/catalog/index.js';
import { WordNet } from '../../src/catalog/wordnet.js';
import { bm25Ranker, contentStems, evaluate, KINDS, lexicalRanker, loadQueries, loadRealCatalog, projectRanker, realCatalog, warmSemantic } from '../../bench/search-eval.js';
import type { Scores } from '../../bench/search-eval.js';

const servers = loadRealCatalog();
const queries = loadQueries();
let catalog: Catalog;
let close: () => void;
let ours: Scores;
let bm25: Scores;
let lexical: Scores;

beforeAll(async () => {
  ({ catalog, close } = realCatalog(servers));
  // The sentence encoder embeds the 333 tools in its worker first (about 10 s on this machine).
  expect(await warmSemantic(catalog)).toBe('ready');
  ours = evaluate(queries, projectRanker(catalog)).scores;
  bm25 = evaluate(queries, bm25Ranker(servers)).scores;
  lexical = evaluate(queries, lexicalRanker(servers)).scores;
}, 120_000);

afterAll(() => close());

describe('the evaluation set', () => {
  it('is real tools of at least 15 servers, with versions, and at least 100 queries, half paraphrases', () => {
    expect(servers.length).toBeGreaterThanOrEqual(15);
    for (const s of servers) expect(s.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(servers.reduce((n, s) => n + s.tools.length, 0)).toBeGreaterThanOrEqual(300);
    expect(queries.length).toBeGreaterThanOrEqual(100);
    expect(queries.filter((q) => q.kind === 'paraphrase').length * 2).toBeGreaterThanOrEqual(queries.length);
  });

  it('every expected tool exists, and no paraphrase shares a content word (or a form of one) with its tools', () => {
    const tools = new Map<string, { name: string; description: string }>(servers.flatMap((s) => s.tools.map((t) => [`${s.server}.${t.name}`, t] as const)));
    for (const q of queries) {
      for (const e of q.expected) expect(tools.has(e), `${q.query}: ${e}`).toBe(true);
      if (q.kind !== 'paraphrase') continue;
      const words = contentStems(q.query);
      for (const e of q.expected) {
        const t = tools.get(e);
        const theirs = contentStems(`${t?.name.replace(/[_\-.]/g, ' ')} ${t?.description}`);
        expect([...words].filter((w) => theirs.has(w)), `"${q.query}" and ${e}`).toEqual([]);
      }
    }
  });
});

describe('ranking on the real catalog', () => {
  it('is at least as good as plain BM25 at hits@3 on every kind of query', () => {
    for (const kind of KINDS) expect(ours[kind].hits3, kind).toBeGreaterThanOrEqual(bm25[kind].hits3);
  });

  it('stays above the floors it reached (hits@1/@3: keyword 38/40, typo 12/13, paraphrase 10/16)', () => {
    expect(ours.keyword.hits3).toBeGreaterThanOrEqual(40);
    expect(ours.keyword.hits1).toBeGreaterThanOrEqual(38);
    expect(ours.typo.hits3).toBeGreaterThanOrEqual(13);
    expect(ours.typo.hits1).toBeGreaterThanOrEqual(12);
    expect(ours.paraphrase.hits3).toBeGreaterThanOrEqual(16);
    expect(ours.paraphrase.hits1).toBeGreaterThanOrEqual(10);
  });

  it('semantic re-ranking loses no keyword or typo hit the lexical ranking has', () => {
    for (const kind of ['keyword', 'typo'] as const) {
      expect(ours[kind].hits1, kind).toBeGreaterThanOrEqual(lexical[kind].hits1);
      expect(ours[kind].hits3, kind).toBeGreaterThanOrEqual(lexical[kind].hits3);
    }
  });
});

describe('WordNet query expansion', () => {
  it('finds related words by reading the database files, and nothing for a non-word', () => {
    const wn = new WordNet();
    expect(wn.available).toBe(true);
    expect(wn.related('picture')).toContain('image');
    expect(wn.related('combine')).toContain('merge');
    expect(wn.related('mountain')).toContain('elevation');
    expect(wn.related('screnshot')).toEqual([]);
    expect(wn.related('../../etc/passwd')).toEqual([]);
    wn.close();
  });

  it('is off, and search stays lexical, when the database is missing', () => {
    const wn = new WordNet('/nonexistent/wordnet/dict');
    expect(wn.related('picture')).toEqual([]);
    expect(wn.available).toBe(false);
  });
});
