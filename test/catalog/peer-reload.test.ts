// Catalog changes told by another daemon (the cluster's change bus): a catalog that does not
// watch its folder (as over a network file system) applies the paths it is given, and ignores
// paths that leave the folder; a watching catalog reports what its watcher saw, to tell the others.

import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../src/catalog/index.js';
import { captureLogger, tempCatalog, waitFor, writeCatalogFile } from './helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function catalogIn(watch: boolean, onFilesChanged?: (paths: string[]) => void): Promise<{ dir: string; catalog: Catalog }> {
  const { dir, cleanup } = await tempCatalog(false);
  closers.push(cleanup);
  const catalog = new Catalog({ dir, logger: captureLogger().logger, watch, debounceMs: 20, ...(onFilesChanged ? { onFilesChanged } : {}) });
  closers.push(() => catalog.close());
  await catalog.start();
  return { dir, catalog };
}

const found = (catalog: Catalog, query: string): string[] => catalog.search({ query, detail_level: 'name', limit: 5 }).tools.map((t) => t.name);

describe('catalog changes from other daemons', () => {
  it('applies the paths another daemon reported, and ignores paths outside the folder', async () => {
    const { dir, catalog } = await catalogIn(false);
    await writeCatalogFile(dir, 'weather', 'get_forecast.json', { name: 'get_forecast', description: 'Weather forecast for a city.' });
    expect(found(catalog, 'forecast')).toEqual([]);
    await catalog.reloadPaths(['../outside.json', '/etc/passwd', 'weather/get_forecast.json']);
    expect(found(catalog, 'forecast')).toEqual(['get_forecast']);
  });

  it('reports the files its watcher saw change', async () => {
    const seen: string[] = [];
    const { dir } = await catalogIn(true, (paths) => seen.push(...paths));
    await writeCatalogFile(dir, 'maps', 'route.json', { name: 'route', description: 'Driving route between two places.' });
    await waitFor(() => seen.includes(path.posix.join('maps', 'route.json')), 'the watcher batch');
  });
});
