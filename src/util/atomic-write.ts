// Every file the daemon writes goes through here: a temporary file in the same folder, written,
// fsynced and renamed over the target, then the folder fsynced. Readers see the old or the new
// version, never a mix; a crash (kill -9, power loss) leaves the last acknowledged version whole.

import { randomBytes } from 'node:crypto';
import { constants as fsc } from 'node:fs';
import { link, open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';

/** Names of temporary files start with this; listings hide them and sweeps remove old ones. */
export const TEMP_PREFIX = '.cem-tmp-';

export function isTempName(name: string): boolean {
  return path.basename(name).startsWith(TEMP_PREFIX);
}

/**
 * Writes `content` to `target` atomically and durably. The temporary file is created with
 * O_EXCL | O_NOFOLLOW, so nothing planted at its (random) name is followed or reused. On any
 * failure the temporary file is removed and the error (with its errno code) is thrown.
 */
export async function writeFileAtomic(target: string, content: string | Uint8Array, mode = 0o644): Promise<void> {
  await writeThenPlace(target, content, mode, rename);
}

/**
 * Creates `target` with `content`, atomically and durably, only if it does not exist: the whole
 * file appears at once or not at all, and when another writer (another process) created it first
 * this throws that error, code EEXIST, leaving theirs untouched.
 */
export async function createFileAtomic(target: string, content: string | Uint8Array, mode = 0o644): Promise<void> {
  await writeThenPlace(target, content, mode, async (temp, final) => {
    try {
      await link(temp, final);
    } finally {
      await unlink(temp).catch(() => undefined);
    }
  });
}

async function writeThenPlace(target: string, content: string | Uint8Array, mode: number, place: (temp: string, target: string) => Promise<void>): Promise<void> {
  const dir = path.dirname(target);
  const temp = path.join(dir, `${TEMP_PREFIX}${path.basename(target).slice(0, 64)}-${randomBytes(6).toString('hex')}`);
  const handle = await open(temp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW, mode);
  let renamed = false;
  try {
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await place(temp, target);
    renamed = true;
  } finally {
    if (!renamed) await unlink(temp).catch(() => undefined);
  }
  await syncDir(dir);
}

/** fsync of a folder makes a rename in it durable; some file systems refuse it, which is harmless. */
async function syncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, fsc.O_RDONLY);
    await handle.sync();
  } catch {
    // EISDIR/EINVAL/EPERM on file systems without directory fsync: the rename still happened.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
