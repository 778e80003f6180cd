// Loading the catalog folder: the shipped default catalog, entry validation, and how a broken
// or duplicate file is reported (stats and one warning) while the previous version stays.
import { afterEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../src/catalog/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { captureLogger, DEFAULT_CATALOG_DIR, tempCatalog, waitFor, writeCatalogFile } from './helpers.js';

const open: Catalog[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  await Promise.all(cleanups.splice(0).map((f) => f()));
});

async function started(dir: string, logger = silentLogger()): Promise<Catalog> {
  const catalog = new Catalog({ dir, logger, watch: false });
  open.push(catalog);
  await catalog.start();
  return catalog;
}

describe('default catalog', () => {
  it('loads every shipped file without errors, 100+ tools over documented categories', async () => {
    const catalog = await started(DEFAULT_CATALOG_DIR);
    const stats = catalog.stats();
    expect(stats.invalid_files).toEqual([]);
    expect(stats.total_tools).toBeGreaterThanOrEqual(100);
    expect(stats.files_loaded).toBe(stats.total_tools);
    const { categories, total_tools } = catalog.categories();
    expect(total_tools).toBe(stats.total_tools);
    for (const name of ['sandbox', 'filesystem', 'memory', 'github', 'git', 'fetch', 'slack', 'postgres', 'brave-search', 'google-drive', 'salesforce']) {
      expect(categories[name]?.tool_count, name).toBeGreaterThan(0);
      expect(categories[name]?.description, name).not.toMatch(/^Tools of the /); // from _category.json
    }
  });

  it('describes the whole sandbox API of SPEC.md', async () => {
    const catalog = await started(DEFAULT_CATALOG_DIR);
    const names = catalog.list('sandbox').map((e) => e.name);
    expect(names.sort()).toEqual(
      ['read_file', 'write_file', 'list_files', 'delete_file', 'save_skill', 'load_skill', 'list_skills', 'import_skill', 'tokenize_pii',
        'detokenize_pii', 'filter_by_field', 'summarize_list', 'aggregate_stats', 'format_output', 'search_tools', 'fetch', 'sleep'].sort(),
    );
    expect(catalog.get('sandbox.summarize_list').typescript).toContain('function summarize_list(data: unknown[], limit?: number): { count: number; sample: unknown[] };');
  });

  it('carries the real input schemas of the reference servers', async () => {
    const catalog = await started(DEFAULT_CATALOG_DIR);
    const edit = catalog.find('filesystem', 'edit_file');
    expect(edit?.input_schema['required']).toEqual(['path', 'edits']);
    const memory = catalog.find('memory', 'create_relations');
    expect(memory?.output_schema).toBeDefined();
    expect(catalog.find('github', 'create_pull_request')?.input_schema['required']).toEqual(['owner', 'repo', 'title', 'head', 'base']);
  });
});

describe('validation', () => {
  it('reports each invalid file with its reason and loads the rest', async () => {
    const { dir, cleanup } = await tempCatalog();
    cleanups.push(cleanup);
    await writeCatalogFile(dir, 'tools', 'good.json', { name: 'good' });
    await writeCatalogFile(dir, 'tools', 'syntax.json', '{ "name": "syntax", ');
    await writeCatalogFile(dir, 'tools', 'noschema.json', JSON.stringify({ name: 'noschema', description: 'x' }));
    await writeCatalogFile(dir, 'tools', 'badname.json', { name: 'bad name!' });
    await writeCatalogFile(dir, 'tools', 'badtype.json', { name: 'badtype', input_schema: { type: 'object', properties: { a: { type: 'strnig' } } } });
    await writeCatalogFile(dir, 'tools', 'notobject.json', { name: 'notobject', input_schema: { type: 'string' } });
    await writeCatalogFile(dir, 'tools', 'notype.json', { name: 'notype', input_schema: { properties: {} } });
    await writeCatalogFile(dir, 'tools', '_category.json', '{"description": 5}');
    const { logger, records } = captureLogger();
    const catalog = await started(dir, logger);

    // Without input_schema an entry is description-only (the seed's format), not invalid.
    expect(catalog.list().map((e) => e.name)).toEqual(['good', 'noschema']);
    expect(catalog.get('noschema')).toMatchObject({ description_only: true });
    const reasons = Object.fromEntries(catalog.stats().invalid_files.map((f) => [f.file, f.reason]));
    expect(Object.keys(reasons).sort()).toEqual(
      ['tools/_category.json', 'tools/badname.json', 'tools/badtype.json', 'tools/notobject.json', 'tools/notype.json', 'tools/syntax.json'],
    );
    expect(reasons['tools/syntax.json']).toMatch(/^invalid JSON/);
    expect(reasons['tools/badname.json']).toMatch(/entry\.name must match pattern/);
    expect(reasons['tools/badtype.json']).toMatch(/input_schema is not a valid JSON Schema/);
    expect(reasons['tools/notobject.json']).toMatch(/input_schema\.type must be equal to constant \("object"\)/);
    expect(reasons['tools/notype.json']).toBe("entry.input_schema must have required property 'type'");
    expect(reasons['tools/_category.json']).toMatch(/description must be string/);

    const warnings = records.filter((r) => r['code'] === 'CATALOG_INVALID_FILE');
    expect(warnings.map((w) => w['file']).sort()).toEqual(Object.keys(reasons).sort());
  });

  it('keeps a duplicate tool name in one category out and says which file won', async () => {
    const { dir, cleanup } = await tempCatalog();
    cleanups.push(cleanup);
    await writeCatalogFile(dir, 'tools', 'a.json', { name: 'same', description: 'first' });
    await writeCatalogFile(dir, 'tools', 'b.json', { name: 'same', description: 'second' });
    const catalog = await started(dir);
    expect(catalog.find('tools', 'same')?.description).toBe('first');
    expect(catalog.stats().invalid_files).toEqual([{ file: 'tools/b.json', reason: 'duplicate tool "same" in category "tools": tools/a.json defines it first' }]);
  });

  it('ignores files that are not catalog entries', async () => {
    const { dir, cleanup } = await tempCatalog();
    cleanups.push(cleanup);
    await writeCatalogFile(dir, 'tools', 'real.json', { name: 'real' });
    await writeCatalogFile(dir, 'tools', 'README.md', '# notes');
    await writeCatalogFile(dir, 'tools', '.hidden.json', '{');
    await writeCatalogFile(dir, '.git', 'x.json', '{');
    await writeCatalogFile(dir, 'tools/nested', 'deep.json', { name: 'deep' });
    const catalog = await started(dir);
    expect(catalog.list().map((e) => `${e.category}.${e.name}`)).toEqual(['tools.real']);
    expect(catalog.stats().invalid_files).toEqual([]);
  });

  it('starts empty, with one warning, when the folder does not exist', async () => {
    const { dir, cleanup } = await tempCatalog();
    cleanups.push(cleanup);
    const { logger, records } = captureLogger();
    const catalog = await started(`${dir}/missing`, logger);
    expect(catalog.categories()).toEqual({ categories: {}, total_tools: 0 });
    expect(records.filter((r) => r['code'] === 'CATALOG_DIR_MISSING')).toHaveLength(1);
  });

  it('loads a watched folder that appears after start', async () => {
    const { dir, cleanup } = await tempCatalog();
    cleanups.push(cleanup);
    const later = `${dir}/later`;
    const catalog = new Catalog({ dir: later, logger: silentLogger(), debounceMs: 20 });
    open.push(catalog);
    await catalog.start();
    await writeCatalogFile(later, 'tools', 'late.json', { name: 'late' });
    await waitFor(() => catalog.find('tools', 'late') !== undefined, 'tool of the new folder loaded');
    await writeCatalogFile(later, 'tools', 'later.json', { name: 'later' });
    await waitFor(() => catalog.find('tools', 'later') !== undefined, 'the new folder is watched');
  });

  it('refuses bad options, naming the option', () => {
    expect(() => new Catalog({ dir: '', logger: silentLogger() })).toThrow(/dir must be/);
    expect(() => new Catalog({ dir: '/x', logger: silentLogger(), debounceMs: -1 })).toThrow('debounceMs must be an integer between 0 and 10000');
    expect(() => new Catalog({ dir: '/x', logger: silentLogger(), cacheSize: 0 })).toThrow('cacheSize must be an integer between 1 and 1000000');
  });

  it('close() is idempotent and start() after close() is refused', async () => {
    const { dir, cleanup } = await tempCatalog();
    cleanups.push(cleanup);
    const catalog = new Catalog({ dir, logger: silentLogger() });
    await catalog.start();
    await Promise.all([catalog.close(), catalog.close()]);
    await catalog.close();
    await expect(catalog.start()).rejects.toMatchObject({ code: 'CATALOG_CLOSED' });
  });
});
