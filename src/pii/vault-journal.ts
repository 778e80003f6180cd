// Agents' PII vaults on disk (the data directory's pii-vaults/), so tokens outlive sessions and
// daemon restarts. One file per agent, named by a hash of the agent (no name can spell another's
// file): a first line with the vault's HMAC secret, then one line per token issued or renewed,
// each sealed with AES-256-GCM (util/sealing.ts) under the folder's key and bound to its vault
// and token, so a line copied into another agent's file does not open. A token is on disk before
// the call that issued it returns. New files and compactions are written atomically (temp file,
// fsync, rename); appends are whole lines, fsynced, and a torn last line after a crash is skipped.
// Another process on the same folder (two stdio coordinators of one user) shares the files: a new
// vault's file is created exclusively (the first secret wins), and each appends to the same file.

import { createHash, randomBytes } from 'node:crypto';
import { constants as fsc } from 'node:fs';
import { mkdir, open, readFile, readdir, stat, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Sealer, SEALING_KEY_BYTES } from '../util/sealing.js';
import { createFileAtomic, writeFileAtomic } from '../util/atomic-write.js';
import type { PiiType } from './pii-types.js';

/** A token as a vault's journal keeps it: the last line for a token wins. */
export interface VaultRecord {
  token: string;
  type: PiiType;
  value: string;
  /** Epoch ms after which it no longer restores. */
  expiresAt: number;
}

const KEY_FILE = 'vault.key';
const SUFFIX = '.vault';
/** Compact when the file holds this many more lines than live tokens (renewals, expired tokens). */
const SLACK_LINES = 1000;
/** Beside a vault file while a process compacts it. */
const LOCK_SUFFIX = '.compacting';
/** A compaction lock older than this belongs to a process that died mid-way, ms. */
const STALE_LOCK_MS = 60_000;
/** Appends that find the file swapped by a compaction write again, at most this many times. */
const MAX_APPEND_ATTEMPTS = 4;

export interface LoadedVault {
  secret: Uint8Array;
  /** Oldest first; the last line for a token wins. */
  records: VaultRecord[];
  /** Lines read, to decide on compaction. */
  lines: number;
  /** Where the read ended, for reading what is appended later (since()). */
  position: JournalPosition;
}

/** A place in a vault file: the file (its inode: a compaction replaces it) and the bytes read of it. */
export interface JournalPosition {
  ino: number;
  bytes: number;
}

/** The file id of an agent's vault: a hash, so no agent name addresses another's file. */
export function vaultFileId(agent: string): string {
  return createHash('sha256').update(`agent\0${agent}`).digest('hex').slice(0, 40);
}

export class VaultJournal {
  readonly dir: string;
  #sealer: Sealer | undefined;
  /** Appends and rewrites of one file, one at a time. */
  readonly #queues = new Map<string, Promise<unknown>>();

  constructor(dir: string) {
    this.dir = dir;
  }

  /** Creates the folder and its key (0600) on first use. */
  async #key(): Promise<Sealer> {
    if (this.#sealer) return this.#sealer;
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const file = path.join(this.dir, KEY_FILE);
    let key: Buffer;
    try {
      key = await readFile(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      // O_EXCL: two daemons on one folder agree on the first key written.
      try {
        const handle = await open(file, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, 0o600);
        try {
          await handle.writeFile(randomBytes(SEALING_KEY_BYTES));
          await handle.sync();
        } finally {
          await handle.close();
        }
      } catch (raced) {
        if ((raced as NodeJS.ErrnoException).code !== 'EEXIST') throw raced;
      }
      key = await readFile(file);
    }
    if (key.length !== SEALING_KEY_BYTES) throw new Error(`${file} is not a ${SEALING_KEY_BYTES}-byte key; remove it (every saved PII token is then lost) or restore it from a backup`);
    this.#sealer = new Sealer(key);
    return this.#sealer;
  }

  #file(id: string): string {
    return path.join(this.dir, `${id}${SUFFIX}`);
  }

  #serial<T>(id: string, job: () => Promise<T>): Promise<T> {
    const next = (this.#queues.get(id) ?? Promise.resolve()).then(job, job);
    this.#queues.set(id, next.catch(() => undefined));
    return next;
  }

  /** Ids of every vault on disk. */
  async ids(): Promise<string[]> {
    try {
      return (await readdir(this.dir)).filter((n) => n.endsWith(SUFFIX) && !n.startsWith('.')).map((n) => n.slice(0, -SUFFIX.length));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }

  /** An agent's vault from disk, or undefined when it has none. */
  async load(id: string): Promise<LoadedVault | undefined> {
    const sealer = await this.#key();
    const read = await this.#read(id, undefined);
    if (read === undefined) return undefined;
    const lines = read.text.split('\n').filter((l) => l.length > 0);
    const head = parseLine(lines[0]) as { secret?: unknown } | undefined;
    if (typeof head?.secret !== 'string') throw new Error(`${this.#file(id)} has no vault header; remove the file (its tokens are then lost)`);
    const secret = this.#unseal(sealer, id, head.secret, id);
    return { secret, records: this.#records(sealer, id, lines.slice(1)), lines: lines.length, position: read.position };
  }

  /**
   * Tokens appended to an agent's file since `from` (by this process or another on the folder),
   * reading only the new lines; undefined when the file was rewritten since (load it again).
   */
  async since(id: string, from: JournalPosition): Promise<{ records: VaultRecord[]; position: JournalPosition } | undefined> {
    const sealer = await this.#key();
    const read = await this.#read(id, from);
    if (read === undefined) return undefined;
    return { records: this.#records(sealer, id, read.text.split('\n').filter((l) => l.length > 0)), position: read.position };
  }

  /** The file's text (from `from` on, when it is still that file), up to its last whole line. */
  async #read(id: string, from: JournalPosition | undefined): Promise<{ text: string; position: JournalPosition } | undefined> {
    let handle;
    try {
      handle = await open(this.#file(id), fsc.O_RDONLY | fsc.O_NOFOLLOW);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const info = await handle.stat();
      if (from !== undefined && (info.ino !== from.ino || info.size < from.bytes)) return undefined;
      const start = from?.bytes ?? 0;
      const bytes = await readFrom(handle, start, info.size);
      // A line still being appended (or torn by a crash) is read again next time, whole.
      const whole = bytes.lastIndexOf(0x0a) + 1;
      const text = (from === undefined ? bytes : bytes.subarray(0, whole)).toString('utf8');
      return { text, position: { ino: info.ino, bytes: start + whole } };
    } finally {
      await handle.close();
    }
  }

  #unseal(sealer: Sealer, id: string, sealed: string, place: string): Buffer {
    try {
      return sealer.open(sealed, place);
    } catch (error) {
      throw new Error(`${this.#file(id)} does not open with ${path.join(this.dir, KEY_FILE)} (another key, or tampered with); restore both from one backup, or remove the vault file (its tokens are then lost)`, { cause: error });
    }
  }

  #records(sealer: Sealer, id: string, lines: readonly string[]): VaultRecord[] {
    const records: VaultRecord[] = [];
    for (const line of lines) {
      const r = parseLine(line) as { t?: unknown; x?: unknown; s?: unknown } | undefined;
      // A torn last line (a crash mid-append) was never acknowledged: skip it.
      if (typeof r?.t !== 'string' || (typeof r.x !== 'number' && r.x !== null) || typeof r.s !== 'string') continue;
      const plain = this.#unseal(sealer, id, r.s, `${id}\0${r.t}`).toString('utf8');
      const cut = plain.indexOf('\0');
      records.push({ token: r.t, type: plain.slice(0, cut) as PiiType, value: plain.slice(cut + 1), expiresAt: r.x ?? Infinity });
    }
    return records;
  }

  /**
   * Creates a new vault's file with its secret, unless another process on the same folder created
   * it first: then resolves with theirs, whose secret the caller must use (one secret per agent,
   * so both processes mint the same tokens and read each other's).
   */
  async create(id: string, secret: Uint8Array): Promise<LoadedVault | undefined> {
    const sealer = await this.#key();
    const head = `${JSON.stringify({ v: 1, secret: sealer.seal(secret, id) })}\n`;
    try {
      await this.#serial(id, () => createFileAtomic(this.#file(id), head, 0o600));
      return undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const theirs = await this.load(id);
    if (theirs === undefined) throw new Error(`${this.#file(id)} vanished while it was created; retry`);
    return theirs;
  }

  /**
   * Writes a vault afresh (a compaction): its secret and the live tokens read at `from`. Another
   * process on the folder may append meanwhile: what it appended to the old file after `from` is
   * carried over once the new file is in place, and an append that lands in the old file later
   * sees the swap and writes again (append()). One compaction per file at a time across processes
   * (a lock file beside it); false when it was skipped (another compacts, or did since `from`).
   */
  async rewrite(id: string, secret: Uint8Array, records: readonly VaultRecord[], from: JournalPosition): Promise<boolean> {
    const sealer = await this.#key();
    const file = this.#file(id);
    const body = [JSON.stringify({ v: 1, secret: sealer.seal(secret, id) }), ...records.map((r) => recordLine(sealer, id, r))].join('\n');
    return this.#serial(id, async () => {
      const lock = await takeLock(`${file}${LOCK_SUFFIX}`);
      if (!lock) return false;
      try {
        let old;
        try {
          old = await open(file, fsc.O_RDONLY | fsc.O_NOFOLLOW);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
          throw error;
        }
        try {
          if ((await old.stat()).ino !== from.ino) return false;
          await writeFileAtomic(file, `${body}\n`, 0o600);
          // The old file stays readable through `old`: lines appended to it since `from`, whole.
          const tail = await readWholeLines(old, from.bytes);
          if (tail.length > 0) await appendDurably(file, tail);
        } finally {
          await old.close();
        }
        return true;
      } finally {
        await unlink(lock).catch(() => undefined);
      }
    });
  }

  /** Appends tokens issued or renewed; resolves once they are on disk, in the file that is current. */
  async append(id: string, records: readonly VaultRecord[]): Promise<void> {
    if (records.length === 0) return;
    const sealer = await this.#key();
    const text = `${records.map((r) => recordLine(sealer, id, r)).join('\n')}\n`;
    const file = this.#file(id);
    await this.#serial(id, async () => {
      // A compaction by another process may swap the file while this appends to the old one; the
      // lines are then written to the new one too (a duplicate line is harmless: the last one wins).
      for (let attempt = 0; attempt < MAX_APPEND_ATTEMPTS; attempt++) {
        const wrote = await appendDurably(file, text);
        const now = await stat(file).catch(() => undefined);
        if (now === undefined || now.ino === wrote) return;
      }
      throw new Error(`${file} was replaced ${MAX_APPEND_ATTEMPTS} times while tokens were written to it; the call did not keep its tokens`);
    });
  }

  /** Whether a file of `lines` lines holding `live` tokens is worth compacting. */
  static needsCompaction(lines: number, live: number): boolean {
    return lines > 2 * live + SLACK_LINES;
  }
}

function recordLine(sealer: Sealer, id: string, r: VaultRecord): string {
  return JSON.stringify({ t: r.token, x: Number.isFinite(r.expiresAt) ? r.expiresAt : null, s: sealer.seal(`${r.type}\0${r.value}`, `${id}\0${r.token}`) });
}

function parseLine(line: string | undefined): unknown {
  if (line === undefined) return undefined;
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}

/** Appends `text` with O_APPEND and fsyncs it; resolves with the inode it went to. */
async function appendDurably(file: string, text: string): Promise<number> {
  const handle = await open(file, fsc.O_WRONLY | fsc.O_APPEND | fsc.O_NOFOLLOW);
  try {
    await handle.write(text);
    await handle.datasync();
    return (await handle.stat()).ino;
  } finally {
    await handle.close();
  }
}

/** The bytes of an open file from `start` up to `end` (fewer if it is shorter). */
async function readFrom(handle: FileHandle, start: number, end: number): Promise<Buffer> {
  const buffer = Buffer.alloc(Math.max(0, end - start));
  let got = 0;
  while (got < buffer.length) {
    const { bytesRead } = await handle.read(buffer, got, buffer.length - got, start + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return buffer.subarray(0, got);
}

/** The whole lines of an open file from byte `start` on (a line still being written is left). */
async function readWholeLines(handle: FileHandle, start: number): Promise<string> {
  const bytes = await readFrom(handle, start, (await handle.stat()).size);
  return bytes.subarray(0, bytes.lastIndexOf(0x0a) + 1).toString('utf8');
}

/** Takes a lock file (O_EXCL); a stale one (its process died) is broken once. Undefined when held. */
async function takeLock(lock: string): Promise<string | undefined> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(lock, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW, 0o600);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return lock;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const held = await stat(lock).catch(() => undefined);
      if (held !== undefined && Date.now() - held.mtimeMs < STALE_LOCK_MS) return undefined;
      await unlink(lock).catch(() => undefined);
    }
  }
  return undefined;
}
