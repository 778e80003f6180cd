// The on-disk protocol of a skill folder, `DIR/NAME/{index.js|index.ts|index.py, SKILL.md}`.
//
// Atomicity: a save writes a complete new folder `DIR/.tmp.NAME.RANDOM` (files fsynced), then
// renames it onto `DIR/NAME`; when `NAME` exists the rename fails, so the old folder is first
// renamed aside to `DIR/.old.NAME.RANDOM` and the rename retried (another writer may slip in
// between; the loop just goes round again). Whoever renames in last wins, and a folder is only
// ever renamed in whole, never edited in place. A crash leaves either the old folder in place,
// or no `NAME` and the old version whole in `.old.NAME.*`, which `recoverInterruptedSaves`
// renames back; stale `.tmp.*` folders are removed, at start and periodically while running.
// Readers stat the folder before and after
// reading its files and retry when it was swapped meanwhile, or when it is briefly missing while
// a save is in flight, so a read sees one whole version.
// (POSIX has no portable atomic exchange of two directories, and a symlink pointer would change
// the folder layout users edit by hand; this keeps the layout plain.)

import { skillCodeFiles } from '../config/languages.js';
import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../util/logger.js';
import { SKILL_MD } from './front-matter.js';
import { SkillError } from './skill-error.js';
import type { SkillLanguage } from './skill-types.js';

/** Each language's code file, from the runtimes' rows (src/executor/runtimes.ts). */
export const CODE_FILES = Object.freeze(skillCodeFiles()) as Readonly<Record<SkillLanguage, string>>;

const LANGUAGE_OF_FILE = new Map<string, SkillLanguage>(
  Object.entries(CODE_FILES).map(([language, file]) => [file, language as SkillLanguage]),
);

/** Temp folders older than this are debris of a crashed save, not a save in flight. */
const STALE_TEMP_MS = 60_000;
/**
 * How long a read keeps retrying while its folder is mid-swap or changes under it, ms: a time, not
 * a count, so a burst of saves by other writers (each swap takes milliseconds) cannot starve it.
 */
const READ_PATIENCE_MS = 3_000;

/** The code of a read that met its folder changing for longer than READ_PATIENCE_MS: busy, not broken. */
export const FOLDER_BUSY = 'SKILL_FOLDER_BUSY';

/** Whether a read failed only because other writers kept saving the folder. */
export function isFolderBusy(error: unknown): boolean {
  return errorCode(error) === FOLDER_BUSY;
}
/** Renames a save tries before giving up to other writers. */
const SWAP_ATTEMPTS = 1_000;

/** One consistent read of a skill folder. */
export interface SkillFolder {
  name: string;
  /** Code files present (normally exactly one). */
  codeFiles: string[];
  language?: SkillLanguage;
  code?: string;
  codeModified?: Date;
  /** SKILL.md text, if present. */
  markdown?: string;
}

export interface FileToWrite {
  name: string;
  content: string;
}

/** Whether a top-level entry of the skills folder is the store's own bookkeeping (or hidden). */
export function isHiddenEntry(entry: string): boolean {
  return entry.startsWith('.');
}

/** Reads `DIR/NAME` as one version; null when there is no such folder. */
export async function readSkillFolder(dir: string, name: string): Promise<SkillFolder | null> {
  const folder = join(dir, name);
  const giveUpAt = Date.now() + READ_PATIENCE_MS;
  for (let attempt = 1; ; attempt++) {
    const patient = Date.now() < giveUpAt;
    let before: Stats;
    try {
      before = await stat(folder);
    } catch (error) {
      if (!isMissing(error)) throw error;
      if (patient && (await saveInFlight(dir, name))) {
        await delay(backoffMs(attempt));
        continue;
      }
      return null;
    }
    if (!before.isDirectory()) return null;
    try {
      const result = await readFolderFiles(folder, name);
      const after = await stat(folder);
      if (sameVersion(before, after)) return result;
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
    if (!patient) throw Object.assign(new Error(`skill folder "${name}" kept changing while it was read`), { code: FOLDER_BUSY });
    await delay(backoffMs(attempt));
  }
}

async function readFolderFiles(folder: string, name: string): Promise<SkillFolder> {
  const entries = await readdir(folder);
  const codeFiles = entries.filter((e) => LANGUAGE_OF_FILE.has(e)).sort();
  const result: SkillFolder = { name, codeFiles };
  const only = codeFiles.length === 1 ? codeFiles[0] : undefined;
  if (only !== undefined) {
    const path = join(folder, only);
    const [code, info] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
    result.code = code;
    result.codeModified = info.mtime;
    const language = LANGUAGE_OF_FILE.get(only);
    if (language) result.language = language;
  }
  if (entries.includes(SKILL_MD)) result.markdown = await readFile(join(folder, SKILL_MD), 'utf8');
  return result;
}

function sameVersion(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.dev === b.dev && a.ctimeMs === b.ctimeMs && a.mtimeMs === b.mtimeMs;
}

async function saveInFlight(dir: string, name: string): Promise<boolean> {
  try {
    const entries = await readdir(dir);
    return entries.some((e) => e.startsWith(`.tmp.${name}.`) || e.startsWith(`.old.${name}.`));
  } catch {
    return false;
  }
}

/**
 * Atomically replaces `DIR/NAME` with a folder holding exactly `files`, plus any other entries
 * (data files, notes) the previous version had besides its code and SKILL.md.
 */
export async function writeSkillFolder(dir: string, name: string, files: readonly FileToWrite[]): Promise<string> {
  await mkdir(dir, { recursive: true });
  const target = join(dir, name);
  let temp: string | null = await mkdtemp(join(dir, `.tmp.${name}.`));
  try {
    for (const file of files) await writeDurably(join(temp, file.name), file.content);
    await carryOverExtras(target, temp, new Set([...files.map((f) => f.name), ...LANGUAGE_OF_FILE.keys(), SKILL_MD]));
    await syncDirectory(temp);
    await swapIn(dir, name, temp);
    temp = null;
    await syncDirectory(dir);
    return target;
  } finally {
    if (temp !== null) await rm(temp, { recursive: true, force: true }).catch(() => undefined);
  }
}

async function swapIn(dir: string, name: string, temp: string): Promise<void> {
  const target = join(dir, name);
  const displaced: string[] = [];
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await rename(temp, target);
        return;
      } catch (error) {
        if (!isOccupied(error) || attempt >= SWAP_ATTEMPTS) throw error;
      }
      const aside = join(dir, `.old.${name}.${randomBytes(6).toString('hex')}`);
      try {
        await rename(target, aside);
        displaced.push(aside);
      } catch (error) {
        if (!isMissing(error) && !isBusy(error)) throw error;
        if (isBusy(error)) await delay(backoffMs(Math.min(attempt, 5)));
      }
    }
  } finally {
    await Promise.all(displaced.map((d) => rm(d, { recursive: true, force: true }).catch(() => undefined)));
  }
}

async function carryOverExtras(from: string, to: string, skip: ReadonlySet<string>): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(from);
  } catch {
    return;
  }
  for (const entry of entries) {
    if (skip.has(entry)) continue;
    await cp(join(from, entry), join(to, entry), { recursive: true, errorOnExist: false }).catch(() => undefined);
  }
}

/** writeSkillFolder for a save: a failure of the disk is logged whole and answered as SAVE_FAILED, without host paths. */
export async function saveSkillFolder(dir: string, name: string, logger: Logger, files: readonly FileToWrite[]): Promise<string> {
  try {
    return await writeSkillFolder(dir, name, files);
  } catch (error) {
    logger.error({ code: 'SKILL_SAVE_FAILED', skill: name, err: error }, 'could not write a skill folder');
    const code = errorCode(error);
    throw new SkillError('SAVE_FAILED', `Skill "${name}" was not saved: the skill folder could not be written${code ? ` (${code})` : ''}. The daemon logged the details; try again, or tell the operator.`);
  }
}

/** Renames `DIR/NAME` aside, then removes it; false when there was no such folder. */
export async function removeSkillFolder(dir: string, name: string): Promise<boolean> {
  const aside = join(dir, `.del.${name}.${randomBytes(6).toString('hex')}`);
  try {
    await rename(join(dir, name), aside);
  } catch (error) {
    if (isMissing(error)) return false;
    throw error;
  }
  await rm(aside, { recursive: true, force: true });
  return true;
}

/** Runs `fn` holding the lock of skill `name` (the store's per-name lock); by default, at once. */
export type NameLock = <T>(name: string, fn: () => Promise<T>) => Promise<T>;

/**
 * Undoes what a crashed save or delete left behind: restores displaced folders, removes debris.
 * Safe while the store runs: each name's debris is handled under `lock`, so this process's own
 * saves are never in flight beside it, and a temp folder written to in the last minute (another
 * process's save in flight) is left alone.
 */
export async function recoverInterruptedSaves(dir: string, logger: Logger, lock: NameLock = (_name, fn) => fn()): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    if (isMissing(error)) return;
    throw error;
  }
  for (const entry of entries) {
    const match = /^\.(tmp|old|del)\.([A-Za-z_][A-Za-z0-9_-]*)\.[^.]+$/.exec(entry);
    if (!match) continue;
    const [, kind, name] = match;
    if (name === undefined) continue;
    const path = join(dir, entry);
    try {
      await lock(name, async () => {
        if (kind === 'old' && !(await exists(join(dir, name)))) {
          await rename(path, join(dir, name));
          logger.warn({ code: 'SKILL_SAVE_RECOVERED', skill: name }, 'restored a skill left half-saved by an interrupted save');
          return;
        }
        if (kind === 'tmp' && Date.now() - (await stat(path)).mtimeMs < STALE_TEMP_MS) return;
        await rm(path, { recursive: true, force: true });
        logger.info({ code: 'SKILL_DEBRIS_REMOVED', entry }, 'removed a folder left behind by an interrupted save');
      });
    } catch (error) {
      if (!isMissing(error)) logger.warn({ code: 'SKILL_RECOVERY_FAILED', entry, err: error }, 'could not clean up after an interrupted save');
    }
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (isMissing(error)) return false;
    throw error;
  }
}

async function writeDurably(path: string, content: string): Promise<void> {
  const handle = await open(path, 'wx');
  try {
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** fsync a directory so a rename in it survives power loss; not possible on every platform. */
async function syncDirectory(path: string): Promise<void> {
  try {
    const handle = await open(path, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Windows cannot open directories; the rename is still atomic there.
  }
}

function backoffMs(attempt: number): number {
  return Math.min(2 ** attempt, 50);
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null ? (error as { code?: string }).code : undefined;
}

export function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function isOccupied(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOTDIR' || code === 'EISDIR' || isBusy(error);
}

/** A folder in use: transient on Windows (open handles, virus scanners), a real refusal elsewhere. */
function isBusy(error: unknown): boolean {
  const code = errorCode(error);
  if (code === 'EBUSY') return true;
  return process.platform === 'win32' && (code === 'EPERM' || code === 'EACCES');
}

/** The skill folders in `dir` (hidden entries and node_modules left out), sorted; none if `dir` is missing. */
export async function skillFolderNames(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory() && !isHiddenEntry(e.name) && e.name !== 'node_modules').map((e) => e.name).sort();
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return [];
    throw error;
  }
}
