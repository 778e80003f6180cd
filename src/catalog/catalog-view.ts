// The visible catalog at one generation: catalog files and dynamic categories merged into lookup
// tables. A new view per change, built in one pass over the entries; the ordered tables follow
// on first use. The search index is not rebuilt but updated by difference (catalog.ts).
import type { InvalidFile, ToolEntry } from './catalog-types.js';
import { entryId } from './search-index.js';

/** A catalog file's state: its last valid entry (kept when a later version is broken) and error. */
export interface FileState {
  readonly category: string;
  readonly entry: ToolEntry | null;
  readonly error: string | null;
}

export interface DynamicCategory {
  readonly entries: readonly ToolEntry[];
  readonly description: string | null;
}

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Sort key of the listing order (name case-insensitively, then name, then category). */
const sortKey = (e: ToolEntry): string => `${e.name.toLowerCase()}\u0000${e.name}\u0000${e.category}`;

/** Order of entries in listings and of equal scores: name, then category. */
export function compareEntries(a: ToolEntry, b: ToolEntry): number {
  return compareText(sortKey(a), sortKey(b));
}

/** Category precedence for ambiguous bare names: the configured ones first, then alphabetical. */
export function categoryComparator(preferred: readonly string[]): (a: string, b: string) => number {
  const rank = (c: string): number => {
    const i = preferred.indexOf(c);
    return i === -1 ? preferred.length : i;
  };
  return (a, b) => rank(a) - rank(b) || compareText(a, b);
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * The visible catalog at one generation. Only `byId` is built eagerly, in one pass, because
 * every change needs it to update the search index; the ordered tables are built on first use
 * and kept for the generation, so a file change on a 10,000-tool catalog stays cheap.
 */
export class CatalogView {
  readonly byId: ReadonlyMap<string, ToolEntry>;
  /** Catalog files whose valid entry lost to another file defining the same tool. */
  readonly conflicts: readonly InvalidFile[];
  /** Static categories a dynamic category of the same name replaces (curated entries merged in). */
  readonly shadowed: readonly string[];
  readonly #dynamicCategories: readonly string[];
  readonly #compareCategories: (a: string, b: string) => number;
  #sorted: readonly ToolEntry[] | null = null;
  #byCategory: ReadonlyMap<string, readonly ToolEntry[]> | null = null;
  #byName: ReadonlyMap<string, readonly ToolEntry[]> | null = null;
  #byLowerName: ReadonlyMap<string, readonly ToolEntry[]> | null = null;

  constructor(
    byId: ReadonlyMap<string, ToolEntry>,
    conflicts: readonly InvalidFile[],
    shadowed: readonly string[],
    dynamicCategories: readonly string[],
    compareCategories: (a: string, b: string) => number,
  ) {
    this.byId = byId;
    this.conflicts = conflicts;
    this.shadowed = shadowed;
    this.#dynamicCategories = dynamicCategories;
    this.#compareCategories = compareCategories;
  }

  /** Every entry, by name then category. */
  get sorted(): readonly ToolEntry[] {
    if (!this.#sorted) {
      const keyed = [...this.byId.values()].map((entry) => ({ key: sortKey(entry), entry }));
      keyed.sort((a, b) => compareText(a.key, b.key));
      this.#sorted = keyed.map((k) => k.entry);
    }
    return this.#sorted;
  }

  /** Entries of each category, by name (dynamic categories listed even when empty). */
  get byCategory(): ReadonlyMap<string, readonly ToolEntry[]> {
    if (!this.#byCategory) {
      const map = new Map<string, ToolEntry[]>();
      for (const entry of this.sorted) push(map, entry.category, entry);
      for (const category of this.#dynamicCategories) if (!map.has(category)) map.set(category, []);
      this.#byCategory = map;
    }
    return this.#byCategory;
  }

  /** Entries of each bare name, in category order. */
  get byName(): ReadonlyMap<string, readonly ToolEntry[]> {
    this.#byName ??= this.#groupBy((e) => e.name);
    return this.#byName;
  }

  /** The same, keyed by lower-case name, for case-insensitive lookups. */
  get byLowerName(): ReadonlyMap<string, readonly ToolEntry[]> {
    this.#byLowerName ??= this.#groupBy((e) => e.name.toLowerCase());
    return this.#byLowerName;
  }

  #groupBy(key: (e: ToolEntry) => string): Map<string, ToolEntry[]> {
    const map = new Map<string, ToolEntry[]>();
    for (const entry of this.byId.values()) push(map, key(entry), entry);
    const order = (a: ToolEntry, b: ToolEntry): number => this.#compareCategories(a.category, b.category) || compareText(a.name, b.name);
    for (const list of map.values()) if (list.length > 1) list.sort(order);
    return map;
  }
}

export const EMPTY_VIEW = new CatalogView(new Map(), [], [], [], compareText);

/**
 * Merge file entries and dynamic categories. A dynamic category replaces a static category of
 * the same name: a live server's own tool list is the truth (a stale static entry would invite
 * calls the server cannot answer), but a curated entry of a tool the server does list is merged
 * into the live one, so its better description and use cases keep serving search. Two files defining one tool: the file whose path
 * sorts first wins, whatever order the files were read in.
 */
export function buildView(
  files: ReadonlyMap<string, FileState>,
  dynamic: ReadonlyMap<string, DynamicCategory>,
  compareCategories: (a: string, b: string) => number,
): CatalogView {
  const byId = new Map<string, ToolEntry>();
  const clashes = new Map<string, string[]>();
  const shadowed = new Set<string>();
  // Curated entries of a category a live server replaces: merged into its live tools of the same name.
  const curated = new Map<string, ToolEntry>();
  for (const [rel, state] of files) {
    const entry = state.entry;
    if (!entry) continue;
    if (dynamic.has(entry.category)) {
      shadowed.add(entry.category);
      const id = entryId(entry.category, entry.name);
      const first = curated.get(id);
      if (!first || compareText(rel, first.file ?? '') < 0) curated.set(id, entry);
      continue;
    }
    const id = entryId(entry.category, entry.name);
    const first = byId.get(id);
    if (!first) {
      byId.set(id, entry);
      continue;
    }
    push(clashes, id, rel);
    if (compareText(rel, first.file ?? '') < 0) {
      push(clashes, id, first.file ?? '');
      byId.set(id, entry);
    }
  }
  const conflicts: InvalidFile[] = [];
  for (const [id, rels] of clashes) {
    const winner = byId.get(id) as ToolEntry;
    for (const rel of new Set(rels)) {
      if (rel === winner.file) continue;
      conflicts.push({ file: rel, reason: `duplicate tool "${winner.name}" in category "${winner.category}": ${winner.file ?? 'another file'} defines it first` });
    }
  }
  conflicts.sort((a, b) => compareText(a.file, b.file));
  for (const { entries } of dynamic.values()) {
    for (const entry of entries) {
      const id = entryId(entry.category, entry.name);
      const curatedEntry = curated.get(id);
      byId.set(id, curatedEntry && entry.source === 'upstream' ? mergeCurated(entry, curatedEntry) : entry);
    }
  }
  return new CatalogView(byId, conflicts, [...shadowed].sort(compareText), [...dynamic.keys()], compareCategories);
}

/** Merged entries by live entry, so an unchanged pair keeps its object (the index updates by identity). */
const merged = new WeakMap<ToolEntry, { curated: ToolEntry; entry: ToolEntry }>();

/**
 * A live upstream tool with the curated entry of the same name folded in: the live name, server
 * and schemas (what the server really takes), the curated description, functions and use cases
 * (written for search, and what made "remember a fact about a person" find the memory tools).
 */
export function mergeCurated(live: ToolEntry, curatedEntry: ToolEntry): ToolEntry {
  const known = merged.get(live);
  if (known?.curated === curatedEntry) return known.entry;
  const useCases = [...new Set([...curatedEntry.use_cases, ...live.use_cases])];
  const entry: ToolEntry = Object.freeze({
    ...live,
    description: curatedEntry.description.trim() !== '' ? curatedEntry.description : live.description,
    functions: Object.freeze(curatedEntry.functions.length > 0 ? [...curatedEntry.functions] : [...live.functions]),
    use_cases: Object.freeze(useCases),
    ...(curatedEntry.file !== undefined ? { file: curatedEntry.file } : {}),
  });
  merged.set(live, { curated: curatedEntry, entry });
  return entry;
}

/** Longest description a summary search result carries, characters. */
export const SUMMARY_CHARS = 160;

/**
 * A description as one line for summary search: its first sentence, cut at a word boundary past
 * SUMMARY_CHARS. The whole description is in get_tool_definition.
 */
export function oneLine(description: string): string {
  const flat = description.replace(/\s+/g, ' ').trim();
  const end = flat.search(/[.!?](\s|$)/);
  const first = end >= 0 ? flat.slice(0, end + 1) : flat;
  if (first.length <= SUMMARY_CHARS) return first;
  const cut = first.lastIndexOf(' ', SUMMARY_CHARS - 1);
  return `${first.slice(0, cut > SUMMARY_CHARS / 2 ? cut : SUMMARY_CHARS - 1)}…`;
}
