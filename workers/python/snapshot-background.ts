// The daemon's background maker of the Python snapshot (src/executor/background-snapshot.ts): a
// process of its own, at the lowest CPU priority, so the daemon's first JavaScript calls keep the
// cores. When a call starts waiting for the snapshot (`<file>.wanted`, snapshot-lock.ts), it
// returns to the daemon's priority; where the system does not let it (an unprivileged user whose
// RLIMIT_NICE is 0), it gives the lock up and exits, and the waiting call's process makes the
// file at its own priority instead.
//
// argv: the snapshot folder, the daemon's niceness. Exit 0: the file exists (made here, by another
// maker, or already there); 1: it could not be made (Python starts cold); 3: handed to a waiter.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MAKE_TIMEOUT_MS, makeSnapshot, snapshotFile } from './snapshot.js';
import { MAKE_MS_FILE, isWanted, lockSnapshot, unlockSnapshot, waitForMaker } from './snapshot-lock.js';

/** Lowest priority: runs on what the rest of the machine leaves idle. */
const BACKGROUND_NICENESS = 19;
const WANTED_POLL_MS = 100;

/** Sets the niceness of every thread of this process (Linux keeps it per thread; elsewhere the process's). */
function renice(niceness: number): void {
  let tasks: string[] = [];
  try {
    tasks = fs.readdirSync('/proc/self/task');
  } catch {
    // not Linux: one value for the process
  }
  if (tasks.length === 0) return os.setPriority(niceness);
  for (const tid of tasks) {
    try {
      os.setPriority(Number(tid), niceness);
    } catch (error) {
      // A thread that ended meanwhile is fine; a refusal is not.
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }
}

async function main(dir: string, daemonNiceness: number): Promise<number> {
  const file = snapshotFile(dir);
  if (fs.existsSync(file)) return 0;
  renice(BACKGROUND_NICENESS);
  if (!lockSnapshot(file)) {
    await waitForMaker(file, MAKE_TIMEOUT_MS);
    return fs.existsSync(file) ? 0 : 1;
  }
  const release = (): void => unlockSnapshot(file);
  process.once('SIGTERM', () => {
    release();
    process.exit(1);
  });
  let handedOver = false;
  const watch = setInterval(() => {
    if (!isWanted(file)) return;
    clearInterval(watch);
    try {
      renice(daemonNiceness);
    } catch {
      handedOver = true;
      release();
      process.exit(3);
    }
  }, WANTED_POLL_MS);
  const started = performance.now();
  try {
    const made = await makeSnapshot(file);
    if (made) fs.writeFileSync(path.join(dir, MAKE_MS_FILE), `${Math.round(performance.now() - started)}\n`);
    return made ? 0 : 1;
  } finally {
    clearInterval(watch);
    if (!handedOver) release();
  }
}

const [dir, niceness] = process.argv.slice(2);
process.exitCode = dir === undefined ? 1 : await main(dir, Number(niceness ?? 0)).catch(() => 1);
