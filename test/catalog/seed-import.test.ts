// The seed's catalog format (full_catalog.json): imported into CATEGORY/TOOL.json files by the
// real `import-catalog` command, and served live when dropped at the top of a watched catalog
// folder; tools without input_schema are description-only, never given a callable signature.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../src/catalog/index.js';
import { parseSeedCatalog } from '../../src/catalog/seed-format.js';
import { runCli, scratch } from '../fixtures/mcp/cli.js';
import { captureLogger, tempCatalog, waitFor } from './helpers.js';

const SEED_CATALOG = {
  total_tools: 4,
  core_mcps: ['security-scanner'],
  categories: {
    security: {
      description: 'Security tools',
      tools: {
        web_vuln_scanner: {
          description: 'Scan web apps for vulnerabilities',
          mcp_server: 'security-scanner',
          functions: ['scan_url', 'get_report'],
          use_cases: ['OWASP checks'],
          risk_level: 'medium',
        },
        cve_lookup: { description: 'Look up CVE details by id', mcp_server: 'security-scanner', functions: ['lookup'], use_cases: [] },
      },
    },
    memory: {
      description: 'Knowledge graph memory',
      tools: {
        graph_store: {
          description: 'Store entities',
          mcp_server: 'memory',
          functions: ['create_entities'],
          use_cases: ['remember facts'],
          input_schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        },
        'bad name!': { description: 'skipped' },
      },
    },
  },
};

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

describe('parseSeedCatalog', () => {
  it('converts categories and tools, keeps seed keys and reports what it skips', () => {
    const parsed = parseSeedCatalog(JSON.stringify(SEED_CATALOG));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value.categories.map((c) => [c.name, c.tools.map((t) => t.name)])).toEqual([
      ['security', ['web_vuln_scanner', 'cve_lookup']],
      ['memory', ['graph_store']],
    ]);
    expect(parsed.value.categories[0]?.tools[0]).toMatchObject({ name: 'web_vuln_scanner', risk_level: 'medium', functions: ['scan_url', 'get_report'] });
    expect(parsed.value.skipped).toEqual([{ what: 'memory/bad name!', reason: expect.stringMatching(/tool name must be/) }]);
    expect(parseSeedCatalog('{"tools": []}')).toMatchObject({ ok: false, reason: expect.stringMatching(/^not a seed catalog/) });
    expect(parseSeedCatalog('{')).toMatchObject({ ok: false, reason: expect.stringMatching(/^invalid JSON/) });
  });
});

describe('import-catalog', () => {
  it('writes one file per tool and a _category.json per category, and the catalog serves them', async () => {
    const s = scratch();
    cleanups.push(() => s.remove());
    const source = path.join(s.dir, 'full_catalog.json');
    writeFileSync(source, JSON.stringify(SEED_CATALOG));
    const catalogDir = path.join(s.dir, 'catalog');
    const r = await runCli(['import-catalog', source, '--catalog-dir', catalogDir], s.env);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ catalog_dir: catalogDir, categories: 2, tools: 3, description_only: 2, skipped: [{ what: 'memory/bad name!' }] });
    expect(JSON.parse(readFileSync(path.join(catalogDir, 'security/_category.json'), 'utf8'))).toEqual({ description: 'Security tools' });
    expect(existsSync(path.join(catalogDir, 'security/web_vuln_scanner.json'))).toBe(true);

    const catalog = new Catalog({ dir: catalogDir, logger: captureLogger().logger, watch: false });
    cleanups.push(() => catalog.close());
    await catalog.start();
    expect(catalog.stats().invalid_files).toEqual([]);
    const def = catalog.get('web_vuln_scanner', 'security');
    expect(def).toMatchObject({ name: 'web_vuln_scanner', category: 'security', mcp_server: 'security-scanner', description_only: true });
    expect(def.typescript).not.toMatch(/function|Promise/);
    expect(catalog.get('graph_store')).not.toHaveProperty('description_only');
    expect(catalog.get('graph_store').typescript).toMatch(/function graph_store\(args: \{/);
    expect(catalog.search({ query: 'vulnerabilities', category: 'security' }).tools[0]).toEqual({
      name: 'web_vuln_scanner',
      category: 'security',
      description: 'Scan web apps for vulnerabilities',
      mcp_server: 'security-scanner',
      description_only: true,
    });
    expect(catalog.categories().categories['security']).toEqual({ description: 'Security tools', tool_count: 2 });
  });

  it('refuses a file that is not a seed catalog, naming the problem (exit 2)', async () => {
    const s = scratch();
    cleanups.push(() => s.remove());
    const source = path.join(s.dir, 'x.json');
    writeFileSync(source, '{"name": "one_tool"}');
    const r = await runCli(['import-catalog', source, '--catalog-dir', path.join(s.dir, 'catalog')], s.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not a seed catalog: expected \{"categories"/);
  });
});

describe('a seed catalog dropped into the catalog folder', () => {
  it('is served live, replaced on change, kept when broken and removed with the file', async () => {
    const { dir, cleanup } = await tempCatalog();
    cleanups.push(cleanup);
    const catalog = new Catalog({ dir, logger: captureLogger().logger, debounceMs: 20 });
    cleanups.push(() => catalog.close());
    await catalog.start();
    const file = path.join(dir, 'full_catalog.json');
    const drop = async (data: unknown): Promise<void> => {
      await writeFile(`${file}.part`, typeof data === 'string' ? data : JSON.stringify(data));
      await rename(`${file}.part`, file);
    };
    await drop(SEED_CATALOG);
    await waitFor(() => catalog.find('security', 'web_vuln_scanner') !== undefined, 'the seed tools to appear');
    expect(catalog.get('web_vuln_scanner')).toMatchObject({ description_only: true, file: 'full_catalog.json#security/web_vuln_scanner' });
    expect(catalog.describeCategory('memory')).toBe('Knowledge graph memory');
    expect(catalog.stats().invalid_files).toEqual([{ file: 'full_catalog.json#memory/bad name!', reason: expect.stringMatching(/tool name must be/) }]);

    const fewer = structuredClone(SEED_CATALOG) as { categories: Record<string, { tools: Record<string, unknown> }> };
    delete fewer.categories['security']?.tools['cve_lookup'];
    await drop(fewer);
    await waitFor(() => catalog.find('security', 'cve_lookup') === undefined, 'the removed tool to go');

    await drop('{ "categories": ');
    await waitFor(() => catalog.stats().invalid_files.some((f) => f.file === 'full_catalog.json'), 'the broken file to be reported');
    expect(catalog.find('security', 'web_vuln_scanner')).toBeDefined();

    await rm(file);
    await waitFor(() => catalog.find('security', 'web_vuln_scanner') === undefined, 'the seed tools to go with the file');
    expect(catalog.stats().invalid_files).toEqual([]);
  });
});
