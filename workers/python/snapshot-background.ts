// The daemon's background maker of the Python snapshot (src/executor/background-snapshot.ts): a
// process of its own, at the lowest CPU priority, so the daemon's first JavaScript calls keep the
// cores. When a call of its daemon waits for the snapshot, the daemon raises this process's
// priority (or, where the system refuses, kills it; the call's process then makes the file). When
// a process of another daemon or of `exec` waits (`<file>.wanted`, snapshot-lock.ts), this process
// raises its own, or gives the lock up and exits where it may not.
//
// argv: the snapshot folder, the daemon's niceness. Exit 0: the file exists (made here, by another
// maker, or already there); 1: it could not be made (Python starts cold); 3: handed to a waiter.

import fs from 'node:fs';
import path from 'node:path';
import { MAKE_TIMEOUT_MS, makeSnapshot, snapshotFile } from './snapshot.js';
import { MAKE_MS_FILE, isWanted, lockSnapshot, renice, unlockSnapshot, waitForMaker } from './snapshot-lock.js';

/** Lowest priority: runs on what the rest of the machine leaves idle. */
const BACKGROUND_NICENESS = 19;
const WANTED_POLL_MS = 100;

async function main(dir: string, daemonNiceness: number): Promise<number> {
  const file = snapshotFile(dir);
  if (fs.existsSync(file)) return 0;
  renice(process.pid, BACKGROUND_NICENESS);
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
  const hurry = (): void => {
    clearInterval(watch);
    try {
      renice(process.pid, daemonNiceness);
    } catch {
      handedOver = true;
      release();
      process.exit(3);
    }
  };
  // A process of another daemon or of `exec` waits for this make (its own daemon renices this
  // process itself, at once: src/executor/background-snapshot.ts).
  const watch = setInterval(() => isWanted(file) && hurry(), WANTED_POLL_MS);
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
