// Hot reload while the catalog runs: files added, changed, broken and deleted in a temporary
// copy of the default catalog show up in search without a restart. Each wait ends on the catalog's
// own change signal (or, for what announces none, a broken file or a cache hit, the next look),
// never on a clock: beside another build a watcher's event can take seconds, which made a 5 s
// deadline fail now and then. A minute without it means the change was lost. (How fast a change shows
// is a product target, measured by the catalog bench, not asserted here.)
import { mkdir, rename, rm, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../src/catalog/index.js';
import type { CatalogChange } from '../../src/catalog/index.js';
import { captureLogger, entryJson, tempCatalog, writeCatalogFile } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
let catalog: Catalog;
let records: Record<string, unknown>[];
let changes: CatalogChange[];

beforeEach(async () => {
  ({ dir, cleanup } = await tempCatalog(true));
  const captured = captureLogger();
  records = captured.records;
  catalog = new Catalog({ dir, logger: captured.logger, debounceMs: 20 });
  changes = [];
  catalog.onChange((change) => changes.push(change));
  await catalog.start();
});

afterEach(async () => {
  await catalog.close();
  await cleanup();
});

/** A change not seen in this long is lost, not slow (a loaded machine takes seconds, not a minute), ms. */
const LOST_MS = 60_000;

/** Resolves once `check` holds: looked at on each change the catalog announces, and every 50 ms for what it does not announce. */
function waitFor(check: () => boolean, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (): void => {
      stop();
      clearInterval(timer);
      clearTimeout(lost);
    };
    const look = (): void => {
      if (!check()) return;
      done();
      resolve();
    };
    const stop = catalog.onChange(look);
    const timer = setInterval(look, 50);
    const lost = setTimeout(() => {
      done();
      reject(new Error(`never happened (${LOST_MS / 1000} s): ${what}`));
    }, LOST_MS);
    look();
  });
}

const names = (query: string, category?: string): string[] =>
  catalog.search({ query, detail_level: 'name', limit: 5, ...(category ? { category } : {}) }).tools.map((t) => `${t.category}.${t.name}`);

describe('hot reload', { timeout: 120_000 }, () => {
  it('shows an added file, then its change, keeps it while broken, and drops it when deleted', async () => {
    const file = path.join(dir, 'weather', 'get_forecast.json');
    await writeCatalogFile(dir, 'weather', 'get_forecast.json', {
      name: 'get_forecast',
      description: 'Weather forecast for a city, several days ahead.',
      use_cases: ['weather forecast for tomorrow'],
    });
    await waitFor(() => names('weather forecast')[0] === 'weather.get_forecast', 'added file visible in search');
    expect(changes.at(-1)).toMatchObject({ reason: 'files', categories: ['weather'] });

    await writeFile(file, entryJson({ name: 'get_forecast', description: 'Typhoon and hurricane warnings for a coast.' }));
    await waitFor(() => names('hurricane warnings')[0] === 'weather.get_forecast', 'changed description searchable');
    expect(names('several days ahead')).not.toContain('weather.get_forecast');

    await writeFile(file, '{ "name": "get_forecast", "description": ');
    await waitFor(() => catalog.stats().invalid_files.some((f) => f.file === 'weather/get_forecast.json'), 'broken file reported');
    expect(catalog.get('weather.get_forecast').description).toBe('Typhoon and hurricane warnings for a coast.');
    expect(names('hurricane warnings')[0]).toBe('weather.get_forecast');
    const warnings = records.filter((r) => r['code'] === 'CATALOG_INVALID_FILE' && r['file'] === 'weather/get_forecast.json');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, kept_previous: true });

    await writeFile(file, entryJson({ name: 'get_forecast', description: 'Tide tables for a harbour.' }));
    await waitFor(() => names('tide tables')[0] === 'weather.get_forecast', 'repaired file visible');
    expect(catalog.stats().invalid_files).toEqual([]);

    await unlink(file);
    await waitFor(() => catalog.find('weather', 'get_forecast') === undefined, 'deleted file gone');
    expect(names('tide tables')).not.toContain('weather.get_forecast');
    expect(catalog.categories().categories['weather']).toBeUndefined();
  });

  it('does not lose a second save made right after the first (chokidar drops changes within 50 ms)', async () => {
    const file = path.join(dir, 'quick', 'quick_tool.json');
    await writeCatalogFile(dir, 'quick', 'quick_tool.json', { name: 'quick_tool', description: 'Version alpha.' });
    await waitFor(() => catalog.find('quick', 'quick_tool')?.description === 'Version alpha.', 'first version');
    await writeFile(file, entryJson({ name: 'quick_tool', description: 'Version beta.' }));
    await writeFile(file, entryJson({ name: 'quick_tool', description: 'Version gamma.' }));
    await waitFor(() => catalog.find('quick', 'quick_tool')?.description === 'Version gamma.', 'last save applied');
  });

  it('answers an unchanged file from the parse cache when it is checked again', async () => {
    const before = catalog.stats().cache.parsed_files;
    await writeCatalogFile(dir, 'cached', 'cached_tool.json', { name: 'cached_tool' });
    await waitFor(() => catalog.find('cached', 'cached_tool') !== undefined, 'file loaded');
    // The recheck pass after each batch stats the file again: same size and times, so a hit.
    await waitFor(() => catalog.stats().cache.parsed_files.hits > before.hits, 'recheck answered from the cache');
  });

  it('follows an edit to a shipped entry and a deleted shipped entry', async () => {
    await writeFile(path.join(dir, 'slack', 'slack_post_message.json'), entryJson({ name: 'slack_post_message', description: 'Broadcast a zeppelin announcement.' }));
    await waitFor(() => names('zeppelin')[0] === 'slack.slack_post_message', 'edited entry searchable');
    await unlink(path.join(dir, 'github', 'create_issue.json'));
    await waitFor(() => catalog.find('github', 'create_issue') === undefined, 'deleted entry gone');
    expect(() => catalog.get('github.create_issue')).toThrow(/Unknown tool/);
  });

  it('picks up a whole new category folder and its description, and forgets a removed one', async () => {
    const staging = path.join(path.dirname(dir), 'staging');
    await mkdir(staging);
    await writeFile(path.join(staging, '_category.json'), JSON.stringify({ description: 'Jira issue tracker.' }));
    await writeFile(path.join(staging, 'jira_create_ticket.json'), entryJson({ name: 'jira_create_ticket', description: 'Create a Jira ticket.' }));
    await rename(staging, path.join(dir, 'jira'));
    await waitFor(() => catalog.categories().categories['jira']?.description === 'Jira issue tracker.', 'new category listed');
    expect(names('jira ticket')[0]).toBe('jira.jira_create_ticket');

    await writeFile(path.join(dir, 'jira', '_category.json'), JSON.stringify({ description: 'Atlassian Jira.' }));
    await waitFor(() => catalog.categories().categories['jira']?.description === 'Atlassian Jira.', 'category description reloaded');

    await rm(path.join(dir, 'jira'), { recursive: true });
    await waitFor(() => catalog.categories().categories['jira'] === undefined, 'removed category gone');
    expect(names('jira ticket')).not.toContain('jira.jira_create_ticket');
  });

  it('applies a burst of files together', async () => {
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => writeCatalogFile(dir, 'burst', `tool_${i}.json`, { name: `tool_${i}`, description: `Quasar number ${i}.` })),
    );
    await waitFor(() => catalog.list('burst').length === 40, 'all 40 files loaded');
    expect(catalog.search({ query: 'quasar', limit: 100, category: 'burst' }).count).toBe(40);
  });

  it('stops following the folder after close()', async () => {
    await catalog.close();
    await writeCatalogFile(dir, 'late', 'late_tool.json', { name: 'late_tool' });
    // Nothing to wait for: no watcher is left. The event loop turns a few times to be sure.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(catalog.find('late', 'late_tool')).toBeUndefined();
    expect(catalog.stats().watching).toBe(false);
  });
});
