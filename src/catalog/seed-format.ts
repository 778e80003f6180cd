// The seed server's catalog format (`full_catalog.json`: categories → tools keyed by name, with
// description, mcp_server, functions and use_cases, usually no input_schema), converted into this
// catalog's one-tool-a-file entries. Used by `import-catalog` and by the catalog folder itself,
// which serves a seed-format file dropped at its top level.

import type { ToolEntry } from './catalog-types.js';
import { entryFromData } from './entry-validation.js';
import type { Parsed } from './entry-validation.js';

/** Largest seed catalog read, bytes (a thousand tools with long descriptions fit easily). */
export const MAX_SEED_CATALOG_BYTES = 32 * 1024 * 1024;

const TOOL_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const CATEGORY_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** One tool as a `catalog/CATEGORY/TOOL.json` object (extra seed keys kept: they are ignored on load). */
export type SeedEntryFile = Record<string, unknown> & { name: string; description: string };

export interface SeedCategory {
  name: string;
  description: string;
  tools: SeedEntryFile[];
}

export interface SeedCatalog {
  categories: SeedCategory[];
  /** Tools or categories left out, each with its reason. */
  skipped: { what: string; reason: string }[];
}

export type SeedParse = { ok: true; value: SeedCatalog } | { ok: false; reason: string };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

/** Whether parsed JSON is in the seed's format (`{"categories": {NAME: {"tools": {...}}}}`). */
export function isSeedCatalog(data: unknown): boolean {
  if (!isRecord(data) || !isRecord(data['categories'])) return false;
  return Object.values(data['categories']).every((c) => isRecord(c) && (c['tools'] === undefined || isRecord(c['tools'])));
}

/** Parse the text of a seed catalog; a reason when it is not one. Never throws. */
export function parseSeedCatalog(text: string): SeedParse {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `invalid JSON: ${(error as Error).message}` };
  }
  if (!isSeedCatalog(data)) {
    return { ok: false, reason: 'not a seed catalog: expected {"categories": {CATEGORY: {"description": "...", "tools": {TOOL: {"description": "...", ...}}}}}' };
  }
  return { ok: true, value: convertSeedCatalog(data as { categories: Record<string, Record<string, unknown>> }) };
}

/** Convert a parsed seed catalog: categories and tools with usable names, in the seed's order. */
export function convertSeedCatalog(data: { categories: Record<string, Record<string, unknown>> }): SeedCatalog {
  const categories: SeedCategory[] = [];
  const skipped: SeedCatalog['skipped'] = [];
  for (const [category, body] of Object.entries(data.categories)) {
    if (!CATEGORY_NAME.test(category)) {
      skipped.push({ what: `category "${category}"`, reason: 'a category name must be letters, digits, _ . - (not starting with _ or .), at most 128 characters' });
      continue;
    }
    const tools: SeedEntryFile[] = [];
    for (const [name, raw] of Object.entries(isRecord(body['tools']) ? body['tools'] : {})) {
      if (!TOOL_NAME.test(name)) {
        skipped.push({ what: `${category}/${name}`, reason: 'a tool name must be letters, digits, _ . - (not starting with . or -), at most 128 characters' });
        continue;
      }
      if (!isRecord(raw)) {
        skipped.push({ what: `${category}/${name}`, reason: 'a tool must be an object with a description' });
        continue;
      }
      tools.push(seedEntryFile(name, raw));
    }
    categories.push({ name: category, description: typeof body['description'] === 'string' ? body['description'] : '', tools });
  }
  return { categories, skipped };
}

/** One seed tool as an entry file: the seed's keys kept, ours filled in. */
export function seedEntryFile(name: string, raw: Record<string, unknown>): SeedEntryFile {
  const entry: SeedEntryFile = { ...raw, name, description: typeof raw['description'] === 'string' ? raw['description'] : '' };
  entry['functions'] = strings(raw['functions']);
  entry['use_cases'] = strings(raw['use_cases']);
  if (typeof raw['mcp_server'] !== 'string' || raw['mcp_server'] === '') delete entry['mcp_server'];
  return entry;
}

/** The `typescript` of a description-only entry: what is known, and no callable signature. */
export function descriptionOnlySignature(entry: { name: string; mcp_server: string; functions: readonly string[] }): string {
  const lines = [
    `// ${entry.name}: description-only catalog entry (no input_schema), so there is no typed signature.`,
    `// It belongs to the MCP server "${entry.mcp_server}"; configure that server under mcpServers to call it as tools.SERVER.TOOL(args).`,
  ];
  if (entry.functions.length > 0) lines.push(`// Functions it offers: ${entry.functions.join(', ')}.`);
  return lines.join('\n');
}

/** A seed-format file at the top of the catalog folder, as the catalog serves it. */
export interface SeedBundle {
  /** Valid entries; each one's `file` is `BUNDLE#CATEGORY/TOOL`. */
  entries: ToolEntry[];
  /** Category descriptions the bundle gives. */
  descriptions: ReadonlyMap<string, string>;
  /** Tools left out, with their reasons (reported in stats). */
  skipped: { what: string; reason: string }[];
}

/** Parse a seed-format file dropped into the catalog folder (`rel` is its name there). */
export function parseSeedBundle(text: string, rel: string): Parsed<SeedBundle> {
  const parsed = parseSeedCatalog(text);
  if (!parsed.ok) return parsed;
  const entries: ToolEntry[] = [];
  const descriptions = new Map<string, string>();
  const skipped = [...parsed.value.skipped];
  for (const category of parsed.value.categories) {
    if (category.description) descriptions.set(category.name, category.description);
    for (const tool of category.tools) {
      const entry = entryFromData(tool, category.name, `${rel}#${category.name}/${tool.name}`);
      if (entry.ok) entries.push(entry.value);
      else skipped.push({ what: `${category.name}/${tool.name}`, reason: entry.reason });
    }
  }
  return { ok: true, value: { entries, descriptions, skipped } };
}
