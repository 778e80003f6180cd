// tools/list as this server answers it. A client loads the whole list into the model's context on
// every connect, so it carries nothing twice: the SDK's own listing repeats `$schema` in every
// schema, the title again inside the annotations, `additionalProperties: {}` (the default) on every
// output object, write hints on read-only tools and a task-support default. The definitions here are the same tools and the
// same schemas without those, and only the tools of the configured profile.

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { ToolProfile } from '../config/config-types.js';

/** The tools each profile shows; `seed` shows every tool the daemon registers. */
const MINIMAL = new Set(['execute_code', 'search_tools', 'get_tool_definition']);

export function inProfile(profile: ToolProfile, name: string): boolean {
  return profile === 'seed' || MINIMAL.has(name);
}

export interface ToolListing {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject;
  output: z.ZodObject;
  annotations: ToolAnnotations;
}

/** Drops what carries no information: `$schema`, and `additionalProperties: {}` (anything, the default). */
export function compactSchema(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(compactSchema);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === '$schema') continue;
    if (k === 'additionalProperties' && v !== null && typeof v === 'object' && Object.keys(v).length === 0) continue;
    out[k] = compactSchema(v);
  }
  return out;
}

/**
 * The annotations without the title (the tool has it). readOnlyHint and openWorldHint are always
 * stated; destructiveHint and idempotentHint only for tools that write, the only ones where MCP
 * gives them a meaning.
 */
function listedHints(annotations: ToolAnnotations): ToolAnnotations {
  const { title: _title, ...hints } = annotations;
  if (hints.readOnlyHint === true) {
    delete hints.destructiveHint;
    delete hints.idempotentHint;
  }
  return hints;
}

/**
 * An output schema as a listing needs it: every top-level field with its type, nested objects and
 * arrays by their type only. Still a correct (looser) schema of the same results; the models that
 * read it learn the fields, and the full shapes are in the README and in each result itself.
 */
function shallowOutput(schema: unknown): unknown {
  const s = schema as { properties?: Record<string, Record<string, unknown>> };
  if (!s.properties) return schema;
  const properties: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s.properties)) {
    properties[k] = v.type === undefined ? {} : { type: v.type };
  }
  return { ...s, properties };
}

function definition(t: ToolListing): Tool {
  const input = compactSchema(toJsonSchemaCompat(t.input, { strictUnions: true, pipeStrategy: 'input' })) as Tool['inputSchema'];
  const output = shallowOutput(compactSchema(toJsonSchemaCompat(t.output, { strictUnions: true, pipeStrategy: 'output' }))) as Tool['outputSchema'];
  return { name: t.name, title: t.title, description: t.description, inputSchema: input, outputSchema: output, annotations: listedHints(t.annotations) };
}

/** Answers tools/list from `listings` (built once per session, on the first request). */
export function serveToolList(server: McpServer, listings: readonly ToolListing[]): void {
  let tools: Tool[] | undefined;
  server.server.setRequestHandler(ListToolsRequestSchema, () => {
    tools ??= listings.map(definition);
    return { tools };
  });
}
