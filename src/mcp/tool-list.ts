// tools/list as this server answers it. A client loads the whole list into the model's context on
// every connect, so it carries nothing twice: the SDK's own listing repeats `$schema` in every
// schema, a title that is the name again ("Execute code" for execute_code), the title once more
// inside the annotations, `additionalProperties: {}` (the default) on every output object, hints
// a client assumes anyway and a task-support default. The definitions here are the same tools and
// the same schemas without those, and only the tools of the configured profile.

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

/**
 * Length and count bounds of strings and arrays: the daemon checks them and its refusal names the
 * argument and the bound ("tool_name is longer than 300 characters"), so a listing need not carry
 * them. Number bounds stay: a model plans with timeout_seconds' maximum.
 */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions']);
const LISTING_DROPS = new Set(['$schema', 'minLength', 'maxLength', 'minItems', 'maxItems', 'propertyNames']);

/**
 * Drops what carries no information for a model choosing arguments: `$schema`, string and array
 * length bounds (checked, with a message that names them), lower bounds of 0 or 1, `propertyNames`
 * (JSON keys are strings anyway), an array element's copy of the array's description and
 * `additionalProperties: {}` (anything, the default). The daemon still checks every one of them.
 */
export function compactSchema(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(compactSchema);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (LISTING_DROPS.has(k)) continue;
    // A lower bound of 0 or 1 (a positive timeout, at least one result) is what any caller assumes.
    if ((k === 'minimum' || k === 'exclusiveMinimum') && typeof v === 'number' && v >= 0 && v <= 1) continue;
    if (k === 'additionalProperties' && v !== null && typeof v === 'object' && Object.keys(v).length === 0) continue;
    // An array's element says again what the array's own description said ("a tool name").
    if (k === 'items' && typeof (value as { description?: unknown }).description === 'string' && v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const { description: _again, ...element } = v as Record<string, unknown>;
      out[k] = compactSchema(element);
      continue;
    }
    // A map of names to schemas: the names are data (a property may be called "minLength").
    out[k] = SCHEMA_MAPS.has(k) && v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).map(([n, s]) => [n, compactSchema(s)])) : compactSchema(v);
  }
  return out;
}

/** What MCP assumes of a tool that states no hint (the spec's defaults for ToolAnnotations). */
const HINT_DEFAULTS = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true } as const;

/**
 * The annotations without the title (the tool has it) and without any hint equal to MCP's default,
 * which a client assumes anyway: execute_code's `readOnlyHint: false, destructiveHint: true` say
 * nothing a client would not already take. destructiveHint and idempotentHint are dropped from
 * read-only tools, the only ones where MCP gives them no meaning.
 */
export function listedHints(annotations: ToolAnnotations): ToolAnnotations {
  const { title: _title, ...hints } = annotations;
  if (hints.readOnlyHint === true) {
    delete hints.destructiveHint;
    delete hints.idempotentHint;
  }
  for (const key of Object.keys(HINT_DEFAULTS) as (keyof typeof HINT_DEFAULTS)[]) {
    if (hints[key] === HINT_DEFAULTS[key]) delete hints[key];
  }
  return hints;
}

/**
 * An output schema as a listing needs it: the names of the top-level fields and nothing about
 * them, no types and no `required` list (a model reads what a result holds from the result
 * itself, which comes as JSON and as text; the field names say what to look for). Still a correct
 * (looser) schema of the same results, which the SDK's client validates structuredContent
 * against; the full shapes are in docs/tools.md. Types were 180 of the seed listing's tokens.
 */
function shallowOutput(schema: unknown): unknown {
  const s = schema as { properties?: Record<string, unknown>; required?: unknown };
  if (!s.properties) return schema;
  const properties: Record<string, unknown> = {};
  for (const k of Object.keys(s.properties)) properties[k] = {};
  const { required: _required, ...rest } = s;
  return { ...rest, properties };
}

function definition(t: ToolListing): Tool {
  const input = compactSchema(toJsonSchemaCompat(t.input, { strictUnions: true, pipeStrategy: 'input' })) as Tool['inputSchema'];
  const output = shallowOutput(compactSchema(toJsonSchemaCompat(t.output, { strictUnions: true, pipeStrategy: 'output' }))) as Tool['outputSchema'];
  // No `title`: each one is its tool's name in words, and clients show the name when it is absent.
  return { name: t.name, description: t.description, inputSchema: input, outputSchema: output, annotations: listedHints(t.annotations) };
}

/** Answers tools/list from `listings` (built once per session, on the first request). */
export function serveToolList(server: McpServer, listings: readonly ToolListing[]): void {
  let tools: Tool[] | undefined;
  server.server.setRequestHandler(ListToolsRequestSchema, () => {
    tools ??= listings.map(definition);
    return { tools };
  });
}
