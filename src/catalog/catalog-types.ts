// The catalog's contract: entry, search and stats shapes that the MCP front, the sandbox and
// the upstream client share. Kept apart from the implementation so callers import types only.
import type { Logger } from '../util/logger.js';
import { DaemonError } from '../util/daemon-error.js';

/** Where an entry came from: a catalog file, a live upstream MCP server, or a saved skill. */
export type ToolSource = 'catalog' | 'upstream' | 'skill';

/** How much of each tool a search returns. */
export type DetailLevel = 'name' | 'summary' | 'full';

export const DETAIL_LEVELS: readonly DetailLevel[] = ['name', 'summary', 'full'];

/** A JSON Schema object (the catalog does not constrain its dialect beyond draft-07 keywords). */
export type JsonSchema = { readonly [key: string]: unknown };

/** How a query was ranked (SearchResult.ranking). */
export type SearchRanking = 'semantic' | 'vectors' | 'lexical';

/** One tool, as the catalog holds it. Entries are frozen: never mutate one. */
export interface ToolEntry {
  /** Tool name as the server exposes it ('read_text_file'). Unique within its category. */
  readonly name: string;
  /** The folder under catalog/, the upstream server name, or 'skills'. */
  readonly category: string;
  readonly description: string;
  /** Server that provides the tool: the key of `tools.SERVER` in the sandbox, 'sandbox' for built-ins. */
  readonly mcp_server: string;
  /** How the tool is called from code, e.g. 'tools.github.create_issue(args)'. */
  readonly functions: readonly string[];
  /** Short task phrases the tool serves; indexed for search. */
  readonly use_cases: readonly string[];
  readonly input_schema: JsonSchema;
  readonly output_schema?: JsonSchema;
  /** A catalog entry without input_schema (the seed's format): described, not typed; no signature is made up for it. */
  readonly description_only?: boolean;
  readonly source: ToolSource;
  /** Catalog file, relative to the catalog folder ('github/create_issue.json'); catalog entries only. */
  readonly file?: string;
  /** Skills: the agent that wrote it; absent for the operator's library (skills put on disk by hand). */
  readonly author?: string;
  /** Skills: 'private' (its author only) or 'shared' (published to every agent that may read skills). */
  readonly visibility?: 'private' | 'shared';
}

/** What `setDynamicTools` takes: the category is the one being replaced. */
export type DynamicToolEntry = Omit<ToolEntry, 'category'>;

/** A full entry with its generated TypeScript signature (detail 'full' and `get`). */
export interface ToolDefinition extends ToolEntry {
  readonly typescript: string;
  readonly callable?: boolean;
  readonly why?: string;
  readonly mcp_server_config?: Readonly<Record<string, unknown>>;
  /** Other categories holding a tool of the same bare name, when the name was ambiguous. */
  readonly also_in?: readonly string[];
}

/**
 * Whether the caller can call a tool here and now. `why` says what stands in the way and
 * `mcp_server_config`, for a server nobody configured, is the `mcpServers` entry that adds it.
 */
export type Callability =
  | { readonly callable: true }
  | {
      readonly callable: false;
      readonly why: string;
      readonly mcp_server_config?: Readonly<Record<string, unknown>>;
      /** `why` for a list of results, where the configuration to add is given once (SearchResult.setup). */
      readonly brief?: string;
    };

/**
 * Who is looking at the catalog. Built once per request from the caller's identity
 * (src/sandbox-api/catalog-access.ts), it is the one place the visibility rule lives: every
 * discovery path (MCP tools, search_tools from code, the servers/ tree) passes one in.
 */
export interface CatalogViewer {
  /** Callers with equal keys see the same entries with the same callability (search cache key). */
  readonly key: string;
  /** Whether the entry exists for this caller; a hidden entry answers exactly like an unknown one. */
  visible(entry: ToolEntry): boolean;
  /** Whether the caller can call a visible entry now. */
  callability(entry: ToolEntry): Callability;
}

export interface ToolNameView {
  readonly name: string;
  readonly category: string;
  /** Present when a viewer was given: whether the caller can call it now. */
  readonly callable?: boolean;
  /** When not callable: what stands in the way, and how to fix it. */
  readonly why?: string;
  /** When the server is not configured: the `mcpServers` entry that adds it. */
  readonly mcp_server_config?: Readonly<Record<string, unknown>>;
}

export interface ToolSummaryView extends ToolNameView {
  readonly description: string;
  /** Left out of a compact line (SearchOptions.compact) where it equals `category`. */
  readonly mcp_server?: string;
  /** Present (true) when the entry has no input_schema: it can be read about, not called as typed. */
  readonly description_only?: boolean;
}

export type ToolView = ToolNameView | ToolSummaryView | ToolDefinition;

export interface SearchOptions {
  /** Free text; '' lists every tool alphabetically. */
  query: string;
  /** Only tools of this category. */
  category?: string | null;
  /** Default 'summary'. */
  detail_level?: DetailLevel;
  /** 1..100, default 10. */
  limit?: number;
  /** With a viewer: only tools the caller can call now. Default false (callable ones rank first). */
  callable_only?: boolean;
  /**
   * Summary and name lines leave out what they would only repeat: `mcp_server` where it equals
   * `category`, `callable` where it is true. Default false (the seed's four fields on every line).
   */
  compact?: boolean;
}

export interface SearchResult {
  readonly query: string;
  readonly category: string | null;
  readonly detail_level: DetailLevel;
  /** Number of tools returned (after `limit`). */
  readonly count: number;
  /**
   * How a non-empty query was ranked: 'semantic' (the sentence encoder's scores blended in),
   * 'vectors' (the shipped word vectors' scores blended in: the encoder not installed, off, or not
   * ready yet) or 'lexical' (no query word has a vector).
   */
  readonly ranking?: SearchRanking;
  /** Best first; ties broken by name, then category. */
  readonly tools: readonly ToolView[];
  /** 'weak' when no tool matches the query well: the tools are only the closest ones. */
  readonly match?: 'weak';
  /** With a weak match: what to do about it. */
  readonly note?: string;
  /** With a weak match: categories worth a search of their own. */
  readonly suggested_categories?: readonly string[];
  /** The mcpServers entries that would make listed tools callable, once per server. */
  readonly setup?: Readonly<Record<string, unknown>>;
}

export interface CategoryInfo {
  readonly description: string;
  readonly tool_count: number;
}

export interface CategoriesResult {
  readonly categories: Readonly<Record<string, CategoryInfo>>;
  readonly total_tools: number;
}

export interface InvalidFile {
  /** Relative to the catalog folder. */
  readonly file: string;
  readonly reason: string;
}

export interface CacheStats {
  readonly size: number;
  readonly max: number;
  readonly hits: number;
  readonly misses: number;
}

export interface CatalogStats {
  readonly total_tools: number;
  readonly categories: number;
  /** Catalog files currently contributing an entry (including a kept previous version). */
  readonly files_loaded: number;
  readonly invalid_files: readonly InvalidFile[];
  /** Time the last applied change (initial load, file batch or dynamic category) took, ms. */
  readonly last_reload_ms: number;
  /** Bumped on every change of the visible catalog. */
  readonly generation: number;
  readonly watching: boolean;
  /**
   * How search ranks now: 'semantic' (the sentence encoder), else 'vectors' (the shipped word
   * vectors) or 'lexical', and why not semantic (encoder missing, off, loading, vectors being made).
   */
  readonly ranking?: { readonly mode: SearchRanking; readonly tools_without_vectors: number; readonly why?: string };
  readonly cache: {
    readonly parsed_files: CacheStats;
    readonly search_results: CacheStats;
  };
}

/** Why the catalog changed. */
export type CatalogChangeReason = 'load' | 'files' | 'dynamic';

export interface CatalogChange {
  readonly generation: number;
  readonly reason: CatalogChangeReason;
  /** Categories whose tools or description changed, sorted. */
  readonly categories: readonly string[];
}

export type CatalogChangeListener = (change: CatalogChange) => void;

/** Stable codes of catalog failures. */
export type CatalogErrorCode =
  | 'TOOL_NOT_FOUND'
  | 'CATEGORY_NOT_FOUND'
  | 'INVALID_ARGUMENT'
  | 'INVALID_OPTION'
  | 'CATALOG_CLOSED';

/** The one error class of the catalog; `code` is stable, `message` says what to do. */
export class CatalogError extends DaemonError {
  override readonly name = 'CatalogError';
  declare readonly code: CatalogErrorCode;
  constructor(
    code: CatalogErrorCode,
    message: string,
    /** Close names, for TOOL_NOT_FOUND and CATEGORY_NOT_FOUND (qualified 'category.name' for tools). */
    readonly suggestions: readonly string[] = [],
  ) {
    super(code, message);
  }
}

/** How a Catalog is made (src/catalog/catalog.ts). */
export interface CatalogOptions {
  /** The catalog folder (`CATEGORY/TOOL.json` files). */
  dir: string;
  logger: Logger;
  /** Parsed catalog files kept in the LRU, keyed by path, size and times. Default 10,000. */
  cacheSize?: number;
  /** Search results kept in the LRU, keyed by catalog generation and query. Default 500. */
  resultCacheSize?: number;
  /** Window that gathers file events into one reload, ms. Default 50. */
  debounceMs?: number;
  /** Watch the folder for changes after loading. Default true. */
  watch?: boolean;
  /** Categories preferred, in order, when a bare tool name exists in several. Default ['sandbox']. */
  categoryOrder?: readonly string[];
  /** Called with the paths the folder watcher saw change (files; category folders end in '/'), to tell other daemons. */
  onFilesChanged?: (paths: string[]) => void;
  /** Semantic re-ranking with the process's sentence encoder; false: lexical only. Default true. */
  /**
   * Start the sentence encoder (about 130 MB) only when startSemanticModel() is called or a search
   * needs it, not when the catalog loads: a daemon nobody uses stays light (the daemon starts it
   * when the first MCP session opens, so the first search still finds it loaded or loading).
   */
  deferModel?: boolean;
  semanticSearch?: boolean;
  /**
   * Folder where tool vectors are cached on disk (vectors.bin), so a restart re-embeds nothing
   * that did not change. Default: none (kept for the process only). Vectors shipped with the
   * catalog folder (`.vectors.bin` in it) are read either way.
   */
  vectorCacheDir?: string;
}
