// `npm run bench -- search`: hits@1 and hits@3 per query kind on the real catalog (333 tools of
// 27 public MCP servers, 114 queries; see bench/search-eval.ts), this project's ranking against a
// plain BM25 scorer measured in the same run, and the search latency on that catalog.

import type { BenchRow, BenchSection } from './bench-types.js';
import { bm25Ranker, evaluate, KINDS, loadQueries, loadRealCatalog, projectRanker, realCatalog } from './search-eval.js';
import { percentile, round } from './stats.js';

export const searchBench: BenchSection = {
  group: 'search',
  async run(progress) {
    const servers = loadRealCatalog();
    const queries = loadQueries();
    const { catalog, close } = realCatalog(servers);
    const rows: BenchRow[] = [];
    try {
      progress(`search: ${queries.length} queries over ${servers.reduce((n, s) => n + s.tools.length, 0)} tools of ${servers.length} servers`);
      const ours = evaluate(queries, projectRanker(catalog)).scores;
      const bm25 = evaluate(queries, bm25Ranker(servers)).scores;
      for (const kind of KINDS) {
        const o = ours[kind];
        const b = bm25[kind];
        for (const k of ['hits1', 'hits3'] as const) {
          rows.push({
            group: 'search',
            name: `${kind} queries, ${k === 'hits1' ? 'hits@1' : 'hits@3'} (of ${o.queries})`,
            value: o[k],
            unit: 'hits',
            extra: { bm25: b[k] },
            baseline: { name: 'plain BM25', ratio: b[k] === 0 ? 0 : round(o[k] / b[k], 2) },
          });
        }
      }
      progress('search: latency on the real catalog');
      // Uncached: every query once with a unique suffix the cache has not seen.
      const times: number[] = [];
      for (let round_ = 0; round_ < 5; round_++) {
        for (const q of queries) {
          const t = performance.now();
          catalog.search({ query: `${q.query} ${round_}`, limit: 10, detail_level: 'summary' });
          times.push(performance.now() - t);
        }
      }
      rows.push({ group: 'search', name: 'search latency, real catalog, uncached', value: round(percentile(times, 50), 3), unit: 'ms', extra: { p95_ms: round(percentile(times, 95), 3), p99_ms: round(percentile(times, 99), 3) } });
    } finally {
      close();
    }
    return rows;
  },
};
