// A daemon's restart as the search sees it, in a process of its own (so the model loads afresh):
// the real catalog's tools with their vectors in the cache folder given, and the first query of
// the new process. Prints one JSON line: CPU spent (all threads) from the catalog's creation to
// the first semantic answer, tool texts embedded (0 when every vector is cached), the model's
// load time and how the first query was ranked. Run by bench/search-bench.ts.

import { sharedEmbedder } from '../src/catalog/embedding-client.js';
import { loadRealCatalog, realCatalog } from './search-eval.js';

const FIRST_QUERY = 'file a bug report against the codebase';

async function main(cacheDir: string): Promise<void> {
  const servers = loadRealCatalog();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const embedder = sharedEmbedder({ disabled: false });
  const { catalog, close } = realCatalog(servers, cacheDir);
  try {
    await catalog.prepareSearch(FIRST_QUERY);
    const first = catalog.search({ query: FIRST_QUERY, detail_level: 'name', limit: 3 });
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    process.stdout.write(
      `${JSON.stringify({ ranking: first.ranking, first: first.tools.map((t) => `${t.category}.${t.name}`), embedded_texts: embedder.embeddedTexts, cpu_ms: Math.round((cpu.user + cpu.system) / 1000), wall_ms: Math.round(ms), model_load_ms: embedder.loadMs ?? null })}\n`,
    );
  } finally {
    await catalog.close();
    close();
    embedder.close();
  }
}

const dir = process.argv[2];
if (dir === undefined) {
  process.stderr.write('usage: node dist/bench/search-restart.js CACHE_DIR\n');
  process.exitCode = 2;
} else {
  main(dir).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
