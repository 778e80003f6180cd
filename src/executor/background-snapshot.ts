// The Python interpreters' memory snapshot, made before the first Python call needs it: `serve`
// starts this right after the daemon listens, once per install or data folder (a snapshot already
// there makes it a no-op). The making runs in a process of its own at the lowest CPU priority
// (workers/python/snapshot-background.ts), so the first JavaScript calls keep the cores; a Python
// call that arrives meanwhile waits for it (its result's sandbox_start_wait_ms) and the maker then
// returns to full priority (workers/python/snapshot-lock.ts). Once the snapshot exists, one Python
// sandbox is started from it (`warm`), so the first call finds an interpreter ready instead of
// starting one (1.4 s). /healthz and `status` report Python ready only then and, before, when it
// is expected to be.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MAKE_MS_FILE, renice } from '../../workers/python/snapshot-lock.js';
import type { Logger } from '../util/logger.js';
import { workerScript } from './sandbox-launch.js';

/** Whether Python can start an interpreter at once (its memory snapshot exists), and when it will if not. */
export interface PythonReadiness {
  /** ready: the snapshot exists and an interpreter was started from it; warming: either is under way; cold: interpreters start without one (it could not be made); off: Python is disabled. */
  state: 'ready' | 'warming' | 'cold' | 'off';
  ready: boolean;
  /** While warming: seconds until it is expected to be ready (from the last make on this machine). */
  eta_s?: number;
}

/** What a make takes when none was measured here yet (4-6 s on a quiet 2-core machine, 7-13 s loaded), ms. */
export const DEFAULT_MAKE_MS = 8_000;
/** What starting an interpreter from the snapshot takes after the make (1.4 s on a quiet machine), ms. */
const WARM_START_MS = 2_000;
/** How often the daemon looks whether a Python call waits while the snapshot is made, ms. */
const HURRY_POLL_MS = 100;
/** The maker's exit codes: made or already there; handed to a waiting call's process. */
const EXIT_READY = 0;
const EXIT_HANDED_OVER = 3;

export class BackgroundSnapshot {
  readonly #dir: string | undefined;
  readonly #log: Logger;
  #state: PythonReadiness['state'];
  #child: ChildProcess | undefined;
  #startedAt = 0;
  #expectedMs = DEFAULT_MAKE_MS;
  #done: Promise<void> = Promise.resolve();
  /** Ends the wait of `settled()` and `close()` (at shutdown, without waiting for the interpreter's start). */
  #settle: () => void = () => {};
  /** Killed so that a waiting call's process makes the file at its own priority. */
  #handedOver = false;
  #closed = false;

  /** `dir`: the snapshot folder (src/executor/python-pool.ts pythonSnapshotDir); undefined when Python is disabled. */
  constructor(dir: string | undefined, log: Logger) {
    this.#dir = dir;
    this.#log = log;
    this.#state = dir === undefined ? 'off' : 'warming';
  }

  /**
   * Starts the maker (it exits at once when the snapshot is there). `waiting`: whether a Python
   * call waits for an interpreter now; the maker is then told to hurry (full priority). `warm`:
   * starts one interpreter once the snapshot exists; Python is ready when it is.
   */
  start(waiting: () => boolean = () => false, warm: () => Promise<boolean> = () => Promise.resolve(true)): void {
    const dir = this.#dir;
    if (dir === undefined || this.#child) return;
    this.#expectedMs = (lastMakeMs(dir) ?? DEFAULT_MAKE_MS) + WARM_START_MS;
    this.#startedAt = performance.now();
    const child = spawn(process.execPath, [workerScript('python/snapshot-background'), dir, String(os.getPriority())], { stdio: 'ignore' });
    this.#child = child;
    this.#done = new Promise((resolve) => {
      this.#settle = resolve;
      const ended = (code: number | null): void => {
        this.#child = undefined;
        // Handed to a waiting call's process: it makes the file now, and Python is ready once it is.
        const made = code === EXIT_READY || code === EXIT_HANDED_OVER || this.#handedOver;
        if (!made || this.#closed) {
          this.#state = 'cold';
          if (!this.#closed) this.#log.warn({ code: 'PYTHON_SNAPSHOT_FAILED', exitCode: code, ms: this.#elapsedMs() }, 'the Python snapshot could not be made in the background; Python interpreters start cold (seconds each)');
          return resolve();
        }
        // A failed start is the pool's to report (its health and log); the snapshot is there either way.
        void warm().then((interpreter) => {
          if (!this.#closed) {
            this.#state = 'ready';
            this.#log.info({ code: 'PYTHON_READY', ms: this.#elapsedMs(), interpreter }, 'Python ready: its interpreter snapshot exists and an interpreter was started from it');
          }
          resolve();
        });
      };
      child.once('exit', ended);
      // Looked at only while the make runs: a few seconds of a cheap check. The daemon raises the
      // maker's priority itself: a process at the lowest one may not run soon enough to do it.
      const watch = setInterval(() => {
        if (!waiting() || child.pid === undefined) return;
        clearInterval(watch);
        this.#hurry(child.pid);
      }, HURRY_POLL_MS);
      child.once('exit', () => clearInterval(watch));
      // A fork that failed emits 'error' and no 'exit'.
      child.once('error', () => ended(null));
    });
  }

  /** Back to the daemon's priority; where the system refuses, the maker goes and the waiting call's process makes the file. */
  #hurry(pid: number): void {
    const ms = this.#elapsedMs();
    try {
      renice(pid, os.getPriority());
      this.#log.info({ code: 'PYTHON_SNAPSHOT_HURRIED', ms }, 'a Python call waits for the interpreter snapshot; making it at full priority now');
    } catch (error) {
      this.#handedOver = true;
      this.#child?.kill('SIGKILL');
      this.#log.info({ code: 'PYTHON_SNAPSHOT_HANDED_OVER', ms, err: (error as Error).message }, 'a Python call waits for the interpreter snapshot; its process makes it (this user may not raise a priority)');
    }
  }

  readiness(): PythonReadiness {
    if (this.#state !== 'warming') return { state: this.#state, ready: this.#state === 'ready' };
    const elapsed = this.#startedAt > 0 ? this.#elapsedMs() : 0;
    return { state: 'warming', ready: false, eta_s: Math.max(1, Math.ceil((this.#expectedMs - elapsed) / 1000)) };
  }

  #elapsedMs(): number {
    return Math.round(performance.now() - this.#startedAt);
  }

  /** Resolves when the maker has ended and the interpreter it allows has started (or failed, or the daemon stops). */
  settled(): Promise<void> {
    return this.#done;
  }

  /** Stops a make in progress (the daemon is stopping); the next start makes it again. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#child) this.#child.kill('SIGTERM');
    else this.#settle();
    await this.#done;
  }
}

function lastMakeMs(dir: string): number | undefined {
  try {
    const ms = Number.parseInt(readFileSync(path.join(dir, MAKE_MS_FILE), 'utf8'), 10);
    return Number.isFinite(ms) && ms > 0 ? ms : undefined;
  } catch {
    return undefined;
  }
}
