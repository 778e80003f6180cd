// search_tools, get_tool_definition, list_tool_categories: progressive discovery over the catalog
// (catalog files, live upstream tools as category = server, saved skills as category 'skills'),
// as the session's agent sees it: only what its permissions show, each tool marked callable or not.

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { COMPACT_STYLE, DETAIL_LEVELS, MAX_LIMIT, MAX_QUERY_CHARS, profileSearchDefaults, schemaToTypeScript } from '../../catalog/index.js';
import type { Catalog, CatalogViewer, ToolDefinition } from '../../catalog/index.js';
import { catalogViewer } from '../../sandbox-api/catalog-access.js';
import { defineTool, plain } from '../define-tool.js';
import { DaemonError, isDaemonError } from '../../util/daemon-error.js';
import type { ToolContext } from '../define-tool.js';
import { args, number, oneOf, text } from '../schema-helpers.js';
import { reasonsOncePerCategory } from './search-result.js';

/** Most names one get_tool_definition call takes. */
const MAX_NAMES = 20;
const FORMATS = ['typescript', 'schema', 'full'] as const;

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

export function registerCatalogTools(server: McpServer, ctx: ToolContext, catalog: Catalog): void {
  const { services, session } = ctx;
  // Built per request: the upstream servers' states (callability) change while a session lives.
  const viewer = (): CatalogViewer =>
    catalogViewer({ config: services.config, catalog, ...(services.upstream ? { upstream: services.upstream } : {}) }, { agent: session.agent.name, permissions: session.agent.permissions });
  const category = z
    .string({ error: 'category must be a string naming a category (list_tool_categories shows them)' })
    .nullable()
    .optional();
  // The seed profile keeps the seed's default limit and four fields a line; others are compact.
  const searchDefaults = profileSearchDefaults(services.config.server?.toolProfile);

  defineTool(
    server,
    ctx,
    'search_tools',
    {
      title: 'Search tools',
      description: 'Find tools by what they do, callable ones first; call one in execute_code as tools.SERVER.TOOL(args).',
      input: args('search_tools', {
        query: text('query', 'what the tool should do; "" lists all', { allowEmpty: true, max: MAX_QUERY_CHARS }),
        category,
        detail_level: oneOf('detail_level', DETAIL_LEVELS, 'full adds schemas').default('summary'),
        limit: number('limit', 'most tools', { min: 1, max: MAX_LIMIT, integer: true, unit: 'tools' }).default(searchDefaults.limit),
        callable_only: z.boolean({ error: 'callable_only must be true or false' }).optional().describe('only tools you can call now'),
      }),
      output: z.looseObject({ query: z.string(), category: z.string().nullable(), detail_level: z.string(), count: z.number(), tools: z.array(z.looseObject({ name: z.string(), category: z.string() })) }),
      annotations: READ_ONLY,
    },
    async (input) => {
      // The query's vector is computed off the event loop first; search itself never waits for it.
      await catalog.prepareSearch(input.query);
      const result = catalog.search(
        { query: input.query, category: input.category ?? null, detail_level: input.detail_level as (typeof DETAIL_LEVELS)[number], limit: input.limit, callable_only: input.callable_only === true, compact: searchDefaults.compact },
        viewer(),
      );
      return { result: reasonsOncePerCategory(result) };
    },
  );

  // The TypeScript signature carries the doc comments: enough to call a tool, at a third of the
  // tokens of the JSON schema. The seed profile keeps the seed's full entry as the default.
  const defaultFormat = (services.config.server?.toolProfile ?? 'seed') === 'minimal' ? 'typescript' : 'full';
  const shape = (definition: ToolDefinition, format: string): Record<string, unknown> => {
    if (format === 'full') return plain(definition);
    const { name, category: cat, description, input_schema, output_schema, description_only, typescript, callable, why, mcp_server_config, also_in } = definition as ToolDefinition & Record<string, unknown>;
    const body = format === 'schema' ? { description, description_only, input_schema, output_schema } : { typescript: description_only === true ? typescript : compactSignature(definition) };
    return Object.fromEntries(Object.entries({ name, category: cat, ...body, callable, why, mcp_server_config, also_in }).filter(([, v]) => v !== undefined));
  };
  defineTool(
    server,
    ctx,
    'get_tool_definition',
    {
      title: 'Get tool definition',
      description: 'A tool\'s TypeScript signature, or several with tool_names.',
      input: args('get_tool_definition', {
        tool_name: text('tool_name', 'e.g. "github.create_issue"', { max: 300 }).optional(),
        tool_names: z.array(text('tool_names', 'a tool name', { max: 300 }), { error: 'tool_names must be an array of tool names' }).min(1).max(MAX_NAMES).optional().describe(`up to ${MAX_NAMES}`),
        category,
        format: oneOf('format', FORMATS, `default ${defaultFormat}; schema/full: every detail`).optional(),
      }),
      output: z.looseObject({ name: z.string().optional(), category: z.string().optional(), typescript: z.string().optional(), tools: z.array(z.looseObject({})).optional() }),
      annotations: READ_ONLY,
    },
    async ({ tool_name, tool_names, category: cat, format }) => {
      const chosen = format ?? defaultFormat;
      if (tool_names !== undefined) {
        if (tool_name !== undefined) throw new DaemonError('INVALID_ARGUMENT', 'give tool_name or tool_names, not both');
        const v = viewer();
        const tools: Record<string, unknown>[] = [];
        const notFound: { name: string; error: string }[] = [];
        for (const n of tool_names) {
          try {
            tools.push(shape(catalog.get(n, cat ?? null, v), chosen));
          } catch (error) {
            if (!isDaemonError(error)) throw error;
            notFound.push({ name: n, error: error.message });
          }
        }
        return { result: { tools, ...(notFound.length > 0 ? { not_found: notFound } : {}) } };
      }
      if (tool_name === undefined) throw new DaemonError('INVALID_ARGUMENT', 'tool_name is required (or tool_names, an array of names)');
      return { result: shape(catalog.get(tool_name, cat ?? null, viewer()), chosen) };
    },
  );

  defineTool(
    server,
    ctx,
    'list_tool_categories',
    {
      title: 'List tool categories',
      description: 'The tool categories you can see, with descriptions and tool counts.',
      input: args('list_tool_categories', {}),
      output: z.looseObject({ categories: z.record(z.string(), z.looseObject({ description: z.string(), tool_count: z.number() })), total_tools: z.number() }),
      annotations: READ_ONLY,
    },
    async () => ({ result: plain(catalog.categories(viewer())) }),
  );
}

/** The signature in the compact style: short docs, shallow objects, short enums, and a note when cut. */
function compactSignature(definition: ToolDefinition): string {
  return schemaToTypeScript(definition, COMPACT_STYLE);
}
