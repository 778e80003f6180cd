// One maker at a time per snapshot file, across threads and processes: the daemon's background
// maker (snapshot-background.ts), a Python sandbox process that found no snapshot, `exec`, another
// daemon on the same data folder. Two Pyodide boots at once keep both cores busy for nothing: the
// one that holds `<file>.lock` (created exclusively, naming its pid) makes the file, and everyone
// else waits for it. A waiter leaves `<file>.wanted`, which tells a maker working at low priority
// that a call is now waiting for it (snapshot-background.ts raises its priority, or gives the lock
// up for the waiter to make it at full speed).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Beside the snapshot: the last make's duration, ms (for the daemon's estimate of when Python is ready). */
export const MAKE_MS_FILE = 'last-make-ms';
/** A lock older than this is a maker that hung or died without removing it (the maker's own bound is 180 s), ms. */
const STALE_LOCK_MS = 240_000;
/** How often a waiter looks whether the maker is done, ms. */
const WAIT_POLL_MS = 100;

const lockOf = (file: string): string => `${file}.lock`;
const wantedOf = (file: string): string => `${file}.wanted`;

/** The pid of the live maker holding the lock on `file`, or undefined (none, or a stale lock). */
export function makerOf(file: string): number | undefined {
  let text: string;
  let mtimeMs: number;
  try {
    text = fs.readFileSync(lockOf(file), 'utf8');
    mtimeMs = fs.statSync(lockOf(file)).mtimeMs;
  } catch {
    return undefined;
  }
  const pid = Number.parseInt(text, 10);
  if (!Number.isInteger(pid) || pid <= 0 || Date.now() - mtimeMs > STALE_LOCK_MS) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    // EPERM: alive, another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? pid : undefined;
  }
}

/** Takes the lock on `file` for this process; false when a live maker holds it. A stale lock is taken over. */
export function lockSnapshot(file: string): boolean {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lockOf(file), String(process.pid), { flag: 'wx', mode: 0o600 });
      // A mark left by the waiters of an earlier maker is not about this one.
      fs.rmSync(wantedOf(file), { force: true });
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || makerOf(file) !== undefined) return false;
      fs.rmSync(lockOf(file), { force: true });
    }
  }
  return false;
}

/** Gives the lock up (and the waiters' mark with it: they see the file, or take the lock themselves). */
export function unlockSnapshot(file: string): void {
  fs.rmSync(wantedOf(file), { force: true });
  fs.rmSync(lockOf(file), { force: true });
}

/** Tells the maker that a call waits for the file. */
export function markWanted(file: string): void {
  try {
    fs.writeFileSync(wantedOf(file), String(process.pid), { mode: 0o600 });
  } catch {
    // the folder went away: the maker is gone too
  }
}

export function isWanted(file: string): boolean {
  return fs.existsSync(wantedOf(file));
}

/** Resolves when no live maker holds the lock on `file` any more, or after `timeoutMs`. */
export async function waitForMaker(file: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (makerOf(file) !== undefined && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
}

/**
 * Sets the CPU niceness of every thread of process `pid` (Linux keeps it per thread, and threads
 * inherit it from the one that starts them; elsewhere one value for the process). Throws when the
 * system refuses (a lower niceness needs CAP_SYS_NICE or RLIMIT_NICE).
 */
export function renice(pid: number, niceness: number): void {
  let tasks: string[] = [];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    // not Linux: one value for the process
  }
  if (tasks.length === 0) return os.setPriority(pid, niceness);
  for (const tid of tasks) {
    try {
      os.setPriority(Number(tid), niceness);
    } catch (error) {
      // A thread that ended meanwhile is fine; a refusal is not.
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }
}
