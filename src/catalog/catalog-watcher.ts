// Watches the catalog folder with chokidar and hands over changed paths in batches: the first
// event opens a short window (debounceMs), so an editor's truncate-then-write lands as one change
// and a burst of files is applied together, yet a change is never delayed past the window.
import path from 'node:path';
import { watch } from 'chokidar';
import type { FSWatcher } from 'chokidar';
import type { Logger } from '../util/logger.js';

export interface WatchBatch {
  /** Changed, added or removed files, relative to the catalog folder. */
  readonly files: ReadonlySet<string>;
  /** Category folders added or removed. */
  readonly dirs: ReadonlySet<string>;
}

export interface CatalogWatcherOptions {
  dir: string;
  debounceMs: number;
  logger: Logger;
  onBatch: (batch: WatchBatch) => void;
}

export class CatalogWatcher {
  readonly #options: CatalogWatcherOptions;
  #watcher: FSWatcher | null = null;
  #timer: NodeJS.Timeout | null = null;
  #files = new Set<string>();
  #dirs = new Set<string>();
  #warned = false;

  constructor(options: CatalogWatcherOptions) {
    this.#options = options;
  }

  /** Start watching; resolves once chokidar has walked the folder. */
  async start(): Promise<void> {
    const { dir } = this.#options;
    const rel = (p: string): string => path.relative(dir, p).split(path.sep).join('/');
    const watcher = watch(dir, {
      ignoreInitial: true,
      depth: 1,
      ignored: (p) => rel(p).split('/').some((part) => part.startsWith('.')),
    });
    this.#watcher = watcher;
    const onFile = (p: string): void => this.#queue(this.#files, rel(p));
    const onDir = (p: string): void => {
      const r = rel(p);
      if (r && !r.includes('/')) this.#queue(this.#dirs, r);
    };
    watcher.on('add', onFile).on('change', onFile).on('unlink', onFile);
    watcher.on('addDir', onDir).on('unlinkDir', onDir);
    watcher.on('error', (error) => {
      // Said once: a watcher that fails tends to fail on every event.
      if (this.#warned) return;
      this.#warned = true;
      this.#options.logger.warn({ code: 'CATALOG_WATCH_ERROR', dir, err: error }, 'catalog watcher error; hot reload may miss changes');
    });
    await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  }

  #queue(set: Set<string>, rel: string): void {
    if (!rel || rel.startsWith('..')) return;
    set.add(rel);
    this.#timer ??= setTimeout(() => this.#flush(), this.#options.debounceMs);
  }

  #flush(): void {
    this.#timer = null;
    const batch: WatchBatch = { files: this.#files, dirs: this.#dirs };
    this.#files = new Set();
    this.#dirs = new Set();
    this.#options.onBatch(batch);
  }

  async close(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const watcher = this.#watcher;
    this.#watcher = null;
    await watcher?.close();
  }
}
