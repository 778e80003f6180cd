// The visible catalog at one generation: catalog files and dynamic categories merged into lookup
// tables. Rebuilt whole on each change (cheap: maps over at most tens of thousands of entries);
// only the search index is updated by difference.
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

export interface CatalogView {
  readonly byId: ReadonlyMap<string, ToolEntry>;
  /** Every entry, by name then category. */
  readonly sorted: readonly ToolEntry[];
  /** Entries of each category, by name. */
  readonly byCategory: ReadonlyMap<string, readonly ToolEntry[]>;
  /** Entries of each bare name, in category order. */
  readonly byName: ReadonlyMap<string, readonly ToolEntry[]>;
  /** The same, keyed by lower-case name, for case-insensitive lookups. */
  readonly byLowerName: ReadonlyMap<string, readonly ToolEntry[]>;
  /** Catalog files whose valid entry lost to an earlier file defining the same tool. */
  readonly conflicts: readonly InvalidFile[];
  /** Static categories hidden because a dynamic category of the same name replaces them. */
  readonly shadowed: readonly string[];
}

export const EMPTY_VIEW: CatalogView = {
  byId: new Map(),
  sorted: [],
  byCategory: new Map(),
  byName: new Map(),
  byLowerName: new Map(),
  conflicts: [],
  shadowed: [],
};

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Order of entries in listings and of equal scores: name, then category. */
export function compareEntries(a: ToolEntry, b: ToolEntry): number {
  return compareText(a.name.toLowerCase(), b.name.toLowerCase()) || compareText(a.name, b.name) || compareText(a.category, b.category);
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
 * Merge file entries and dynamic categories. A dynamic category replaces a static category of
 * the same name entirely: a live server's own tool list is the truth, and a stale static entry
 * would invite calls the server cannot answer.
 */
export function buildView(
  files: ReadonlyMap<string, FileState>,
  dynamic: ReadonlyMap<string, DynamicCategory>,
  compareCategories: (a: string, b: string) => number,
): CatalogView {
  const byId = new Map<string, ToolEntry>();
  const conflicts: InvalidFile[] = [];
  const shadowed = new Set<string>();
  for (const rel of [...files.keys()].sort(compareText)) {
    const entry = (files.get(rel) as FileState).entry;
    if (!entry) continue;
    if (dynamic.has(entry.category)) {
      shadowed.add(entry.category);
      continue;
    }
    const id = entryId(entry.category, entry.name);
    const first = byId.get(id);
    if (first) {
      conflicts.push({ file: rel, reason: `duplicate tool "${entry.name}" in category "${entry.category}": ${first.file ?? 'another file'} defines it first` });
      continue;
    }
    byId.set(id, entry);
  }
  for (const { entries } of dynamic.values()) for (const entry of entries) byId.set(entryId(entry.category, entry.name), entry);

  const sorted = [...byId.values()].sort(compareEntries);
  const byCategory = new Map<string, ToolEntry[]>();
  const byName = new Map<string, ToolEntry[]>();
  const byLowerName = new Map<string, ToolEntry[]>();
  for (const entry of sorted) {
    push(byCategory, entry.category, entry);
    push(byName, entry.name, entry);
    push(byLowerName, entry.name.toLowerCase(), entry);
  }
  for (const category of dynamic.keys()) if (!byCategory.has(category)) byCategory.set(category, []);
  const byCategoryOrder = (a: ToolEntry, b: ToolEntry): number => compareCategories(a.category, b.category) || compareText(a.name, b.name);
  for (const list of byName.values()) list.sort(byCategoryOrder);
  for (const list of byLowerName.values()) list.sort(byCategoryOrder);
  return { byId, sorted, byCategory, byName, byLowerName, conflicts, shadowed: [...shadowed].sort(compareText) };
}
