// What a crash or time leaves in the workspace: temporary files of writes that never reached their
// rename (kill -9, power loss) and execute_code spill files (outputs/execution-*.json) past their
// age or count. Swept when the workspace is first used and then periodically, always by age, so a
// write in progress is never touched.

import { lstat, readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { isTempName } from '../util/atomic-write.js';

/** A temporary file older than this is debris, ms (no write takes this long). */
export const TEMP_MAX_AGE_MS = 5 * 60_000;
/** Folder and name prefix of execute_code spill files inside a namespace. */
export const OUTPUTS_DIR = 'outputs';
export const SPILL_PREFIX = 'execution-';
/** Most entries one sweep visits, so a huge tree cannot make a sweep unbounded. */
const MAX_SWEEP_ENTRIES = 200_000;

export interface SpillPolicy {
  /** Spill files kept per namespace; older ones go first. */
  keep: number;
  /** Age past which a spill file is removed, ms. */
  maxAgeMs: number;
}

export function isSpillFile(relativePath: string): boolean {
  const parts = relativePath.split('/');
  return parts.length >= 2 && parts[parts.length - 2] === OUTPUTS_DIR && (parts[parts.length - 1] ?? '').startsWith(SPILL_PREFIX);
}

/** Removes old temporary files and expired spill files below `root`; returns how many were removed. */
export async function sweepDebris(root: string, spill: SpillPolicy, now = Date.now()): Promise<number> {
  let visited = 0;
  let removed = 0;
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (++visited > MAX_SWEEP_ENTRIES) return;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        await walk(full);
        continue;
      }
      const temp = isTempName(entry.name);
      const spillFile = entry.isFile() && path.basename(dir) === OUTPUTS_DIR && entry.name.startsWith(SPILL_PREFIX);
      if (!temp && !spillFile) continue;
      const info = await lstat(full).catch(() => undefined);
      if (!info) continue;
      const limit = temp ? TEMP_MAX_AGE_MS : spill.maxAgeMs;
      if (now - info.mtimeMs > limit && (await unlink(full).then(() => true, () => false))) removed++;
    }
  };
  await walk(root);
  return removed;
}

/** Keeps the newest `keep` spill files of one outputs/ folder; returns the bytes and files removed. */
export async function pruneSpills(outputsDir: string, keep: number): Promise<{ bytes: number; files: number }> {
  const names = (await readdir(outputsDir).catch(() => [] as string[])).filter((n) => n.startsWith(SPILL_PREFIX) && !isTempName(n));
  const freed = { bytes: 0, files: 0 };
  if (names.length <= keep) return freed;
  const dated = await Promise.all(
    names.map(async (name) => ({ name, info: await lstat(path.join(outputsDir, name)).catch(() => undefined) })),
  );
  const files = dated.filter((d) => d.info?.isFile()).sort((a, b) => (a.info?.mtimeMs ?? 0) - (b.info?.mtimeMs ?? 0) || (a.name < b.name ? -1 : 1));
  for (const { name, info } of files.slice(0, Math.max(0, files.length - keep))) {
    if (await unlink(path.join(outputsDir, name)).then(() => true, () => false)) {
      freed.files++;
      freed.bytes += info?.size ?? 0;
    }
  }
  return freed;
}
