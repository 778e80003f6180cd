// The workspace: the only file system guest code and the workspace tools ever see. Every path is
// checked here, once, so confinement does not depend on callers remembering to check. Writes are
// atomic (temporary file, fsync, rename) and counted against the namespace's quota.

import { constants as fsc } from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, realpath, rmdir, stat, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { LocalFolder, WorkspaceNamespace, WorkspaceStore } from './workspace-store.js';
import { isTempName, writeFileAtomic } from '../util/atomic-write.js';
import { isSpillFile, pruneSpills, sweepDebris } from './debris-sweeper.js';
import type { SpillPolicy } from './debris-sweeper.js';
import { DEFAULT_QUOTA_BYTES, DEFAULT_QUOTA_FILES } from './quota.js';
import type { QuotaCounter, QuotaCounterFactory, QuotaLimits } from './quota.js';
import { storeQuotas } from './store-quota.js';
import { DaemonError, isDaemonError } from '../util/daemon-error.js';

export type WorkspaceErrorCode =
  | 'PATH_INVALID'
  | 'PATH_OUTSIDE'
  | 'NOT_FOUND'
  | 'TOO_LARGE'
  | 'IS_DIRECTORY'
  | 'NOT_A_FILE'
  | 'QUOTA_EXCEEDED'
  | 'DISK_FULL';

export class WorkspaceError extends DaemonError {
  declare readonly code: WorkspaceErrorCode;
  constructor(code: WorkspaceErrorCode, message: string) {
    super(code, message);
    this.name = 'WorkspaceError'; // a guest sees it as its code's row says (util/daemon-error.ts)
  }
}

/** Longest path accepted, characters. */
export const MAX_PATH_CHARS = 1024;
/** Longest single path segment, bytes (the common file system limit). */
export const MAX_SEGMENT_BYTES = 255;
/** Most entries list_files returns; a larger tree is cut, sorted first. */
export const MAX_LIST_ENTRIES = 10_000;

export interface WorkspaceOptions {
  /** Absolute or relative root folder; created if missing. */
  root: string;
  /** Largest file read or written, bytes. */
  maxFileBytes: number;
  /** Per-namespace quota, bytes. Default 1 GiB. */
  quotaBytes?: number;
  /** Per-namespace quota, files. Default 10,000. */
  quotaFiles?: number;
  /** execute_code spill files (outputs/execution-*) kept per namespace. Default 100. */
  spillFilesKept?: number;
  /** Age past which spill files are removed, ms. Default 24 h. */
  spillMaxAgeMs?: number;
  /** Interval of the debris sweep (old temporary files, expired spill files), ms. Default 10 min; 0 = only once, at first use. */
  sweepIntervalMs?: number;
  /** Where each namespace's usage is counted: the daemon's shared store (default: a memory store of this workspace's own). */
  quotaCounter?: QuotaCounterFactory;
}

export const DEFAULT_SPILL_FILES_KEPT = 100;
export const DEFAULT_SPILL_MAX_AGE_MS = 24 * 3600_000;
const DEFAULT_SWEEP_INTERVAL_MS = 10 * 60_000;

export class Workspace implements WorkspaceStore {
  readonly root: string;
  readonly maxFileBytes: number;
  readonly quota: QuotaLimits;
  readonly spill: SpillPolicy;
  readonly #quotaCounter: QuotaCounterFactory;
  readonly #views = new Map<string, WorkspaceView>();
  readonly #sweepIntervalMs: number;
  #sweeper: NodeJS.Timeout | undefined;
  #sweeping: Promise<number> | undefined;
  #closed = false;

  constructor(options: WorkspaceOptions) {
    this.root = path.resolve(options.root);
    this.maxFileBytes = options.maxFileBytes;
    this.quota = { bytes: options.quotaBytes ?? DEFAULT_QUOTA_BYTES, files: options.quotaFiles ?? DEFAULT_QUOTA_FILES };
    this.spill = { keep: options.spillFilesKept ?? DEFAULT_SPILL_FILES_KEPT, maxAgeMs: options.spillMaxAgeMs ?? DEFAULT_SPILL_MAX_AGE_MS };
    this.#sweepIntervalMs = options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
    this.#quotaCounter = options.quotaCounter ?? storeQuotas();
  }

  /** The view of one agent's namespace ('' is the root itself). */
  namespace(ns: string): WorkspaceView {
    this.#startSweeping();
    let view = this.#views.get(ns);
    if (!view) {
      const rel = ns === '' ? '' : normalizeRelative(ns, 'workspace namespace');
      view = new WorkspaceView(path.join(this.root, rel), this.maxFileBytes, rel, this.quota, this.spill, this.#quotaCounter);
      this.#views.set(ns, view);
    }
    return view;
  }

  /** Removes crash debris and expired spill files now; resolves with how many files went. */
  sweep(): Promise<number> {
    this.#sweeping ??= sweepDebris(this.root, this.spill).finally(() => {
      this.#sweeping = undefined;
    });
    return this.#sweeping;
  }

  /** Stops the periodic sweep (idempotent). */
  close(): void {
    this.#closed = true;
    if (this.#sweeper) clearInterval(this.#sweeper);
    this.#sweeper = undefined;
  }

  #startSweeping(): void {
    if (this.#sweeper || this.#closed) return;
    const run = (): void => void this.sweep().catch(() => undefined);
    run();
    this.#sweeper = setInterval(run, this.#sweepIntervalMs > 0 ? this.#sweepIntervalMs : 2 ** 31 - 1);
    this.#sweeper.unref();
  }
}

export class WorkspaceView implements WorkspaceNamespace {
  #realRoot: string | undefined;
  readonly #quota: QuotaCounter;
  /** Its files are a local folder: the worker may read them itself (WorkspaceNamespace.localFolder). */
  readonly localFolder: LocalFolder = Object.freeze({ root: () => this.#root() });

  constructor(
    readonly root: string,
    readonly maxFileBytes: number,
    readonly namespaceName: string,
    quota: QuotaLimits = { bytes: DEFAULT_QUOTA_BYTES, files: DEFAULT_QUOTA_FILES },
    readonly spill: SpillPolicy = { keep: DEFAULT_SPILL_FILES_KEPT, maxAgeMs: DEFAULT_SPILL_MAX_AGE_MS },
    counter: QuotaCounterFactory = storeQuotas(),
  ) {
    this.#quota = counter(namespaceName, () => this.#root(), quota);
  }

  /** Bytes and files this namespace holds, and its quota. */
  async usage(): Promise<{ bytes: number; files: number; quota_bytes: number; quota_files: number }> {
    const u = await this.#quota.usage();
    return { bytes: u.bytes, files: u.files, quota_bytes: this.#quota.limits.bytes, quota_files: this.#quota.limits.files };
  }

  async readFile(file: unknown): Promise<{ content: string; size: number }> {
    const full = await this.#resolveExisting(file, 'filename');
    const info = await stat(full).catch((err: unknown) => {
      throw fromErrno(err, file);
    });
    if (info.isDirectory()) throw new WorkspaceError('IS_DIRECTORY', `${display(file)} is a directory; use list_files to see its content`);
    if (!info.isFile()) throw new WorkspaceError('NOT_A_FILE', `${display(file)} is not a regular file`);
    if (info.size > this.maxFileBytes) {
      throw new WorkspaceError('TOO_LARGE', `${display(file)} is ${info.size} bytes, over the ${this.maxFileBytes}-byte file limit`);
    }
    // O_NOFOLLOW: the final component was checked above; refuse a symlink swapped in since.
    // O_NONBLOCK: a FIFO swapped in since cannot hold the open (and a thread of the pool) forever.
    const handle = await open(full, fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK).catch((err: unknown) => {
      throw fromErrno(err, file);
    });
    try {
      // A folder on the way swapped for a symlink since realpath leads the open elsewhere (another
      // agent's namespace): what was opened must be inside, and still a regular file.
      await this.#assertOpenedInside(handle.fd, file);
      if (!(await handle.stat()).isFile()) throw new WorkspaceError('NOT_A_FILE', `${display(file)} is not a regular file`);
      // Never more than the limit, however the file grows meanwhile (readFile would take it all).
      const content = await readAtMost(handle, info.size, this.maxFileBytes);
      if (content === undefined) throw new WorkspaceError('TOO_LARGE', `${display(file)} grew past the ${this.maxFileBytes}-byte file limit while it was read`);
      return { content, size: Buffer.byteLength(content) };
    } finally {
      await handle.close();
    }
  }

  async writeFile(file: unknown, content: unknown): Promise<{ bytes: number }> {
    if (typeof content !== 'string') throw new WorkspaceError('PATH_INVALID', `content must be a string, got ${typeName(content)}; use JSON.stringify for data`);
    const bytes = Buffer.byteLength(content);
    if (bytes > this.maxFileBytes) throw new WorkspaceError('TOO_LARGE', `content is ${bytes} bytes, over the ${this.maxFileBytes}-byte file limit`);
    const rel = normalizeRelative(file, 'filename');
    const root = await this.#root();
    const full = path.join(root, rel);
    await this.#mkdirInside(path.dirname(full)).catch((err: unknown) => {
      throw isDaemonError(err) ? err : fromErrno(err, file);
    });
    // One change of this file at a time: the size it replaces is the one on disk when it lands.
    return this.#quota.exclusive(rel, () => this.#writeCounted(full, rel, file, content, bytes));
  }

  async #writeCounted(full: string, rel: string, file: unknown, content: string, bytes: number): Promise<{ bytes: number }> {
    const existing = await lstat(full).catch(() => undefined);
    if (existing?.isSymbolicLink()) {
      // Writing through a link would write wherever it points; the guest cannot make links, so one
      // here was planted from outside, and is refused whatever its target.
      throw new WorkspaceError('NOT_A_FILE', `${display(file)} is a symbolic link; write to a regular file instead`);
    }
    if (existing?.isDirectory()) throw new WorkspaceError('IS_DIRECTORY', `${display(file)} is a directory`);
    const delta = { bytes: bytes - (existing?.size ?? 0), files: existing ? 0 : 1 };
    const refusal = await this.#quota.admit(delta.bytes, delta.files, display(file), this.namespaceName);
    if (refusal) throw new WorkspaceError('QUOTA_EXCEEDED', refusal);
    try {
      await writeFileAtomic(full, content);
    } catch (err) {
      this.#quota.settle(delta.bytes, delta.files, false);
      throw fromErrno(err, file);
    }
    this.#quota.settle(delta.bytes, delta.files, true);
    if (isSpillFile(rel)) {
      const freed = await pruneSpills(path.dirname(full), this.spill.keep);
      this.#quota.apply(-freed.bytes, -freed.files);
    }
    return { bytes };
  }

  async deleteFile(file: unknown): Promise<void> {
    const rel = normalizeRelative(file, 'filename');
    const root = await this.#root();
    const full = path.join(root, rel);
    return this.#quota.exclusive(rel, async () => {
      const info = await lstat(full).catch(() => undefined);
      if (!info) throw new WorkspaceError('NOT_FOUND', `File not found: ${display(file)}`);
      // A symlink is removed itself, never followed, so deleting one cannot touch its target.
      if (!info.isSymbolicLink()) await this.#assertInside(await realpath(path.dirname(full)), file);
      if (info.isDirectory()) {
        const entries = await readdir(full);
        if (entries.length > 0) throw new WorkspaceError('IS_DIRECTORY', `${display(file)} is a non-empty directory`);
        await rmdir(full);
        return;
      }
      await unlink(full);
      if (!info.isSymbolicLink()) this.#quota.apply(-info.size, -1);
    });
  }

  /** Files below subpath, recursively, relative to the namespace root, sorted. */
  async listFiles(subpath: unknown = '.'): Promise<string[]> {
    const rel = subpath === '.' || subpath === '' || subpath === undefined ? '' : normalizeRelative(subpath, 'subpath');
    const root = await this.#root();
    const start = path.join(root, rel);
    const info = await stat(start).catch(() => undefined);
    if (!info) return rel === '' ? [] : Promise.reject(new WorkspaceError('NOT_FOUND', `Directory not found: ${display(subpath)}`));
    await this.#assertInside(await realpath(start), subpath);
    if (!info.isDirectory()) return [rel];
    const out: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      const entries = await readdir(dir, { withFileTypes: true });
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const entry of entries) {
        if (out.length >= MAX_LIST_ENTRIES) return;
        const full = path.join(dir, entry.name);
        // Symlinks are not followed: a link out of the workspace must not reveal what is there.
        if (entry.isDirectory()) await walk(full);
        else if (entry.isFile() && !isTempName(entry.name)) out.push(toPosix(path.relative(root, full)));
      }
    };
    await walk(start);
    return out;
  }

  async stats(): Promise<{ path: string; file_count: number; total_bytes: number }> {
    const files = await this.listFiles('.');
    let total = 0;
    const root = await this.#root();
    for (const f of files) total += (await stat(path.join(root, f)).catch(() => undefined))?.size ?? 0;
    return { path: this.namespaceName === '' ? '.' : this.namespaceName, file_count: files.length, total_bytes: total };
  }

  async #root(): Promise<string> {
    if (this.#realRoot === undefined) {
      await mkdir(this.root, { recursive: true });
      this.#realRoot = await realpath(this.root);
    }
    return this.#realRoot;
  }

  async #resolveExisting(file: unknown, what: string): Promise<string> {
    const rel = normalizeRelative(file, what);
    const root = await this.#root();
    const full = path.join(root, rel);
    let real: string;
    try {
      real = await realpath(full);
    } catch {
      throw new WorkspaceError('NOT_FOUND', `File not found: ${display(file)}`);
    }
    await this.#assertInside(real, file);
    return real;
  }

  async #assertInside(real: string, original: unknown): Promise<void> {
    const root = await this.#root();
    if (real !== root && !real.startsWith(root + path.sep)) {
      throw new WorkspaceError('PATH_OUTSIDE', `Access denied: ${display(original)} leads outside the workspace`);
    }
  }

  /** Where an open descriptor really is (Linux shows it in /proc; elsewhere the realpath check stands alone). */
  async #assertOpenedInside(fd: number, original: unknown): Promise<void> {
    if (process.platform !== 'linux') return;
    const opened = await readlink(`/proc/self/fd/${fd}`).catch(() => undefined);
    if (opened !== undefined) await this.#assertInside(opened, original);
  }

  /** mkdir -p, refusing to create through a symlinked ancestor that leads out. */
  async #mkdirInside(dir: string): Promise<void> {
    const root = await this.#root();
    let existing = dir;
    while (existing !== root && !(await lstat(existing).catch(() => undefined))) existing = path.dirname(existing);
    await this.#assertInside(await realpath(existing), path.relative(root, dir));
    const info = await stat(existing);
    if (!info.isDirectory()) throw new WorkspaceError('NOT_A_FILE', `${toPosix(path.relative(root, existing))} is a file, not a directory`);
    await mkdir(dir, { recursive: true });
  }
}

/**
 * Checks and normalizes a guest-supplied relative path. Refuses, with the reason: non-strings,
 * empty, NUL and control characters, backslashes, absolute paths, `..` that climbs out, and
 * over-long names.
 */
export function normalizeRelative(input: unknown, what: string): string {
  if (typeof input !== 'string') throw new WorkspaceError('PATH_INVALID', `${what} must be a string, got ${typeName(input)}`);
  if (input.length === 0) throw new WorkspaceError('PATH_INVALID', `${what} must not be empty`);
  if (input.length > MAX_PATH_CHARS) throw new WorkspaceError('PATH_INVALID', `${what} is ${input.length} characters; the limit is ${MAX_PATH_CHARS}`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(input)) throw new WorkspaceError('PATH_INVALID', `${what} contains a NUL or control character`);
  if (input.includes('\\')) throw new WorkspaceError('PATH_INVALID', `${what} contains a backslash; use / to separate folders`);
  if (path.posix.isAbsolute(input) || /^[A-Za-z]:\//.test(input)) {
    throw new WorkspaceError('PATH_OUTSIDE', `Access denied: ${what} ${display(input)} is absolute; paths are relative to the workspace`);
  }
  const normal = path.posix.normalize(input).replace(/\/+$/, '');
  if (normal === '..' || normal.startsWith('../')) {
    throw new WorkspaceError('PATH_OUTSIDE', `Access denied: ${what} ${display(input)} leads outside the workspace`);
  }
  const cleaned = normal === '.' ? '' : normal;
  if (cleaned === '') throw new WorkspaceError('PATH_INVALID', `${what} ${display(input)} names the workspace itself, not a file`);
  for (const segment of cleaned.split('/')) {
    if (Buffer.byteLength(segment) > MAX_SEGMENT_BYTES) {
      throw new WorkspaceError('PATH_INVALID', `${what} has a name longer than ${MAX_SEGMENT_BYTES} bytes`);
    }
  }
  return cleaned;
}

/** The file's text, reading at most `limit` + 1 bytes (undefined past `limit`); `size` is what stat said. */
async function readAtMost(handle: FileHandle, size: number, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  let want = Math.min(size, limit) + 1;
  for (;;) {
    const chunk = Buffer.allocUnsafe(want);
    const { bytesRead } = await handle.read(chunk, 0, want, total);
    if (bytesRead === 0) break;
    chunks.push(chunk.subarray(0, bytesRead));
    total += bytesRead;
    if (total > limit) return undefined;
    want = Math.min(64 * 1024, limit + 1 - total);
  }
  return Buffer.concat(chunks, total).toString('utf8');
}

/** A file system failure as a workspace error that names the guest's path, never the host's. */
function fromErrno(err: unknown, file: unknown): WorkspaceError {
  const code = (err as { code?: string })?.code;
  switch (code) {
    case 'ENOENT':
      return new WorkspaceError('NOT_FOUND', `File not found: ${display(file)}`);
    case 'ELOOP':
      return new WorkspaceError('NOT_A_FILE', `${display(file)} is a symbolic link; use a regular file`);
    case 'EISDIR':
      return new WorkspaceError('IS_DIRECTORY', `${display(file)} is a directory`);
    case 'ENOTDIR':
      return new WorkspaceError('NOT_A_FILE', `a parent of ${display(file)} is a file, not a directory`);
    case 'ENOSPC':
    case 'EDQUOT':
      return new WorkspaceError(
        'DISK_FULL',
        `the workspace disk is full (${code}) while writing ${display(file)}; the file keeps its previous content. Delete files you no longer need, or ask the operator to free disk space or lower limits.workspaceQuotaBytes`,
      );
    default:
      return new WorkspaceError('PATH_INVALID', `${display(file)} could not be opened (${code ?? 'unknown error'})`);
  }
}

function toPosix(p: string): string {
  return p.split(path.sep).join('/');
}

function display(p: unknown): string {
  const s = typeof p === 'string' ? p : String(typeName(p));
  return JSON.stringify(s.length > 120 ? `${s.slice(0, 117)}...` : s);
}

function typeName(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}
