// Watches the skills folder with chokidar and reports which skill names changed, debounced per
// name: a save or a hand edit is a burst of events (unlinkDir, addDir, add, change) and one
// reload after the burst is enough. The store's temp folders (`.tmp.*`, `.old.*`) are hidden
// entries and ignored.
//
// chokidar drops a file's 'change' that follows another within 50 ms, and one whose stat shows
// the file read after it was written (its atime check); either can hide the last write of a
// quick series. So the debounce outlasts that window, and each burst is confirmed by a second
// reload a little later; reloads are idempotent, so the confirmation costs one folder read.

import { watch } from 'chokidar';
import type { FSWatcher } from 'chokidar';
import { relative, sep } from 'node:path';
import type { Logger } from '../util/logger.js';
import { isHiddenEntry } from './skill-disk.js';

/** Quiet time after the last event of a skill before it is reloaded, ms (chokidar throttles 50 ms). */
export const RELOAD_DEBOUNCE_MS = 80;
/** A second reload this long after the first catches writes whose events chokidar dropped, ms. */
export const RELOAD_CONFIRM_MS = 250;
/**
 * After any folder-level event, the folder names are read again and compared with the index:
 * chokidar can drop the 'addDir' of a folder renamed right after another change, ms.
 */
export const RECONCILE_DELAY_MS = 300;
/** The same reconciliation runs this often anyway, as a backstop for events lost entirely, ms. */
export const RECONCILE_EVERY_MS = 5_000;

export class SkillWatcher {
  readonly #dir: string;
  readonly #watcher: FSWatcher;
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #ready: Promise<void>;
  #closed: Promise<void> | null = null;

  #reconcileTimer: NodeJS.Timeout | undefined;
  readonly #backstop: NodeJS.Timeout;

  constructor(dir: string, onChanged: (name: string) => void, logger: Logger, debounceMs = RELOAD_DEBOUNCE_MS, onReconcile: () => void = () => {}) {
    this.#dir = dir;
    this.#watcher = watch(dir, {
      ignoreInitial: true,
      depth: 1,
      // Atomic-write detection delays unlink events; the per-name debounce already merges bursts.
      atomic: false,
      ignored: (path: string) => this.#nameOf(path) === null && path !== dir,
    });
    this.#ready = new Promise<void>((resolve) => this.#watcher.once('ready', () => resolve()));
    this.#watcher.on('all', (event, path) => {
      const name = this.#nameOf(path);
      if (name === null || this.#closed) return;
      logger.debug({ event, path, skill: name }, 'skills folder event');
      if (event === 'addDir' || event === 'unlinkDir') {
        clearTimeout(this.#reconcileTimer);
        this.#reconcileTimer = setTimeout(() => {
          if (!this.#closed) onReconcile();
        }, RECONCILE_DELAY_MS);
        this.#reconcileTimer.unref();
      }
      this.#schedule(name, debounceMs, () => {
        onChanged(name);
        this.#schedule(name, RELOAD_CONFIRM_MS, () => onChanged(name));
      });
    });
    this.#watcher.on('error', (error) => logger.warn({ code: 'SKILL_WATCH_ERROR', err: error }, 'skills folder watcher error'));
    this.#backstop = setInterval(() => {
      if (!this.#closed) onReconcile();
    }, RECONCILE_EVERY_MS);
    this.#backstop.unref();
  }

  /** Replaces whatever is pending for `name` (a reload or its confirmation) with `run` after `ms`. */
  #schedule(name: string, ms: number, run: () => void): void {
    clearTimeout(this.#timers.get(name));
    const timer = setTimeout(() => {
      this.#timers.delete(name);
      if (!this.#closed) run();
    }, ms);
    timer.unref();
    this.#timers.set(name, timer);
  }

  ready(): Promise<void> {
    return this.#ready;
  }

  /** The skill a path belongs to: its first segment below the skills folder, unless hidden. */
  #nameOf(path: string): string | null {
    const rel = relative(this.#dir, path);
    if (rel === '' || rel.startsWith('..')) return null;
    const first = rel.split(sep)[0] ?? '';
    return first === '' || isHiddenEntry(first) || first === 'node_modules' ? null : first;
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      for (const timer of this.#timers.values()) clearTimeout(timer);
      this.#timers.clear();
      clearTimeout(this.#reconcileTimer);
      clearInterval(this.#backstop);
      await this.#watcher.close();
    })();
    return this.#closed;
  }
}
