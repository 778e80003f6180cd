// What a reader of skill folders wants to know about one file (its sha256 digest, its size, and
// whatever else is derived from its bytes), computed once per version of the file. A version is
// found by its identity (device, inode, size, change and modification times in nanoseconds), so a
// request that lists 62 skills of 1 MB costs a few stats, not 62 MB read and hashed on the event
// loop: that was every stateless skills/list (issue 33 item 3). Reads run in libuv's pool and the
// hash in Node's crypto job pool (WebCrypto's digest), never on the event loop.

import { webcrypto } from 'node:crypto';
import { open, stat } from 'node:fs/promises';
import type { BigIntStats } from 'node:fs';
import { LRUCache } from 'lru-cache';

/** Versions remembered, across every skill folder (an entry is a few hundred bytes). */
export const SKILL_FILE_FACTS_ENTRIES = 8_192;
/**
 * A version is remembered only once it was last changed this long ago, ms: file-system clocks
 * are coarse (a few ms), so two writes in one tick with one size could share an identity.
 */
export const SETTLED_AFTER_MS = 3_000;

export interface FileFacts<T> {
  /** `sha256:HEX` of the bytes. */
  digest: string;
  size: number;
  /** What `derive` made of the bytes. */
  derived: T;
}

function identityOf(s: BigIntStats): string {
  return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
}

/**
 * Facts of files by identity. `derive` runs once per version (for SKILL.md, its front matter);
 * concurrent askers of one version share one read.
 */
export class SkillFileFacts<T> {
  readonly #derive: (bytes: Buffer, file: string) => T;
  readonly #now: () => number;
  readonly #known = new LRUCache<string, FileFacts<T>>({ max: SKILL_FILE_FACTS_ENTRIES });
  readonly #reading = new Map<string, Promise<FileFacts<T> | null>>();

  /**
   * `wallClockMs`: epoch milliseconds (Date.now), compared with the files' change times. The
   * daemon's own clock (performance.now(), ms since start) is not one: with it no version ever
   * looked settled, nothing was remembered, and every skills/list read and hashed every file.
   */
  constructor(derive: (bytes: Buffer, file: string) => T, wallClockMs: () => number = Date.now) {
    this.#derive = derive;
    this.#now = wallClockMs;
  }

  /** The facts of `file` as it is now, or null when it cannot be read (gone, not a file). */
  async of(file: string): Promise<FileFacts<T> | null> {
    const found = await stat(file, { bigint: true }).catch(() => null);
    if (found === null || !found.isFile()) return null;
    const identity = identityOf(found);
    const known = this.#known.get(identity);
    if (known !== undefined) return known;
    let reading = this.#reading.get(identity);
    if (reading === undefined) {
      reading = this.#read(file).finally(() => this.#reading.delete(identity));
      this.#reading.set(identity, reading);
    }
    return reading;
  }

  /** Reads through one descriptor, so the identity remembered is that of the bytes hashed. */
  async #read(file: string): Promise<FileFacts<T> | null> {
    const handle = await open(file, 'r').catch(() => null);
    if (handle === null) return null;
    try {
      const before = await handle.stat({ bigint: true });
      if (!before.isFile()) return null;
      const bytes = await handle.readFile();
      const after = await handle.stat({ bigint: true });
      const digest = Buffer.from(await webcrypto.subtle.digest('SHA-256', bytes)).toString('hex');
      const facts: FileFacts<T> = { digest: `sha256:${digest}`, size: bytes.length, derived: this.#derive(bytes, file) };
      const identity = identityOf(after);
      const settled = Number(after.ctimeNs / 1_000_000n) <= this.#now() - SETTLED_AFTER_MS;
      if (identity === identityOf(before) && settled) this.#known.set(identity, facts);
      return facts;
    } catch {
      return null;
    } finally {
      await handle.close().catch(() => undefined);
    }
  }
}
