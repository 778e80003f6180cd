// TypeScript generated from JSON Schema: exact expected text for a set of schemas, the guards
// (cycles, depth), and the servers/ file tree, which must compile with the TypeScript compiler.
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { Catalog, jsonSchemaToType, renderServerIndex, renderToolFile, schemaToTypeScript, toolFilePath } from '../../src/catalog/index.js';
import type { ToolEntry } from '../../src/catalog/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { DEFAULT_CATALOG_DIR } from './helpers.js';

const sig = (input: Record<string, unknown>, output?: Record<string, unknown>, description = 'Does it.'): string =>
  schemaToTypeScript({ name: 'tool', description, input_schema: input, ...(output ? { output_schema: output } : {}) });

describe('schemaToTypeScript', () => {
  it('renders the example of the issue', () => {
    expect(
      schemaToTypeScript({
        name: 'read_file',
        description: 'Read a file from the workspace.',
        input_schema: {
          type: 'object',
          properties: { path: { type: 'string', description: 'path relative to workspace' }, encoding: { enum: ['utf8', 'base64'] } },
          required: ['path'],
        },
        output_schema: { type: 'object', properties: { content: { type: 'string' } }, required: ['content'] },
      }),
    ).toBe(
      '/** Read a file from the workspace. */\n' +
        'function read_file(args: { /** path relative to workspace */ path: string; encoding?: "utf8" | "base64" }): Promise<{ content: string }>;',
    );
  });

  it.each([
    ['primitives and integer', { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'boolean' }, c: { type: 'null' } }, required: ['a', 'b', 'c'] }, '{ a: number; b: boolean; c: null }'],
    ['const and enum', { type: 'object', properties: { kind: { const: 'x' }, n: { enum: [1, 2, null] } }, required: ['kind'] }, '{ kind: "x"; n?: 1 | 2 | null }'],
    ['type lists', { type: ['string', 'number'] }, 'string | number'],
    ['arrays and tuples', { type: 'object', properties: { list: { type: 'array', items: { type: 'string' } }, pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }], additionalItems: false }, any: { type: 'array' } } }, '{ list?: string[]; pair?: [string, number]; any?: unknown[] }'],
    ['union inside array', { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'number' }] } }, '(string | number)[]'],
    ['oneOf objects', { oneOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { type: 'object', properties: { b: { type: 'number' } }, required: ['b'] }] }, '{ a: string } | { b: number }'],
    ['allOf intersection', { allOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { type: 'object', properties: { b: { const: 1 } }, required: ['b'] }] }, '{ a?: string } & { b: 1 }'],
    ['constraint-only anyOf adds nothing', { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, anyOf: [{ required: ['a'] }, { required: ['b'] }] }, '{ a?: string; b?: string }'],
    ['additionalProperties as index signature', { type: 'object', additionalProperties: { type: 'number' } }, '{ [key: string]: number }'],
    ['properties plus typed index', { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'number' } }, '{ a?: string } & { [key: string]: number }'],
    ['free-form object', { type: 'object' }, '{ [key: string]: unknown }'],
    ['closed empty object', { type: 'object', properties: {}, additionalProperties: false }, '{}'],
    ['nullable (OpenAPI)', { type: 'string', nullable: true }, 'string | null'],
    ['missing schema parts', { type: 'object', properties: { x: {}, y: true } }, '{ x?: unknown; y?: unknown }'],
    ['quoted keys', { type: 'object', properties: { 'content-type': { type: 'string' }, $ok: { type: 'string' } }, required: ['content-type'] }, '{ "content-type": string; $ok?: string }'],
    ['$ref into $defs and definitions', { type: 'object', properties: { a: { $ref: '#/$defs/A' }, b: { $ref: '#/definitions/B' } }, $defs: { A: { type: 'string' } }, definitions: { B: { enum: ['x'] } } }, '{ a?: string; b?: "x" }'],
    ['recursive $ref stops at the cycle', { $ref: '#/$defs/Node', $defs: { Node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/Node' } } } } } }, '{ children?: unknown[] }'],
    ['unresolvable $ref', { $ref: 'https://example.com/schema.json' }, 'unknown'],
    ['description and default as a doc comment', { type: 'object', properties: { n: { type: 'integer', description: 'How many', default: 10 } } }, '{ /** How many (default: 10) */ n?: number }'],
    ['comment terminators escaped', { type: 'object', properties: { n: { type: 'string', description: 'ends */ here' } } }, '{ /** ends *\\/ here */ n?: string }'],
  ])('%s', (_label, schema, expected) => {
    expect(jsonSchemaToType(schema)).toBe(expected);
  });

  it('guards depth', () => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 40; i++) schema = { type: 'object', properties: { x: schema }, required: ['x'] };
    const text = jsonSchemaToType(schema);
    expect(text).toContain('unknown');
    expect(text.split('x:').length - 1).toBeLessThan(20);
  });

  it('breaks long types over lines and keeps doc comments on their own lines', () => {
    const text = sig(
      {
        type: 'object',
        properties: {
          owner: { type: 'string', description: 'Repository owner (username or organization)' },
          repo: { type: 'string', description: 'Repository name' },
          state: { type: 'string', enum: ['open', 'closed', 'all'] },
        },
        required: ['owner', 'repo'],
      },
      undefined,
      'List issues in a GitHub repository with filtering options',
    );
    expect(text).toBe(
      [
        '/** List issues in a GitHub repository with filtering options */',
        'function tool(args: {',
        '  /** Repository owner (username or organization) */',
        '  owner: string;',
        '  /** Repository name */',
        '  repo: string;',
        '  state?: "open" | "closed" | "all";',
        '}): Promise<unknown>;',
      ].join('\n'),
    );
  });

  it('makes args optional when nothing is required, and wraps long descriptions', () => {
    const text = sig({ type: 'object', properties: {} }, undefined, `${'word '.repeat(30)}end.`);
    expect(text.split('\n')[0]).toBe('/**');
    expect(text).toContain('function tool(args?: {}): Promise<unknown>;');
    for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(100);
  });

  it('renders positional, synchronous sandbox functions with @param docs', () => {
    expect(
      schemaToTypeScript({
        name: 'filter_by_field',
        description: 'Items whose field equals value.',
        input_schema: {
          type: 'object',
          'x-positional': true,
          'x-sync': true,
          properties: { data: { type: 'array', description: 'records' }, field: { type: 'string' }, value: {} },
          required: ['data', 'field'],
        },
        output_schema: { type: 'array' },
      }),
    ).toBe('/**\n * Items whose field equals value.\n * @param data records\n */\nfunction filter_by_field(data: unknown[], field: string, value?: unknown): unknown[];');
  });

  it('turns names that are not identifiers into valid function names', () => {
    expect(schemaToTypeScript({ name: 'get-issue', description: '', input_schema: { type: 'object' } })).toBe('function get_issue(args?: { [key: string]: unknown }): Promise<unknown>;');
    expect(schemaToTypeScript({ name: 'delete', description: '', input_schema: { type: 'object' } })).toMatch(/^function delete_\(/);
  });
});

function compile(files: Record<string, string>): string[] {
  const prelude =
    'declare const tools: Record<string, Record<string, (args?: unknown) => Promise<never>>>;\n' +
    'declare function import_skill(name: string): Promise<Record<string, unknown>>;\n';
  const options: ts.CompilerOptions = { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, lib: ['lib.es2022.d.ts'], types: [] };
  const all: Record<string, string> = { '/prelude.d.ts': prelude };
  for (const [name, text] of Object.entries(files)) all[`/${name}`] = text;
  const host = ts.createCompilerHost(options);
  const original = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version) => (all[name] !== undefined ? ts.createSourceFile(name, all[name] as string, version) : original(name, version));
  host.fileExists = (name) => all[name] !== undefined || ts.sys.fileExists(name);
  host.readFile = (name) => all[name] ?? ts.sys.readFile(name);
  host.directoryExists = (dir) => Object.keys(all).some((k) => k.startsWith(`${dir}/`)) || ts.sys.directoryExists(dir);
  const program = ts.createProgram(Object.keys(all), options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

describe('servers/ file tree', () => {
  it('renders a tool file with input and output types and the call through tools.SERVER', () => {
    const entry: ToolEntry = {
      name: 'brave_web_search',
      category: 'brave-search',
      description: 'Web search.',
      mcp_server: 'brave-search',
      functions: [],
      use_cases: [],
      input_schema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      source: 'catalog',
    };
    expect(toolFilePath(entry)).toBe('servers/brave-search/brave_web_search.ts');
    expect(renderToolFile(entry)).toBe(
      [
        '// servers/brave-search/brave_web_search.ts: generated from the tool catalog (read-only).',
        '// Call it from execute_code as tools["brave-search"].brave_web_search(args).',
        '',
        'export interface BraveWebSearchInput { query: string }',
        '',
        'export type BraveWebSearchOutput = unknown;',
        '',
        '/** Web search. */',
        'export async function brave_web_search(input: BraveWebSearchInput): Promise<BraveWebSearchOutput> {',
        '  return tools["brave-search"].brave_web_search(input);',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('type-checks every generated file of the default catalog, plus upstream and skill entries', async () => {
    const catalog = new Catalog({ dir: DEFAULT_CATALOG_DIR, logger: silentLogger(), watch: false });
    await catalog.start();
    catalog.setDynamicTools('everything', [
      { name: 'get-tiny-image', description: 'Returns a tiny image', mcp_server: 'everything', functions: [], use_cases: [], input_schema: { type: 'object', properties: {} }, source: 'upstream' },
    ]);
    catalog.setDynamicTools('skills', [
      { name: 'weekly_report', description: 'Builds the weekly report.', mcp_server: 'skills', functions: [], use_cases: [], input_schema: { type: 'object' }, source: 'skill' },
    ]);
    const files: Record<string, string> = {};
    for (const category of Object.keys(catalog.categories().categories)) {
      const entries = catalog.list(category);
      for (const entry of entries) files[toolFilePath(entry)] = renderToolFile(entry);
      files[`servers/${category}/index.ts`] = renderServerIndex(category, entries, catalog.describeCategory(category));
      // Each signature is valid TypeScript on its own as well.
      for (const entry of entries) files[`signatures/${category}/${entry.name}.d.ts`] = `export {};\n${catalog.get(`${category}.${entry.name}`).typescript.replace(/^function /m, 'declare function ')}\n`;
    }
    expect(Object.keys(files).length).toBeGreaterThan(200);
    expect(compile(files)).toEqual([]);
    expect(files['servers/sandbox/read_file.ts']).toContain('export declare function read_file(path: string): string;');
    expect(files['servers/github/index.ts']).toContain("export { create_issue } from './create_issue.js';");
    await catalog.close();
  });
});
