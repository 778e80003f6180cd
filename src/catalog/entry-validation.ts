// Checks one catalog file (or one dynamic tool) against the entry format and turns it into a
// frozen ToolEntry, or into a one-line reason that stats and the log can show.
import { Ajv } from 'ajv';
import type { ErrorObject } from 'ajv';
import type { DynamicToolEntry, JsonSchema, ToolEntry } from './catalog-types.js';
import { memberAccess } from './schema-to-typescript.js';

/** Largest catalog file read, bytes; a bigger one is reported instead of parsed. */
export const MAX_ENTRY_FILE_BYTES = 1024 * 1024;

/**
 * The entry format of SPEC.md: `catalog/CATEGORY/TOOL.json`. Extra keys are allowed and ignored.
 * Without `input_schema` an entry is description-only (the seed's catalogs have none); without
 * `name` it is named after its file (the seed keyed tools by name).
 */
export const ENTRY_FILE_SCHEMA = {
  type: 'object',
  required: ['description'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_][A-Za-z0-9_.-]*$' },
    description: { type: 'string', maxLength: 20_000 },
    mcp_server: { type: 'string', minLength: 1, maxLength: 128 },
    functions: { type: 'array', items: { type: 'string' }, maxItems: 100 },
    use_cases: { type: 'array', items: { type: 'string' }, maxItems: 100 },
    input_schema: { type: 'object', required: ['type'], properties: { type: { const: 'object' } } },
    output_schema: { type: 'object' },
  },
} as const;

/** The category file `catalog/CATEGORY/_category.json`. */
export const CATEGORY_FILE_SCHEMA = {
  type: 'object',
  required: ['description'],
  properties: {
    description: { type: 'string', maxLength: 2_000 },
    // How to add the server: the `mcpServers` entry shown when nobody configured it.
    mcp_server_config: { type: 'object' },
  },
} as const;

/** What `_category.json` holds. */
export interface CategoryFileData {
  readonly description: string;
  /** The `mcpServers` entry that adds this category's server, when the file gives one. */
  readonly mcp_server_config: Readonly<Record<string, unknown>> | null;
}

/** Compiled on first use, not at import: `exec` starts its sandbox sooner without the compile on its path (about 0.3 s of CPU). */
let compiled: ReturnType<typeof compileShapes> | undefined;
function compileShapes() {
  const ajv = new Ajv({ allErrors: false, strict: false, validateSchema: true });
  return {
    ajv,
    entry: ajv.compile<Record<string, unknown>>(ENTRY_FILE_SCHEMA),
    category: ajv.compile<{ description: string; mcp_server_config?: Record<string, unknown> }>(CATEGORY_FILE_SCHEMA),
  };
}
function shapes(): ReturnType<typeof compileShapes> {
  return (compiled ??= compileShapes());
}
const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

function describeAjvError(error: ErrorObject | undefined, root: string): string {
  if (!error) return 'does not match the entry format';
  const where = error.instancePath ? `${root}${error.instancePath.replaceAll('/', '.')}` : root;
  const allowed = error.keyword === 'const' ? ` (${JSON.stringify(error.params['allowedValue'])})` : '';
  return `${where} ${error.message ?? 'is invalid'}${allowed}`;
}

/** A schema the tool's callers rely on must itself be a valid JSON Schema (draft-07 checked). */
function checkJsonSchema(schema: unknown, field: string): string | null {
  if (typeof schema !== 'object' || schema === null) return `${field} must be an object`;
  const dialect = (schema as JsonSchema)['$schema'];
  if (dialect !== undefined && !(typeof dialect === 'string' && DRAFT_07.test(dialect))) return null;
  const { ajv } = shapes();
  try {
    if (ajv.validateSchema(schema)) return null;
  } catch (error) {
    return `${field} is not a valid JSON Schema: ${(error as Error).message}`;
  }
  return `${field} is not a valid JSON Schema: ${describeAjvError(ajv.errors?.[0], field)}`;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** What a description-only entry shows as its input schema: any object, and why. */
export const DESCRIPTION_ONLY_SCHEMA: JsonSchema = Object.freeze({
  type: 'object',
  description: 'Not published: this catalog entry has a description only (no input_schema), so its arguments are unknown.',
});

/** Parse and validate the text of `catalog/CATEGORY/FILE.json`. */
export function parseEntryFile(text: string, category: string, file: string): Parsed<ToolEntry> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `invalid JSON: ${(error as Error).message}` };
  }
  return entryFromData(data, category, file);
}

/** Validate one parsed entry object (a file's content, or one tool of a seed-format catalog). */
export function entryFromData(data: unknown, category: string, file: string): Parsed<ToolEntry> {
  if (typeof data === 'object' && data !== null && !Array.isArray(data) && !('name' in data)) {
    data = { ...data, name: (file.split('/').pop() ?? '').replace(/\.json$/, '') };
  }
  const validateEntryShape = shapes().entry;
  if (!validateEntryShape(data)) return { ok: false, reason: describeAjvError(validateEntryShape.errors?.[0], 'entry') };
  const raw = data;
  for (const field of ['input_schema', 'output_schema'] as const) {
    if (raw[field] === undefined) continue;
    const problem = checkJsonSchema(raw[field], field);
    if (problem) return { ok: false, reason: problem };
  }
  const name = raw['name'] as string;
  const server = typeof raw['mcp_server'] === 'string' ? raw['mcp_server'] : category;
  const entry: ToolEntry = {
    name,
    category,
    description: raw['description'] as string,
    mcp_server: server,
    functions: stringList(raw['functions']),
    use_cases: stringList(raw['use_cases']),
    input_schema: raw['input_schema'] === undefined ? DESCRIPTION_ONLY_SCHEMA : (raw['input_schema'] as JsonSchema),
    ...(raw['output_schema'] !== undefined ? { output_schema: raw['output_schema'] as JsonSchema } : {}),
    ...(raw['input_schema'] === undefined ? { description_only: true } : {}),
    source: 'catalog',
    file,
  };
  return { ok: true, value: deepFreeze(entry) };
}

/** Parse `_category.json`: its description. */
export function parseCategoryFile(text: string): Parsed<CategoryFileData> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `invalid JSON: ${(error as Error).message}` };
  }
  const validateCategoryShape = shapes().category;
  if (!validateCategoryShape(data)) {
    return { ok: false, reason: describeAjvError(validateCategoryShape.errors?.[0], 'category') };
  }
  return { ok: true, value: deepFreeze({ description: data.description, mcp_server_config: data.mcp_server_config ?? null }) };
}

/**
 * Normalise one tool of a dynamic category (upstream server, skills). Live servers are not held
 * to the file format: only a usable name is required; missing fields get defaults.
 */
export function normalizeDynamicEntry(raw: DynamicToolEntry, category: string): Parsed<ToolEntry> {
  const value = raw as Partial<Record<keyof DynamicToolEntry, unknown>>;
  if (typeof value.name !== 'string' || value.name.length === 0 || value.name.length > 128) {
    return { ok: false, reason: 'name must be a non-empty string of at most 128 characters' };
  }
  const isObject = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);
  const server = typeof value.mcp_server === 'string' && value.mcp_server ? value.mcp_server : category;
  const source = value.source === 'skill' || value.source === 'catalog' ? value.source : 'upstream';
  const functions = stringList(value.functions);
  const entry: ToolEntry = {
    name: value.name,
    category,
    description: typeof value.description === 'string' ? value.description : '',
    mcp_server: server,
    functions: functions.length > 0 ? functions : source === 'upstream' ? [`${memberAccess(memberAccess('tools', server), value.name)}(args)`] : [],
    use_cases: stringList(value.use_cases),
    input_schema: isObject(value.input_schema) ? structuredClone(value.input_schema) : { type: 'object' },
    ...(isObject(value.output_schema) ? { output_schema: structuredClone(value.output_schema) } : {}),
    source,
    ...(typeof value.file === 'string' ? { file: value.file } : {}),
    ...(typeof value.author === 'string' ? { author: value.author } : {}),
    ...(value.visibility === 'private' || value.visibility === 'shared' ? { visibility: value.visibility } : {}),
  };
  return { ok: true, value: deepFreeze(entry) };
}
