// Reads catalog files from disk: which paths are catalog files, and their parsed, validated
// content, with an LRU of parses keyed by path, size and times so unchanged files are not re-read.
import { readFile as readFileCallback, stat as statCallback } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { LRUCache } from 'lru-cache';
import type { CacheStats, ToolEntry } from './catalog-types.js';
import { MAX_ENTRY_FILE_BYTES, parseCategoryFile, parseEntryFile } from './entry-validation.js';
import type { CategoryFileData, Parsed } from './entry-validation.js';
import { MAX_SEED_CATALOG_BYTES, parseSeedBundle } from './seed-format.js';
import type { SeedBundle } from './seed-format.js';

/** The file that describes a category instead of a tool. */
export const CATEGORY_FILE = '_category.json';

// The callback forms, promisified: for many small files they cost about half of what the
// FileHandle-based fs/promises versions do (one round trip instead of open/stat/read/close).
const stat = promisify(statCallback);
const readFile = promisify(readFileCallback);

/** Files read at once during a full scan. */
const READ_CONCURRENCY = 64;

export type CatalogPath =
  | { kind: 'tool'; category: string; rel: string }
  | { kind: 'category'; category: string; rel: string }
  | { kind: 'bundle'; category: ''; rel: string };

export type FileLoad =
  | { kind: 'tool'; category: string; rel: string; result: Parsed<ToolEntry> }
  | { kind: 'category'; category: string; rel: string; result: Parsed<CategoryFileData> }
  | { kind: 'bundle'; category: ''; rel: string; result: Parsed<SeedBundle> };

/**
 * What a path under the catalog folder is: `CATEGORY/TOOL.json` (a tool), `CATEGORY/_category.json`
 * (a category description), or null (anything else: hidden files, other depths, other names).
 */
export function classifyPath(rel: string): CatalogPath | null {
  const parts = rel.split(/[\\/]/);
  // A file at the top holds many tools in the seed's format (full_catalog.json).
  if (parts.length === 1 && rel.endsWith('.json') && !rel.startsWith('.') && !rel.startsWith('_')) return { kind: 'bundle', category: '', rel };
  if (parts.length !== 2) return null;
  const [category, file] = parts as [string, string];
  if (!category || category.startsWith('.') || category.startsWith('_') || !file.endsWith('.json')) return null;
  const posixRel = `${category}/${file}`;
  if (file === CATEGORY_FILE) return { kind: 'category', category, rel: posixRel };
  if (file.startsWith('.') || file.startsWith('_')) return null;
  return { kind: 'tool', category, rel: posixRel };
}

async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export class CatalogLoader {
  readonly #dir: string;
  readonly #cache: LRUCache<string, FileLoad>;
  #hits = 0;
  #misses = 0;

  constructor(dir: string, cacheSize: number) {
    this.#dir = dir;
    this.#cache = new LRUCache<string, FileLoad>({ max: cacheSize });
  }

  get dir(): string {
    return this.#dir;
  }

  /** Relative path of an absolute one under the catalog folder. */
  relative(absolute: string): string {
    return path.relative(this.#dir, absolute).split(path.sep).join('/');
  }

  /** Every catalog file under the folder; a missing folder is empty. */
  async scan(): Promise<CatalogPath[]> {
    const found: CatalogPath[] = [];
    let categories: string[];
    try {
      const top = await readdir(this.#dir, { withFileTypes: true });
      categories = top.filter((d) => d.isDirectory()).map((d) => d.name);
      for (const d of top) {
        const bundle = d.isFile() ? classifyPath(d.name) : null;
        if (bundle) found.push(bundle);
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    for (const category of categories.sort()) found.push(...(await this.scanCategory(category)));
    return found;
  }

  /** Catalog files of one category folder (empty when the folder is gone). */
  async scanCategory(category: string): Promise<CatalogPath[]> {
    let names: string[];
    try {
      names = (await readdir(path.join(this.#dir, category), { withFileTypes: true })).filter((d) => d.isFile()).map((d) => d.name);
    } catch {
      return [];
    }
    return names
      .sort()
      .map((name) => classifyPath(`${category}/${name}`))
      .filter((p): p is CatalogPath => p !== null);
  }

  /** Load many files; a file that vanished meanwhile is left out. */
  async loadAll(paths: readonly CatalogPath[]): Promise<FileLoad[]> {
    const loads = await mapLimited(paths, READ_CONCURRENCY, (p) => this.load(p));
    return loads.filter((l): l is FileLoad => l !== null);
  }

  /** Parse one file, or null when it does not exist. Never throws: failures become reasons. */
  async load(target: CatalogPath): Promise<FileLoad | null> {
    const absolute = path.join(this.#dir, target.rel);
    const fail = (reason: string): FileLoad => ({ ...target, result: { ok: false, reason } });
    let info;
    try {
      info = await stat(absolute);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      return fail(`cannot read: ${(error as Error).message}`);
    }
    if (!info.isFile()) return null;
    if (info.size > (target.kind === 'bundle' ? MAX_SEED_CATALOG_BYTES : MAX_ENTRY_FILE_BYTES)) return fail(`file too large (${info.size} bytes; the limit is ${MAX_ENTRY_FILE_BYTES})`);
    const key = `${target.rel}\u0000${info.size}\u0000${info.mtimeMs}\u0000${info.ctimeMs}\u0000${info.ino}`;
    const cached = this.#cache.get(key);
    if (cached) {
      this.#hits++;
      return cached;
    }
    this.#misses++;
    let text: string;
    try {
      text = await readFile(absolute, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      return fail(`cannot read: ${(error as Error).message}`);
    }
    const loaded: FileLoad =
      target.kind === 'tool'
        ? { ...target, result: parseEntryFile(text, target.category, target.rel) }
        : target.kind === 'bundle'
          ? { ...target, result: parseSeedBundle(text, target.rel) }
          : { ...target, result: parseCategoryFile(text) };
    this.#cache.set(key, loaded);
    return loaded;
  }

  cacheStats(): CacheStats {
    return { size: this.#cache.size, max: this.#cache.max, hits: this.#hits, misses: this.#misses };
  }
}
