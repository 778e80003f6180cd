// A restart with an unchanged catalog computes nothing again: the search index's derived data is
// read back from its snapshot (search-snapshot.ts), keyed by the tools it was made from.

import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../../src/catalog/index.js';
import { SNAPSHOT_FILE } from '../../src/catalog/search-snapshot.js';
import { silentLogger } from '../../src/util/logger.js';
import { DEFAULT_CATALOG_DIR } from './helpers.js';

const QUERIES = ['create github issue', 'remember a fact about a person', 'reed_file', 'take a picture of the page'];

async function start(cacheDir: string): Promise<{ catalog: Catalog; answers: string[][] }> {
  const catalog = new Catalog({ dir: DEFAULT_CATALOG_DIR, logger: silentLogger(), watch: false, semanticSearch: false, vectorCacheDir: cacheDir });
  await catalog.start();
  const answers = QUERIES.map((query) => catalog.search({ query, limit: 5 }).tools.map((t) => `${t.category}.${t.name}`));
  return { catalog, answers };
}

describe('the search index across restarts', () => {
  it('a second start with the same catalog indexes no tool, and answers exactly as the first', async () => {
    const cacheDir = mkdtempSync(path.join(tmpdir(), 'cem-snapshot-'));
    const first = await start(cacheDir);
    expect(first.catalog.toolsIndexed).toBeGreaterThan(50);
    await first.catalog.close();
    expect(readdirSync(cacheDir)).toContain(SNAPSHOT_FILE);

    const second = await start(cacheDir);
    expect(second.catalog.toolsIndexed).toBe(0);
    expect(second.answers).toEqual(first.answers);
    await second.catalog.close();
  });

  it('a damaged snapshot is not used: the index is built again', async () => {
    const cacheDir = mkdtempSync(path.join(tmpdir(), 'cem-snapshot-'));
    await (await start(cacheDir)).catalog.close();
    writeFileSync(path.join(cacheDir, SNAPSHOT_FILE), '{"format":1,');
    const again = await start(cacheDir);
    expect(again.catalog.toolsIndexed).toBeGreaterThan(50);
    await again.catalog.close();
  });
});
