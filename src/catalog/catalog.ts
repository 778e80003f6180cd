// The tool catalog: catalog files loaded and hot-reloaded from disk, dynamic categories from
// upstream servers and skills, ranked search at three detail levels, and lookups with signatures.
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../util/logger.js';
import { CatalogFiles, WarnOnce } from './catalog-files.js';
import type { WatchBatch } from './catalog-watcher.js';
import { CatalogError } from './catalog-types.js';
import type { CatalogOptions } from './catalog-types.js';
export type { CatalogOptions } from './catalog-types.js';
import type {
  CatalogChange,
  CatalogChangeListener,
  CatalogChangeReason,
  CatalogStats,
  CatalogViewer,
  CategoriesResult,
  CategoryInfo,
  DynamicToolEntry,
  SearchOptions,
  SearchResult,
  ToolDefinition,
  ToolEntry,
} from './catalog-types.js';
import { rankAll, rankFor } from './catalog-ranking.js';
import { buildView, categoryComparator, EMPTY_VIEW } from './catalog-view.js';
import type { CatalogView, DynamicCategory } from './catalog-view.js';
import { normalizeDynamicEntry } from './entry-validation.js';
import { schemaToTypeScript } from './schema-to-typescript.js';
import { descriptionOnlySignature } from './seed-format.js';
import { lexicalEmbedder, sharedEmbedder } from './embedding-client.js';
import { entryId, ToolSearchIndex } from './search-index.js';
import { searchAnswer } from './search-answer.js';
import { catalogVectorStore } from './vector-store.js';
import { SNAPSHOT_FILE } from './search-snapshot.js';
import type { VectorStore } from './vector-store.js';
import { callabilityFields, checkInteger, checkSearchOptions, checkToolName, MAX_QUERY_CHARS } from './search-options.js';
import { closestNames } from './suggestions.js';

/** Longest a search waits for its query's vector (prepareSearch) before it ranks lexically, ms. */
export const PREPARE_WAIT_MS = 250;
/**
 * Longest a search waits while the model loads and every tool's vector is already at hand (a
 * fresh daemon's first query; the model took 1.4 s to load on two cores at a load of 24, more at times), ms.
 */
export const MODEL_LOAD_WAIT_MS = 5_000;


export { DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_CHARS } from './search-options.js';


export class Catalog {
  readonly #logger: Logger;
  readonly #warnings: WarnOnce;
  readonly #source: CatalogFiles;
  readonly #compareCategories: (a: string, b: string) => number;
  readonly #index: ToolSearchIndex;
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
  readonly #vectors: VectorStore | undefined;

  constructor(options: CatalogOptions) {
    if (typeof options.dir !== 'string' || options.dir.length === 0) {
      throw new CatalogError('INVALID_OPTION', 'dir must be a non-empty path to the catalog folder');
    }
    this.#vectors = options.semanticSearch === false ? undefined : catalogVectorStore(options.dir, options.vectorCacheDir, (error) => options.logger.warn({ err: error }, 'could not write the vector cache; vectors are kept in memory'));
    const snapshotFile = options.vectorCacheDir !== undefined ? path.join(options.vectorCacheDir, SNAPSHOT_FILE) : undefined;
    this.#index = new ToolSearchIndex(options.semanticSearch === false ? lexicalEmbedder : sharedEmbedder, this.#vectors, options.deferModel === true, snapshotFile !== undefined ? { snapshotFile } : {});
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
      ...(options.onFilesChanged ? { onWatchBatch: (batch: WatchBatch) => options.onFilesChanged?.(toPaths(batch)) } : {}),
    });
    const resultCacheSize = checkInteger(options.resultCacheSize, 'resultCacheSize', 1, 100_000, 500);
    this.#results = new LRUCache<string, SearchResult>({ max: resultCacheSize });
    this.#compareCategories = categoryComparator(options.categoryOrder ?? ['sandbox']);
  }

  /** Bumped on every visible change; callers may key derived data (file trees) on it. */
  get generation(): number {
    return this.#generation;
  }

  /**
   * Re-reads catalog paths another daemon reported changed (the change bus): files relative to the
   * folder, and category folders with a trailing '/'. Paths that leave the folder are ignored.
   */
  reloadPaths(paths: readonly string[]): Promise<void> {
    const files = new Set<string>();
    const dirs = new Set<string>();
    for (const p of paths) {
      if (typeof p !== 'string' || p === '' || p.startsWith('/') || p.split('/').some((part) => part === '..' || part.startsWith('.'))) continue;
      if (p.endsWith('/')) {
        const dir = p.slice(0, -1);
        if (dir !== '' && !dir.includes('/')) dirs.add(dir);
      } else files.add(p);
    }
    if (files.size === 0 && dirs.size === 0) return Promise.resolve();
    return this.#source.reloadPaths({ files, dirs });
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
    const added = [...view.byId].filter(([id, entry]) => before.byId.get(id) !== entry).map(([, entry]) => entry);
    this.#index.addAll(added);
    for (const entry of added) changed.add(entry.category);
    for (const conflict of view.conflicts) {
      this.#warnings.warn(`conflict:${conflict.file}`, 'CATALOG_DUPLICATE_TOOL', { ...conflict }, 'duplicate tool in catalog; the file is ignored');
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

  /** The `mcpServers` entry that adds a category's server (from its `_category.json`), if any. */
  categorySetup(category: string): Readonly<Record<string, unknown>> | null {
    return this.#source.categorySetup(category);
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

  /** Categories the viewer sees: those holding at least one entry visible to it (all without a viewer). */
  #categoryNames(viewer: CatalogViewer | undefined): string[] {
    const names = [...this.#view.byCategory.keys()];
    return viewer ? names.filter((c) => this.#view.byCategory.get(c)?.some((e) => viewer.visible(e))) : names;
  }

  #resolveCategory(category: string, viewer: CatalogViewer | undefined): string {
    const names = this.#categoryNames(viewer);
    if (names.includes(category)) return category;
    const lower = category.toLowerCase();
    const match = names.find((c) => c.toLowerCase() === lower);
    if (match) return match;
    const suggestions = closestNames(category, names.map((c) => ({ label: c, keys: [c] })));
    const hint = suggestions.length > 0 ? ` Did you mean: ${suggestions.join(', ')}?` : '';
    throw new CatalogError('CATEGORY_NOT_FOUND', `Unknown category "${category}".${hint} Call list_tool_categories to see them all.`, suggestions);
  }

  /** Starts the sentence encoder if it was deferred (CatalogOptions.deferModel); a no-op otherwise. */
  startSemanticModel(): void {
    this.#index.startModel();
  }

  /**
   * Optional, before `search`: embeds the query for semantic ranking off the event loop, so the
   * search that follows does not block waiting for the sentence encoder.
   */
  prepareSearch(query: string): Promise<void> {
    if (typeof query !== 'string' || query.trim() === '' || query.length > MAX_QUERY_CHARS) return Promise.resolve();
    // A busy or slow encoder delays the answer by at most this much; the search is then lexical.
    const preparing = this.#index.prepare(query); // starts the model if it is not yet
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.#index.semanticLoading ? MODEL_LOAD_WAIT_MS : PREPARE_WAIT_MS);
    });
    return Promise.race([preparing, bound]).finally(() => clearTimeout(timer));
  }

  /**
   * Ranked search; an empty query lists tools alphabetically. With a viewer, only entries it sees
   * are considered, each says whether the viewer can call it, and callable ones rank first
   * (`callable_only` drops the rest). Results are cached per generation and viewer key.
   */
  search(options: SearchOptions, viewer?: CatalogViewer): SearchResult {
    const { query, detail, limit } = checkSearchOptions(options);
    const callableOnly = options.callable_only === true;
    const compact = options.compact === true;
    const category = options.category === undefined || options.category === null || options.category === '' ? null : this.#resolveCategory(options.category, viewer);

    const key = `${this.#generation}.${this.#index.rankingVersion}${compact ? 'c' : ''}\u0000${viewer?.key ?? ''}\u0000${callableOnly ? 1 : 0}\u0000${category ?? ''}\u0000${detail}\u0000${limit}\u0000${query}`;
    const cached = this.#results.get(key);
    if (cached) {
      this.#resultHits++;
      return cached;
    }
    this.#resultMisses++;
    const ranked = viewer ? rankFor(this.#view, this.#index, viewer, query, category, limit, callableOnly) : rankAll(this.#view, this.#index, query, category, limit);
    const info = query.trim() === '' ? undefined : this.#index.lastRanking;
    const result = searchAnswer({ query, category, detail, compact, ranked, info, viewer, definition: (e) => this.definition(e), categories: (v) => this.#categoryNames(v) });
    // Lexical only because this query's vector was not ready: the next search may do better.
    if (info?.ranking !== 'lexical' || !this.#index.semanticReady) this.#results.set(key, result);
    return result;
  }

  /**
   * The full definition of a tool. `toolName` may be bare ('read_file') or qualified
   * ('filesystem.read_text_file'). A bare name in several categories resolves to the one given,
   * else to the first in category order, and `also_in` lists the others.
   * Throws CatalogError TOOL_NOT_FOUND, with the closest names, when there is no such tool.
   */
  get(toolName: string, category?: string | null, viewer?: CatalogViewer): ToolDefinition {
    const name = checkToolName(toolName);
    // A hidden entry is looked past exactly as if it did not exist.
    const seen = (entry: ToolEntry | undefined): ToolEntry | undefined => (entry && (!viewer || viewer.visible(entry)) ? entry : undefined);
    const seenAll = (list: readonly ToolEntry[] | undefined): readonly ToolEntry[] | undefined => {
      const kept = viewer && list ? list.filter((e) => viewer.visible(e)) : list;
      return kept && kept.length > 0 ? kept : undefined;
    };
    const answer = (definition: ToolDefinition, entry: ToolEntry): ToolDefinition =>
      viewer ? Object.freeze({ ...definition, ...callabilityFields(viewer.callability(entry)) }) : definition;
    if (category !== undefined && category !== null && category !== '') {
      const resolved = this.#resolveCategory(category, viewer);
      const bare = name.startsWith(`${resolved}.`) ? name.slice(resolved.length + 1) : name;
      const entry = seen(this.find(resolved, bare)) ?? seenAll(this.#view.byCategory.get(resolved))?.find((e) => e.name.toLowerCase() === bare.toLowerCase());
      if (entry) return answer(this.definition(entry), entry);
      throw this.#notFound(name, resolved, viewer);
    }
    for (let dot = name.indexOf('.'); dot > 0; dot = name.indexOf('.', dot + 1)) {
      const entry = seen(this.find(name.slice(0, dot), name.slice(dot + 1)));
      if (entry) return answer(this.definition(entry), entry);
    }
    const same = seenAll(this.#view.byName.get(name)) ?? seenAll(this.#view.byLowerName.get(name.toLowerCase()));
    const first = same?.[0];
    if (!same || !first) throw this.#notFound(name, null, viewer);
    if (same.length === 1) return answer(this.definition(first), first);
    return answer(Object.freeze({ ...this.definition(first), also_in: same.slice(1).map((e) => e.category) }), first);
  }

  #notFound(name: string, category: string | null, viewer: CatalogViewer | undefined): CatalogError {
    const bare = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1) : name;
    const visible = (e: ToolEntry): boolean => !viewer || viewer.visible(e);
    const elsewhere = (this.#view.byName.get(bare) ?? []).filter(visible).map((e) => `${e.category}.${e.name}`);
    // The typed category's words steer the related search only when it is a category the caller
    // sees: a hidden one must answer exactly as a made-up one (and neither names a topic).
    const prefix = name.includes('.') ? name.slice(0, name.lastIndexOf('.')) : '';
    const seenCategory = prefix !== '' && (this.#view.byCategory.get(prefix) ?? []).some(visible);
    const query = (seenCategory ? name : bare).replace(/[._-]+/g, ' ');
    const related = (viewer ? rankFor(this.#view, this.#index, viewer, query, null, 3, false) : rankAll(this.#view, this.#index, query, null, 3)).map((r) => r.entry);
    const searched = related.map((e) => `${e.category}.${e.name}`);
    const candidates = this.#view.sorted.filter(visible).map((e) => ({ label: `${e.category}.${e.name}`, keys: [e.name, `${e.category}.${e.name}`] }));
    const suggestions = [...elsewhere, ...closestNames(name, candidates, searched)].filter((s, i, all) => all.indexOf(s) === i).slice(0, 3);
    const where = category ? ` in category "${category}"` : '';
    const hint = suggestions.length > 0 ? ` Did you mean: ${suggestions.join(', ')}?` : '';
    return new CatalogError('TOOL_NOT_FOUND', `Unknown tool "${name}"${where}.${hint} Call search_tools to find tools by what they do.`, suggestions);
  }

  /**
   * Every category with its description and tool count, alphabetical. With a viewer, counts are
   * of the entries it sees, and a category where it sees none is not listed.
   */
  categories(viewer?: CatalogViewer): CategoriesResult {
    const categories: Record<string, CategoryInfo> = {};
    let total = 0;
    for (const category of [...this.#view.byCategory.keys()].sort()) {
      const entries = this.#view.byCategory.get(category) ?? [];
      const count = viewer ? entries.filter((e) => viewer.visible(e)).length : entries.length;
      if (viewer && count === 0) continue;
      categories[category] = { description: this.describeCategory(category), tool_count: count };
      total += count;
    }
    return { categories, total_tools: total };
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
      ranking: this.#index.rankingStatus,
      cache: {
        parsed_files: this.#source.cacheStats(),
        search_results: { size: this.#results.size, max: this.#results.max, hits: this.#resultHits, misses: this.#resultMisses },
      },
    };
  }

  /** Stop watching, wait for a reload in progress, and write new vectors to the cache. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= Promise.all([this.#source.close(), this.#vectors?.flush(), this.#index.snapshotWritten()]).then(() => undefined);
    return this.#closed;
  }

  /** Tools the search index analysed itself since it started (not read back from its snapshot). */
  get toolsIndexed(): number {
    return this.#index.toolsIndexed;
  }
}

/** A watcher batch as paths: files as they are, category folders with a trailing '/'. */
function toPaths(batch: WatchBatch): string[] {
  return [...batch.files, ...[...batch.dirs].map((d) => `${d}/`)];
}
