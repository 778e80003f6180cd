// Checks of what callers hand the catalog (search options, tool names, construction options) and
// the small pure helpers of ranking: kept apart so catalog.ts holds only the catalog itself.
import { CatalogError, DETAIL_LEVELS } from './catalog-types.js';
import type { Callability, DetailLevel, SearchOptions, ToolDefinition } from './catalog-types.js';

export const DEFAULT_LIMIT = 10;
/** search_tools' default limit in the `minimal` tool profile (SPEC: MCP tools). */
export const MINIMAL_LIMIT = 5;

/**
 * What a tool profile changes in search_tools (MCP and from code): the default limit (5 in
 * `minimal`), and whether summary lines leave out what they would only repeat (every profile but
 * `seed`, which keeps the seed's four fields on every line).
 */
export function profileSearchDefaults(profile: string | undefined): { limit: number; compact: boolean } {
  const p = profile ?? 'seed';
  return { limit: p === 'minimal' ? MINIMAL_LIMIT : DEFAULT_LIMIT, compact: p !== 'seed' };
}
export const MAX_LIMIT = 100;
export const MAX_QUERY_CHARS = 1_000;
const MAX_NAME_CHARS = 300;

/** Scores within a relative 1e-9 are a tie (float noise); ties are ordered by name. */
export function sameScore(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
}

export function checkInteger(value: number | undefined, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new CatalogError('INVALID_OPTION', `${name} must be an integer between ${min} and ${max}`);
  }
  return value;
}

/** The query, detail level and limit of a search, checked, with their defaults. */
export function checkSearchOptions(options: SearchOptions): { query: string; detail: DetailLevel; limit: number } {
  const query = options.query ?? '';
  if (typeof query !== 'string') throw new CatalogError('INVALID_ARGUMENT', 'query must be a string');
  if (query.length > MAX_QUERY_CHARS) throw new CatalogError('INVALID_ARGUMENT', `query must be at most ${MAX_QUERY_CHARS} characters`);
  const detail: DetailLevel = options.detail_level ?? 'summary';
  if (!DETAIL_LEVELS.includes(detail)) {
    throw new CatalogError('INVALID_ARGUMENT', `detail_level must be one of ${DETAIL_LEVELS.map((d) => `"${d}"`).join(', ')}`);
  }
  const limit = options.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new CatalogError('INVALID_ARGUMENT', `limit must be an integer between 1 and ${MAX_LIMIT}`);
  }
  return { query, detail, limit };
}

/** A tool name as given to `get`, trimmed. */
export function checkToolName(toolName: string): string {
  if (typeof toolName !== 'string' || toolName.trim() === '' || toolName.length > MAX_NAME_CHARS) {
    throw new CatalogError('INVALID_ARGUMENT', `tool_name must be a non-empty string of at most ${MAX_NAME_CHARS} characters`);
  }
  return toolName.trim();
}

/** The fields a view gains from a viewer's verdict (none without a viewer). */
export function callabilityFields(callability: Callability | undefined, inList = false): Pick<ToolDefinition, 'callable' | 'why' | 'mcp_server_config'> {
  if (!callability) return {};
  if (callability.callable) return { callable: true };
  // In a list the configuration is given once per server (SearchResult.setup), not per tool.
  if (inList && callability.brief !== undefined) return { callable: false, why: callability.brief };
  return { callable: false, why: callability.why, ...(callability.mcp_server_config ? { mcp_server_config: callability.mcp_server_config } : {}) };
}
