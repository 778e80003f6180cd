// Search, lookup and dynamic categories over the default catalog: detail levels, category
// filter, limit, ordering, argument errors, name resolution and "did you mean" suggestions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog, CatalogError } from '../../src/catalog/index.js';
import type { CatalogChange, ToolDefinition, ToolSummaryView } from '../../src/catalog/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { DEFAULT_CATALOG_DIR } from './helpers.js';

let catalog: Catalog;
beforeAll(async () => {
  catalog = new Catalog({ dir: DEFAULT_CATALOG_DIR, logger: silentLogger(), watch: false });
  await catalog.start();
});
afterAll(() => catalog.close());

function caught(fn: () => unknown): CatalogError {
  try {
    fn();
  } catch (error) {
    if (error instanceof CatalogError) return error;
    throw error;
  }
  throw new Error('expected a CatalogError');
}

describe('search', () => {
  it('returns the shape of SPEC.md with summary detail by default', () => {
    const result = catalog.search({ query: 'create github issue' });
    expect(result).toMatchObject({ query: 'create github issue', category: null, detail_level: 'summary' });
    expect(result.count).toBe(result.tools.length);
    expect(result.count).toBeLessThanOrEqual(10);
    expect(result.tools[0]).toEqual({
      name: 'create_issue',
      category: 'github',
      description: 'Create a new issue in a GitHub repository',
      mcp_server: 'github',
    });
  });

  it('gives names only at detail "name" and whole entries with signatures at "full"', () => {
    const names = catalog.search({ query: 'read a file', detail_level: 'name', limit: 3 });
    for (const tool of names.tools) expect(Object.keys(tool).sort()).toEqual(['category', 'name']);

    const full = catalog.search({ query: 'read a file', detail_level: 'full', limit: 1 });
    const tool = full.tools[0] as ToolDefinition;
    expect(tool).toMatchObject({ name: 'read_text_file', category: 'filesystem', source: 'catalog', file: 'filesystem/read_text_file.json' });
    expect(tool.input_schema).toMatchObject({ type: 'object', required: ['path'] });
    expect(tool.typescript).toContain('function read_text_file(args: {');
    expect(tool.typescript).toContain('}): Promise<{ content: string }>;');
  });

  it('filters by category and honours limit', () => {
    const result = catalog.search({ query: 'list', category: 'github', limit: 4, detail_level: 'name' });
    expect(result.category).toBe('github');
    expect(result.count).toBe(4);
    for (const tool of result.tools) expect(tool.category).toBe('github');
    expect(catalog.search({ query: 'file', limit: 1 }).count).toBe(1);
    expect(catalog.search({ query: 'file', limit: 100 }).count).toBeGreaterThan(10);
  });

  it('lists everything alphabetically for an empty query', () => {
    const all = catalog.search({ query: '', limit: 100, detail_level: 'name' });
    const labels = all.tools.map((t) => t.name.toLowerCase());
    expect(labels).toEqual([...labels].sort());
    const git = catalog.search({ query: '  ', category: 'git', limit: 100, detail_level: 'name' });
    expect(git.tools.map((t) => t.name)).toEqual(catalog.list('git').map((e) => e.name));
  });

  it('ranks the same way every time, ties broken by name', () => {
    const first = catalog.search({ query: 'pull request', limit: 100, detail_level: 'name' });
    const fresh = new Catalog({ dir: DEFAULT_CATALOG_DIR, logger: silentLogger(), watch: false });
    return fresh.start().then(() => {
      expect(fresh.search({ query: 'pull request', limit: 100, detail_level: 'name' }).tools).toEqual(first.tools);
      return fresh.close();
    });
  });

  it('ranks tools matching more of the query first', () => {
    const top = catalog.search({ query: 'delete relations knowledge graph', detail_level: 'name', limit: 1 }).tools[0];
    expect(top).toEqual({ name: 'delete_relations', category: 'memory' });
  });

  it('tolerates word forms and small typos', () => {
    const top = (query: string): string => {
      const tool = catalog.search({ query, detail_level: 'name', limit: 1 }).tools[0];
      return tool ? `${tool.category}.${tool.name}` : '';
    };
    expect(top('searching repositories')).toBe('github.search_repositories');
    expect(top('serch repositorys')).toBe('github.search_repositories');
    expect(top('issues comments')).toBe('github.add_issue_comment');
    expect(top('slak mesage')).toBe('slack.slack_post_message');
  });

  it('finds a tool by its exact or qualified name', () => {
    expect(catalog.search({ query: 'gsheets_update_cell', detail_level: 'name', limit: 1 }).tools[0]).toEqual({ name: 'gsheets_update_cell', category: 'google-drive' });
    expect(catalog.search({ query: 'github.get_issue', detail_level: 'name', limit: 1 }).tools[0]).toEqual({ name: 'get_issue', category: 'github' });
  });

  it('refuses bad arguments with messages that name them', () => {
    expect(caught(() => catalog.search({ query: 'x', limit: 0 })).message).toBe('limit must be an integer between 1 and 100');
    expect(caught(() => catalog.search({ query: 'x', limit: 101 })).code).toBe('INVALID_ARGUMENT');
    expect(caught(() => catalog.search({ query: 'x', limit: 2.5 })).code).toBe('INVALID_ARGUMENT');
    expect(caught(() => catalog.search({ query: 'x', detail_level: 'all' as never })).message).toBe('detail_level must be one of "name", "summary", "full"');
    expect(caught(() => catalog.search({ query: 'x'.repeat(1001) })).message).toBe('query must be at most 1000 characters');
    const unknown = caught(() => catalog.search({ query: 'x', category: 'githb' }));
    expect(unknown.code).toBe('CATEGORY_NOT_FOUND');
    expect(unknown.message).toContain('Did you mean: github');
    expect(catalog.search({ query: 'issue', category: 'GitHub', limit: 1 }).category).toBe('github');
  });

  it('answers a repeated search from the result cache', () => {
    const before = catalog.stats().cache.search_results.hits;
    const a = catalog.search({ query: 'cache probe words', limit: 3 });
    const b = catalog.search({ query: 'cache probe words', limit: 3 });
    expect(b).toBe(a);
    expect(catalog.stats().cache.search_results.hits).toBe(before + 1);
  });
});

describe('get', () => {
  it('resolves bare and qualified names and prefers the given category', () => {
    expect(catalog.get('read_text_file')).toMatchObject({ name: 'read_text_file', category: 'filesystem' });
    expect(catalog.get('filesystem.write_file').category).toBe('filesystem');
    expect(catalog.get('write_file', 'filesystem').category).toBe('filesystem');
    expect(catalog.get('filesystem.write_file', 'filesystem').category).toBe('filesystem');
    expect(catalog.get('brave-search.brave_web_search').name).toBe('brave_web_search');
    expect(catalog.get('Read_Text_File').name).toBe('read_text_file');
  });

  it('picks the first category in category order for an ambiguous bare name and names the others', () => {
    const definition = catalog.get('write_file');
    expect(definition.category).toBe('sandbox');
    expect(definition.also_in).toEqual(['filesystem']);
    expect(catalog.get('read_text_file').also_in).toBeUndefined();
  });

  it('suggests the three closest names for an unknown tool', () => {
    const typo = caught(() => catalog.get('reed_file'));
    expect(typo.code).toBe('TOOL_NOT_FOUND');
    expect(typo.suggestions).toHaveLength(3);
    expect(typo.suggestions[0]).toBe('sandbox.read_file');
    expect(typo.suggestions).toContain('filesystem.read_text_file');
    expect(typo.message).toBe(`Unknown tool "reed_file". Did you mean: ${typo.suggestions.join(', ')}? Call search_tools to find tools by what they do.`);
    expect(caught(() => catalog.get('creat_isue')).suggestions[0]).toBe('github.create_issue');
    expect(caught(() => catalog.get('post_slack_message')).suggestions).toContain('slack.slack_post_message');
    const wrongCategory = caught(() => catalog.get('create_issue', 'slack'));
    expect(wrongCategory.message).toContain('in category "slack"');
    expect(wrongCategory.suggestions[0]).toBe('github.create_issue');
    expect(caught(() => catalog.get('')).code).toBe('INVALID_ARGUMENT');
  });

  it('returns signatures with doc comments for every tool of the default catalog', () => {
    for (const entry of catalog.list()) {
      const definition = catalog.get(`${entry.category}.${entry.name}`);
      if (entry.description_only) {
        // Seed-style entries (catalog/security): described, with no signature pretending to be callable.
        expect(definition.typescript, entry.name).toMatch(/^\/\/ .*description-only/);
        continue;
      }
      expect(definition.typescript, entry.name).toMatch(new RegExp(`function ${entry.name.replace(/-/g, '_')}\\(`));
      expect(definition.typescript.startsWith('/**'), entry.name).toBe(true);
    }
  });
});

describe('dynamic categories', () => {
  it('adds, replaces and removes an upstream server category and announces each change', async () => {
    const local = new Catalog({ dir: DEFAULT_CATALOG_DIR, logger: silentLogger(), watch: false });
    await local.start();
    const changes: CatalogChange[] = [];
    const unsubscribe = local.onChange((c) => changes.push(c));

    local.setDynamicTools('everything', [
      { name: 'echo', description: 'Echoes back the input', mcp_server: 'everything', functions: [], use_cases: [], input_schema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] }, source: 'upstream' },
      { name: 'add', description: 'Adds two numbers', mcp_server: 'everything', functions: [], use_cases: [], input_schema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }, source: 'upstream' },
    ]);
    expect(changes.at(-1)).toMatchObject({ reason: 'dynamic', categories: ['everything'] });
    expect(local.categories().categories['everything']).toEqual({ description: 'Live tools of the upstream MCP server "everything".', tool_count: 2 });
    expect(local.search({ query: 'echo input', detail_level: 'name', limit: 1 }).tools[0]).toEqual({ name: 'echo', category: 'everything' });
    expect(local.find('everything', 'echo')?.functions).toEqual(['tools.everything.echo(args)']);
    expect(local.get('everything.add').typescript).toBe('/** Adds two numbers */\nfunction add(args: { a: number; b: number }): Promise<unknown>;');

    local.setDynamicTools('everything', [{ name: 'echo', description: 'Repeats a message', mcp_server: 'everything', functions: [], use_cases: [], input_schema: { type: 'object' }, source: 'upstream' }], 'Reference test server');
    expect(local.list('everything').map((e) => e.name)).toEqual(['echo']);
    expect(local.categories().categories['everything']?.description).toBe('Reference test server');
    expect(local.search({ query: 'adds numbers', category: 'everything' }).count).toBe(0);

    local.setDynamicTools('everything', null);
    expect(local.categories().categories['everything']).toBeUndefined();
    expect(local.search({ query: 'echo', detail_level: 'name' }).tools.map((t) => t.category)).not.toContain('everything');
    expect(changes.map((c) => c.reason)).toEqual(['dynamic', 'dynamic', 'dynamic']);
    unsubscribe();
    local.setDynamicTools('skills', []);
    expect(changes).toHaveLength(3);
    expect(local.categories().categories['skills']).toEqual({ description: 'Saved skills: reusable code loaded with import_skill.', tool_count: 0 });
    await local.close();
  });

  it('lets a live server replace the catalog folder of the same name, merging curated metadata into its tools, and restores it after', async () => {
    const local = new Catalog({ dir: DEFAULT_CATALOG_DIR, logger: silentLogger(), watch: false });
    await local.start();
    const shipped = local.list('memory').length;
    const curated = local.find('memory', 'read_graph');
    const liveSchema = { type: 'object', properties: { live: { type: 'boolean' } } };
    local.setDynamicTools('memory', [{ name: 'read_graph', description: 'Live read_graph', mcp_server: 'memory', functions: [], use_cases: ['live title'], input_schema: liveSchema, source: 'upstream' }]);
    // The live list is the truth about which tools exist and what they take ...
    expect(local.list('memory').map((e) => e.name)).toEqual(['read_graph']);
    const merged = local.find('memory', 'read_graph');
    expect(merged?.source).toBe('upstream');
    expect(merged?.input_schema).toEqual(liveSchema);
    // ... and the curated description and use cases are kept, not dropped.
    expect(merged?.description).toBe(curated?.description);
    expect(merged?.use_cases).toEqual([...(curated?.use_cases ?? []), 'live title']);
    expect(merged?.functions).toEqual(curated?.functions);
    local.setDynamicTools('memory', null);
    expect(local.list('memory')).toHaveLength(shipped);
    await local.close();
  });

  it('skips a nameless tool, keeps the first of duplicates and refuses a bad category name', async () => {
    const local = new Catalog({ dir: DEFAULT_CATALOG_DIR, logger: silentLogger(), watch: false });
    const summary = (name: string): Omit<ToolSummaryView, 'category' | 'mcp_server'> & { mcp_server: string; functions: string[]; use_cases: string[]; input_schema: Record<string, unknown>; source: 'upstream' } => ({
      name, description: name, mcp_server: 'srv', functions: [], use_cases: [], input_schema: { type: 'object' }, source: 'upstream',
    });
    local.setDynamicTools('srv', [summary(''), summary('a'), { ...summary('a'), description: 'second' }]);
    expect(local.list('srv').map((e) => [e.name, e.description])).toEqual([['a', 'a']]);
    expect(() => local.setDynamicTools('a/b', [])).toThrow(/category must be/);
    await local.close();
  });
});
