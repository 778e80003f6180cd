// The catalog folder as a live source: the state of every catalog file (its last valid entry and
// its current error), kept up to date by the watcher, with each problem logged once.
import { stat } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../util/logger.js';
import { CatalogLoader, CATEGORY_FILE, classifyPath } from './catalog-loader.js';
import type { CatalogPath, FileLoad } from './catalog-loader.js';
import type { CacheStats, InvalidFile } from './catalog-types.js';
import type { FileState } from './catalog-view.js';
import { CatalogWatcher } from './catalog-watcher.js';
import type { WatchBatch } from './catalog-watcher.js';

/**
 * chokidar drops a 'change' event that follows another for the same file within 50 ms, so a
 * quick second save could go unseen. Each batch is therefore checked again this long after it
 * was applied; unchanged files cost one stat (the parse cache answers).
 */
const RECHECK_DELAY_MS = 120;

/** How often a missing catalog folder is looked for. */
const FOLDER_POLL_MS = 1_000;

async function isDirectory(dir: string): Promise<boolean> {
  try {
    return (await stat(dir)).isDirectory();
  } catch {
    return false;
  }
}

/** Logs each warning once per subject until the subject's problem changes or is forgotten. */
export class WarnOnce {
  readonly #logger: Logger;
  readonly #said = new Map<string, string>();

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  warn(subject: string, code: string, fields: Record<string, unknown>, message: string): void {
    const said = `${code}\u0000${JSON.stringify(fields)}`;
    if (this.#said.get(subject) === said) return;
    this.#said.set(subject, said);
    this.#logger.warn({ code, ...fields }, message);
  }

  forget(subject: string): void {
    this.#said.delete(subject);
  }
}

export interface CatalogFilesOptions {
  dir: string;
  logger: Logger;
  warnings: WarnOnce;
  cacheSize: number;
  debounceMs: number;
  watch: boolean;
  /**
   * Called after the initial load ('load') and after each applied batch ('files'), with the
   * categories whose description changed and the time the work started.
   */
  onApplied: (reason: 'load' | 'files', described: Set<string>, started: number) => void;
  /** Called with each batch the folder watcher reports (for telling other daemons). */
  onWatchBatch?: (batch: WatchBatch) => void;
}

export class CatalogFiles {
  readonly #options: CatalogFilesOptions;
  readonly #loader: CatalogLoader;
  readonly #files = new Map<string, FileState>();
  readonly #categoryFiles = new Map<string, { description: string | null; setup: Readonly<Record<string, unknown>> | null; error: string | null }>();
  /** Category descriptions given by seed-format files at the top of the folder, by file. */
  readonly #bundleDescriptions = new Map<string, ReadonlyMap<string, string>>();
  #watcher: CatalogWatcher | null = null;
  /** Loads and batches run one at a time, in order. */
  #work: Promise<void> = Promise.resolve();
  #recheck = new Set<string>();
  #recheckTimer: NodeJS.Timeout | null = null;
  #folderPoll: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(options: CatalogFilesOptions) {
    this.#options = options;
    this.#loader = new CatalogLoader(options.dir, options.cacheSize);
  }

  /** Catalog files by path relative to the folder. */
  get files(): ReadonlyMap<string, FileState> {
    return this.#files;
  }

  get watching(): boolean {
    return this.#watcher !== null && !this.#closed;
  }

  /** The description from `CATEGORY/_category.json` (its last valid version), if any. */
  categoryDescription(category: string): string | null {
    const own = this.#categoryFiles.get(category)?.description;
    if (own != null) return own;
    for (const descriptions of this.#bundleDescriptions.values()) {
      const given = descriptions.get(category);
      if (given) return given;
    }
    return null;
  }

  /** The `mcpServers` entry from `CATEGORY/_category.json` that adds the category's server, if any. */
  categorySetup(category: string): Readonly<Record<string, unknown>> | null {
    return this.#categoryFiles.get(category)?.setup ?? null;
  }

  /** Files that failed to parse or validate (their previous version, if any, still counts). */
  invalidFiles(): InvalidFile[] {
    const invalid: InvalidFile[] = [];
    for (const [file, state] of this.#files) if (state.error) invalid.push({ file, reason: state.error });
    for (const [category, state] of this.#categoryFiles) if (state.error) invalid.push({ file: `${category}/${CATEGORY_FILE}`, reason: state.error });
    return invalid;
  }

  /** Tool files currently contributing an entry. */
  loadedCount(): number {
    let n = 0;
    for (const state of this.#files.values()) if (state.entry) n++;
    return n;
  }

  cacheStats(): CacheStats {
    return this.#loader.cacheStats();
  }

  /** Watch first, then scan: an edit made during the scan is queued behind it, never lost. */
  async start(): Promise<void> {
    const exists = await isDirectory(this.#options.dir);
    if (!exists) {
      const later = this.#options.watch ? '; it will be loaded when it appears' : '';
      this.#options.warnings.warn('dir', 'CATALOG_DIR_MISSING', { dir: this.#options.dir }, `catalog folder does not exist${later}`);
    }
    if (this.#options.watch) {
      if (exists) await this.#startWatcher();
      else this.#waitForFolder();
    }
    await this.#enqueue(() => this.#initialLoad());
  }

  /**
   * A folder that does not exist yet cannot be watched (chokidar would not see it appear): look
   * for it every FOLDER_POLL_MS, then watch it and load what it holds.
   */
  #waitForFolder(): void {
    const poll = setInterval(() => {
      if (this.#closed) {
        clearInterval(poll);
        return;
      }
      void isDirectory(this.#options.dir).then(async (exists) => {
        if (!exists || this.#closed || this.#watcher) return;
        clearInterval(poll);
        await this.#startWatcher();
        await this.#enqueue(() => this.#initialLoad());
      });
    }, FOLDER_POLL_MS);
    poll.unref();
    this.#folderPoll = poll;
  }

  async #startWatcher(): Promise<void> {
    const watcher = new CatalogWatcher({
      dir: this.#options.dir,
      debounceMs: this.#options.debounceMs,
      logger: this.#options.logger,
      onBatch: (batch) => {
        void this.#enqueue(() => this.#applyBatch(batch)).catch(() => {});
        this.#scheduleRecheck(batch.files);
        this.#options.onWatchBatch?.(batch);
      },
    });
    this.#watcher = watcher; // before the first await: a second poll tick sees it and backs off
    await watcher.start();
  }

  /** Re-reads these files and category folders now (another daemon saw them change); resolves when applied. */
  reloadPaths(batch: WatchBatch): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return this.#enqueue(() => this.#applyBatch(batch));
  }

  /** Stop watching and wait for the batch in progress. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#folderPoll) clearInterval(this.#folderPoll);
    if (this.#recheckTimer) clearTimeout(this.#recheckTimer);
    this.#recheckTimer = null;
    const watcher = this.#watcher;
    try {
      await watcher?.close();
    } finally {
      await this.#work;
    }
  }

  #enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.#work.then(task);
    // The chain survives a failed task; the failure still reaches whoever awaits `run`.
    this.#work = run.catch((error: unknown) => {
      this.#options.logger.error({ code: 'CATALOG_RELOAD_FAILED', err: error }, 'catalog reload failed');
    });
    return run;
  }

  async #initialLoad(): Promise<void> {
    const started = performance.now();
    const paths = await this.#loader.scan();
    if (paths.length === 0 && (await isDirectory(this.#options.dir))) {
      this.#options.warnings.warn('dir', 'CATALOG_EMPTY', { dir: this.#options.dir }, 'catalog folder holds no catalog files');
    }
    const loads = await this.#loader.loadAll(paths);
    const described = new Set<string>();
    for (const load of loads) this.#apply(load.rel, load, described);
    this.#options.onApplied('load', described, started);
  }

  #scheduleRecheck(files: ReadonlySet<string>): void {
    for (const rel of files) this.#recheck.add(rel);
    this.#recheckTimer ??= setTimeout(() => {
      this.#recheckTimer = null;
      const again: WatchBatch = { files: this.#recheck, dirs: new Set() };
      this.#recheck = new Set();
      void this.#enqueue(() => this.#applyBatch(again)).catch(() => {});
    }, RECHECK_DELAY_MS);
  }

  async #applyBatch(batch: WatchBatch): Promise<void> {
    if (this.#closed) return;
    const started = performance.now();
    const targets = new Map<string, CatalogPath | null>();
    for (const rel of batch.files) targets.set(rel, null);
    for (const dir of batch.dirs) {
      // A folder added or removed as a whole: recheck what we hold and what is there now.
      for (const [rel, state] of this.#files) if (state.category === dir) targets.set(rel, null);
      if (this.#categoryFiles.has(dir)) targets.set(`${dir}/${CATEGORY_FILE}`, null);
      for (const p of await this.#loader.scanCategory(dir)) targets.set(p.rel, p);
    }
    const loads = await Promise.all(
      [...targets.entries()].map(async ([rel, known]) => {
        const target = known ?? classifyPath(rel);
        return target ? { rel, load: await this.#loader.load(target) } : null;
      }),
    );
    if (this.#closed) return;
    const described = new Set<string>();
    for (const item of loads) if (item) this.#apply(item.rel, item.load, described);
    this.#options.onApplied('files', described, started);
  }

  /**
   * Record one file's new state; `load` null means the file is gone. Categories whose
   * description changed are added to `described`.
   */
  #apply(rel: string, load: FileLoad | null, described: Set<string>): void {
    if (load?.kind === 'bundle' || (!load && !rel.includes('/'))) {
      this.#applyBundle(rel, load?.kind === 'bundle' ? load : null, described);
      return;
    }
    const category = rel.split('/')[0] ?? '';
    const subject = `file:${rel}`;
    if (load?.kind === 'category' || (!load && rel.endsWith(`/${CATEGORY_FILE}`))) {
      const previous = this.#categoryFiles.get(category);
      if (!load) {
        if (previous?.description != null) described.add(category);
        this.#categoryFiles.delete(category);
        this.#options.warnings.forget(subject);
      } else if (load.result.ok) {
        const { description, mcp_server_config: setup } = load.result.value;
        if (previous?.description !== description || JSON.stringify(previous.setup) !== JSON.stringify(setup)) described.add(category);
        this.#categoryFiles.set(category, { description, setup, error: null });
        this.#options.warnings.forget(subject);
      } else {
        this.#categoryFiles.set(category, { description: previous?.description ?? null, setup: previous?.setup ?? null, error: load.result.reason });
        this.#warnInvalid(rel, load.result.reason, previous?.description != null);
      }
      return;
    }
    if (!load) {
      this.#files.delete(rel);
      this.#options.warnings.forget(subject);
      return;
    }
    if (load.kind !== 'tool') return;
    const previous = this.#files.get(rel);
    if (load.result.ok) {
      this.#files.set(rel, { category, entry: load.result.value, error: null });
      this.#options.warnings.forget(subject);
    } else {
      // Keep the last good version: a half-saved edit must not make a tool vanish.
      this.#files.set(rel, { category, entry: previous?.entry ?? null, error: load.result.reason });
      this.#warnInvalid(rel, load.result.reason, previous?.entry != null);
    }
  }

  /**
   * A seed-format file at the top of the folder: each of its tools becomes a state keyed
   * `FILE#CATEGORY/TOOL`, replaced together on every change; when the file breaks, its last good
   * tools stay and the file is reported.
   */
  #applyBundle(rel: string, load: Extract<FileLoad, { kind: 'bundle' }> | null, described: Set<string>): void {
    const prefix = `${rel}#`;
    if (load && !load.result.ok) {
      const kept = [...this.#files.keys()].some((k) => k.startsWith(prefix));
      this.#files.set(rel, { category: '', entry: null, error: load.result.reason });
      this.#warnInvalid(rel, load.result.reason, kept);
      return;
    }
    for (const key of [...this.#files.keys()]) if (key === rel || key.startsWith(prefix)) this.#files.delete(key);
    for (const category of this.#bundleDescriptions.get(rel)?.keys() ?? []) described.add(category);
    this.#bundleDescriptions.delete(rel);
    this.#options.warnings.forget(`file:${rel}`);
    if (!load?.result.ok) return;
    const bundle = load.result.value;
    for (const entry of bundle.entries) this.#files.set(entry.file ?? `${prefix}${entry.category}/${entry.name}`, { category: entry.category, entry, error: null });
    for (const skip of bundle.skipped) this.#files.set(`${prefix}${skip.what}`, { category: '', entry: null, error: skip.reason });
    this.#bundleDescriptions.set(rel, bundle.descriptions);
    for (const category of bundle.descriptions.keys()) described.add(category);
  }

  #warnInvalid(rel: string, reason: string, keptPrevious: boolean): void {
    this.#options.warnings.warn(
      `file:${rel}`,
      'CATALOG_INVALID_FILE',
      { file: rel, reason, kept_previous: keptPrevious },
      keptPrevious ? 'invalid catalog file; keeping its previous version' : 'invalid catalog file; skipped',
    );
  }
}
