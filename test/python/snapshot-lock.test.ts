// One maker per snapshot file (workers/python/snapshot-lock.ts): whoever holds the lock makes the
// file and everyone else waits for it, so the daemon's background maker and a Python process that
// needs the snapshot at the same moment never boot two Pyodides for one file. A lock whose maker
// died is taken over; a waiter's mark tells a low-priority maker that a call is waiting.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isWanted, lockSnapshot, makerOf, markWanted, unlockSnapshot, waitForMaker } from '../../workers/python/snapshot-lock.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function snapshotPath(): string {
  dir = mkdtempSync(path.join(tmpdir(), 'cem-snap-lock-'));
  return path.join(dir, 'cache', 'pyodide-test.snap');
}

describe('the snapshot maker lock', () => {
  it('lets one maker hold it; a second one waits until it is given up', async () => {
    const file = snapshotPath();
    expect(lockSnapshot(file)).toBe(true);
    expect(makerOf(file)).toBe(process.pid);
    expect(lockSnapshot(file)).toBe(false);
    const t = performance.now();
    setTimeout(() => unlockSnapshot(file), 300);
    await waitForMaker(file, 10_000);
    expect(performance.now() - t).toBeGreaterThanOrEqual(250);
    expect(makerOf(file)).toBeUndefined();
    expect(lockSnapshot(file)).toBe(true);
  });

  it('takes over the lock of a maker that died', () => {
    const file = snapshotPath();
    expect(lockSnapshot(file)).toBe(true);
    // A pid that existed and is gone now: a process that ran and exited.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    writeFileSync(`${file}.lock`, dead);
    expect(makerOf(file)).toBeUndefined();
    expect(lockSnapshot(file)).toBe(true);
    expect(makerOf(file)).toBe(process.pid);
  });

  it("passes a waiter's mark to the maker, and drops it with the lock", () => {
    const file = snapshotPath();
    expect(lockSnapshot(file)).toBe(true);
    expect(isWanted(file)).toBe(false);
    markWanted(file);
    expect(isWanted(file)).toBe(true);
    unlockSnapshot(file);
    expect(isWanted(file)).toBe(false);
  });
});
