// The tool catalog: catalog files loaded and hot-reloaded from disk, dynamic categories from
// upstream servers and skills, ranked search at three detail levels, and lookups with signatures.
import { performance } from 'node:perf_hooks';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../util/logger.js';
import { CatalogFiles, WarnOnce } from './catalog-files.js';
import { CatalogError, DETAIL_LEVELS } from './catalog-types.js';
import type {
  CatalogChange,
  CatalogChangeListener,
  CatalogChangeReason,
  CatalogStats,
  CategoriesResult,
  CategoryInfo,
  DetailLevel,
  DynamicToolEntry,
  SearchOptions,
  SearchResult,
  ToolDefinition,
  ToolEntry,
  ToolView,
} from './catalog-types.js';
import { buildView, categoryComparator, compareEntries, EMPTY_VIEW } from './catalog-view.js';
import type { CatalogView, DynamicCategory } from './catalog-view.js';
import { normalizeDynamicEntry } from './entry-validation.js';
import { schemaToTypeScript } from './schema-to-typescript.js';
import { descriptionOnlySignature } from './seed-format.js';
import { entryId, ToolSearchIndex } from './search-index.js';
import { closestNames } from './suggestions.js';

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
}

export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;
export const MAX_QUERY_CHARS = 1_000;
const MAX_NAME_CHARS = 300;

/** Scores within a relative 1e-9 are a tie (float noise); ties are ordered by name. */
function sameScore(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
}

function checkInteger(value: number | undefined, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new CatalogError('INVALID_OPTION', `${name} must be an integer between ${min} and ${max}`);
  }
  return value;
}

export class Catalog {
  readonly #logger: Logger;
  readonly #warnings: WarnOnce;
  readonly #source: CatalogFiles;
  readonly #compareCategories: (a: string, b: string) => number;
  readonly #index = new ToolSearchIndex();
  readonly #results: LRUCache<string, SearchResult>;
  #resultHits = 0;
  #resultMisses = 0;
  readonly #definitions = new WeakMap<ToolEntry, ToolDefinition>();
  readonly #dynamic = new Map<string, DynamicCategory>();
  #view: CatalogView = EMPTY_VIEW;
  #generation = 0;
  #lastReloadMs = 0;
  readonly #listeners = new Set<CatalogChangeListener>();
  #started: Promise<void> | null = null;
  #closed: Promise<void> | null = null;

  constructor(options: CatalogOptions) {
    if (typeof options.dir !== 'string' || options.dir.length === 0) {
      throw new CatalogError('INVALID_OPTION', 'dir must be a non-empty path to the catalog folder');
    }
    this.#logger = options.logger;
    this.#warnings = new WarnOnce(options.logger);
    this.#source = new CatalogFiles({
      dir: options.dir,
      logger: options.logger,
      warnings: this.#warnings,
      cacheSize: checkInteger(options.cacheSize, 'cacheSize', 1, 1_000_000, 10_000),
      debounceMs: checkInteger(options.debounceMs, 'debounceMs', 0, 10_000, 50),
      watch: options.watch ?? true,
      onApplied: (reason, described, started) => this.#commit(reason, started, described),
    });
    const resultCacheSize = checkInteger(options.resultCacheSize, 'resultCacheSize', 1, 100_000, 500);
    this.#results = new LRUCache<string, SearchResult>({ max: resultCacheSize });
    this.#compareCategories = categoryComparator(options.categoryOrder ?? ['sandbox']);
  }

  /** Bumped on every visible change; callers may key derived data (file trees) on it. */
  get generation(): number {
    return this.#generation;
  }

  /** Load every catalog file, then watch the folder. Calling it again returns the same promise. */
  start(): Promise<void> {
    if (this.#closed) return Promise.reject(new CatalogError('CATALOG_CLOSED', 'the catalog is closed; create a new one'));
    this.#started ??= this.#source.start();
    return this.#started;
  }

  /**
   * Rebuild the view, bring the index up to date, and announce the change if there was one.
   * `changed` holds categories known to have changed besides their tools (descriptions).
   */
  #commit(reason: CatalogChangeReason, started: number, changed: Set<string>): void {
    const before = this.#view;
    const view = buildView(this.#source.files, this.#dynamic, this.#compareCategories);
    for (const [id, entry] of before.byId) {
      if (!view.byId.has(id)) {
        this.#index.remove(id);
        changed.add(entry.category);
      }
    }
    for (const [id, entry] of view.byId) {
      if (before.byId.get(id) !== entry) {
        this.#index.add(entry);
        changed.add(entry.category);
      }
    }
    for (const conflict of view.conflicts) {
      this.#warnings.warn(`conflict:${conflict.file}`, 'CATALOG_DUPLICATE_TOOL', { ...conflict }, 'duplicate tool in catalog; the file is ignored');
    }
    for (const category of view.shadowed) {
      this.#warnings.warn(`shadow:${category}`, 'CATALOG_CATEGORY_REPLACED', { category }, 'a dynamic category replaces the catalog folder of the same name');
    }
    this.#view = view;
    this.#lastReloadMs = performance.now() - started;
    if (changed.size === 0 && reason !== 'load') return;
    this.#generation++;
    this.#results.clear();
    const change: CatalogChange = { generation: this.#generation, reason, categories: [...changed].sort() };
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch (error) {
        this.#logger.warn({ code: 'CATALOG_LISTENER_FAILED', err: error }, 'a catalog change listener threw');
      }
    }
  }

  /**
   * Replace a dynamic category (an upstream server's live tools, or 'skills'); null removes it.
   * A tool without a usable name is skipped and logged; duplicates keep the first.
   */
  setDynamicTools(category: string, entries: readonly DynamicToolEntry[] | null, description?: string): void {
    if (typeof category !== 'string' || category.length === 0 || category.length > 128 || [...category].some((ch) => ch < ' ' || ch === '/' || ch === '\\')) {
      throw new CatalogError('INVALID_ARGUMENT', 'category must be a name of 1 to 128 characters without slashes or control characters');
    }
    if (this.#closed) return;
    const started = performance.now();
    const changed = new Set([category]);
    if (entries === null) {
      if (!this.#dynamic.delete(category)) return;
    } else {
      const seen = new Set<string>();
      const normalized: ToolEntry[] = [];
      for (const raw of entries) {
        const result = normalizeDynamicEntry(raw, category);
        if (!result.ok) {
          this.#warnings.warn(`dynamic:${category}:${String((raw as { name?: unknown }).name)}`, 'CATALOG_INVALID_DYNAMIC_TOOL', { category, reason: result.reason }, 'skipping a dynamic tool');
          continue;
        }
        if (seen.has(result.value.name)) continue;
        seen.add(result.value.name);
        normalized.push(result.value);
      }
      this.#dynamic.set(category, { entries: normalized, description: description ?? null });
    }
    this.#commit('dynamic', started, changed);
  }

  /** Be told after each change of the visible catalog. Returns a function that unsubscribes. */
  onChange(listener: CatalogChangeListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** The entry of `name` in `category`, exact names, or undefined. */
  find(category: string, name: string): ToolEntry | undefined {
    return this.#view.byId.get(entryId(category, name));
  }

  /** Entries of one category (or all), by name. */
  list(category?: string): readonly ToolEntry[] {
    return category === undefined ? this.#view.sorted : (this.#view.byCategory.get(category) ?? []);
  }

  /** A category's description: `_category.json`, the one given with its dynamic tools, or generated. */
  describeCategory(category: string): string {
    const fromFile = this.#source.categoryDescription(category);
    const dynamic = this.#dynamic.get(category);
    if (dynamic) return dynamic.description ?? (category === 'skills' ? 'Saved skills: reusable code loaded with import_skill.' : `Live tools of the upstream MCP server "${category}".`);
    return fromFile ?? `Tools of the ${category} MCP server.`;
  }

  /** The full entry with its TypeScript signature. */
  definition(entry: ToolEntry): ToolDefinition {
    let definition = this.#definitions.get(entry);
    if (!definition) {
      definition = Object.freeze({ ...entry, typescript: entry.description_only ? descriptionOnlySignature(entry) : schemaToTypeScript(entry) });
      this.#definitions.set(entry, definition);
    }
    return definition;
  }

  #resolveCategory(category: string): string {
    if (this.#view.byCategory.has(category)) return category;
    const lower = category.toLowerCase();
    const match = [...this.#view.byCategory.keys()].find((c) => c.toLowerCase() === lower);
    if (match) return match;
    const suggestions = closestNames(category, [...this.#view.byCategory.keys()].map((c) => ({ label: c, keys: [c] })));
    const hint = suggestions.length > 0 ? ` Did you mean: ${suggestions.join(', ')}?` : '';
    throw new CatalogError('CATEGORY_NOT_FOUND', `Unknown category "${category}".${hint} Call list_tool_categories to see them all.`, suggestions);
  }

  /** Ranked search; an empty query lists tools alphabetically. Results are cached per generation. */
  search(options: SearchOptions): SearchResult {
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
    const category = options.category === undefined || options.category === null || options.category === '' ? null : this.#resolveCategory(options.category);

    const key = `${this.#generation}\u0000${category ?? ''}\u0000${detail}\u0000${limit}\u0000${query}`;
    const cached = this.#results.get(key);
    if (cached) {
      this.#resultHits++;
      return cached;
    }
    this.#resultMisses++;
    const entries = this.#rank(query, category, limit);
    const result: SearchResult = Object.freeze({
      query,
      category,
      detail_level: detail,
      count: entries.length,
      tools: Object.freeze(entries.map((entry) => this.#toView(entry, detail))),
    });
    this.#results.set(key, result);
    return result;
  }

  /** The best `limit` entries for a query, best first; an empty query lists alphabetically. */
  #rank(query: string, category: string | null, limit: number): ToolEntry[] {
    if (query.trim() === '') return (category === null ? this.#view.sorted : (this.#view.byCategory.get(category) ?? [])).slice(0, limit);
    // Hits come sorted by score: take the first `limit` and whatever ties with the last of them,
    // then order that short list by score and name. A broad query may match thousands of tools;
    // none past the cut is looked at.
    const picked: { entry: ToolEntry; score: number }[] = [];
    for (const hit of this.#index.search(query, category ?? undefined)) {
      const last = picked[picked.length - 1];
      if (picked.length >= limit && last && !sameScore(hit.score, last.score)) break;
      const entry = this.#view.byId.get(String(hit.id));
      if (entry) picked.push({ entry, score: hit.score });
    }
    return picked
      .sort((a, b) => (sameScore(a.score, b.score) ? compareEntries(a.entry, b.entry) : b.score - a.score))
      .slice(0, limit)
      .map((s) => s.entry);
  }

  #toView(entry: ToolEntry, detail: DetailLevel): ToolView {
    if (detail === 'name') return { name: entry.name, category: entry.category };
    if (detail === 'summary') {
      return { name: entry.name, category: entry.category, description: entry.description, mcp_server: entry.mcp_server, ...(entry.description_only ? { description_only: true } : {}) };
    }
    return this.definition(entry);
  }

  /**
   * The full definition of a tool. `toolName` may be bare ('read_file') or qualified
   * ('filesystem.read_text_file'). A bare name in several categories resolves to the one given,
   * else to the first in category order, and `also_in` lists the others.
   * Throws CatalogError TOOL_NOT_FOUND, with the closest names, when there is no such tool.
   */
  get(toolName: string, category?: string | null): ToolDefinition {
    if (typeof toolName !== 'string' || toolName.trim() === '' || toolName.length > MAX_NAME_CHARS) {
      throw new CatalogError('INVALID_ARGUMENT', `tool_name must be a non-empty string of at most ${MAX_NAME_CHARS} characters`);
    }
    const name = toolName.trim();
    if (category !== undefined && category !== null && category !== '') {
      const resolved = this.#resolveCategory(category);
      const bare = name.startsWith(`${resolved}.`) ? name.slice(resolved.length + 1) : name;
      const entry = this.find(resolved, bare) ?? this.#view.byCategory.get(resolved)?.find((e) => e.name.toLowerCase() === bare.toLowerCase());
      if (entry) return this.definition(entry);
      throw this.#notFound(name, resolved);
    }
    for (let dot = name.indexOf('.'); dot > 0; dot = name.indexOf('.', dot + 1)) {
      const entry = this.find(name.slice(0, dot), name.slice(dot + 1));
      if (entry) return this.definition(entry);
    }
    const same = this.#view.byName.get(name) ?? this.#view.byLowerName.get(name.toLowerCase());
    const first = same?.[0];
    if (!same || !first) throw this.#notFound(name, null);
    if (same.length === 1) return this.definition(first);
    return Object.freeze({ ...this.definition(first), also_in: same.slice(1).map((e) => e.category) });
  }

  #notFound(name: string, category: string | null): CatalogError {
    const bare = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1) : name;
    const elsewhere = (this.#view.byName.get(bare) ?? []).map((e) => `${e.category}.${e.name}`);
    const searched = this.#rank(name.replace(/[._-]+/g, ' '), null, 3).map((e) => `${e.category}.${e.name}`);
    const candidates = this.#view.sorted.map((e) => ({ label: `${e.category}.${e.name}`, keys: [e.name, `${e.category}.${e.name}`] }));
    const suggestions = [...elsewhere, ...closestNames(name, candidates, searched)].filter((s, i, all) => all.indexOf(s) === i).slice(0, 3);
    const where = category ? ` in category "${category}"` : '';
    const hint = suggestions.length > 0 ? ` Did you mean: ${suggestions.join(', ')}?` : '';
    return new CatalogError('TOOL_NOT_FOUND', `Unknown tool "${name}"${where}.${hint} Call search_tools to find tools by what they do.`, suggestions);
  }

  /** Every category with its description and tool count, alphabetical. */
  categories(): CategoriesResult {
    const categories: Record<string, CategoryInfo> = {};
    for (const category of [...this.#view.byCategory.keys()].sort()) {
      categories[category] = { description: this.describeCategory(category), tool_count: this.#view.byCategory.get(category)?.length ?? 0 };
    }
    return { categories, total_tools: this.#view.byId.size };
  }

  stats(): CatalogStats {
    const invalid = [...this.#source.invalidFiles(), ...this.#view.conflicts];
    invalid.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
    return {
      total_tools: this.#view.byId.size,
      categories: this.#view.byCategory.size,
      files_loaded: this.#source.loadedCount(),
      invalid_files: invalid,
      last_reload_ms: Math.round(this.#lastReloadMs * 1000) / 1000,
      generation: this.#generation,
      watching: this.#source.watching,
      cache: {
        parsed_files: this.#source.cacheStats(),
        search_results: { size: this.#results.size, max: this.#results.max, hits: this.#resultHits, misses: this.#resultMisses },
      },
    };
  }

  /** Stop watching and wait for a reload in progress. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= this.#source.close();
    return this.#closed;
  }
}
