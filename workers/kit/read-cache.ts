// Decoded contents of files this worker thread read lately. Turning a large file into a string
// costs more than reading it (about 0.65 ms per 1.4 MB on the 2-core machine, measured), and
// agents re-read the same inputs call after call. An entry is found only by the identity of one
// version of one file (device, inode, size, and its change and modification times in
// nanoseconds), and only after fast-read.ts has authorized the path for the call asking: the
// cache saves the bytes, never a check. A file is cached only if its identity did not change
// while it was read. Strings are immutable, so no call can change what a later one gets.

import type { BigIntStats } from 'node:fs';

/** Files smaller than this are cheap to read and are not kept, bytes. */
export const MIN_CACHED_BYTES = 64 * 1024;
/** Files larger than this are not kept (one would crowd out the rest), bytes. */
const MAX_CACHED_FILE_BYTES = 16 * 1024 * 1024;
/** What one thread keeps at most, bytes of string (the thread's heap limit has room for it: thread-pool.ts). */
export const MAX_CACHE_BYTES = 32 * 1024 * 1024;

/** The identity of one version of one file, as fstat(..., { bigint: true }) sees it. */
export function versionKey(info: BigIntStats): string {
  return `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
}

export function worthCaching(size: number): boolean {
  return size >= MIN_CACHED_BYTES && size <= MAX_CACHED_FILE_BYTES;
}

interface Entry {
  text: string;
  bytes: number;
}

const entries = new Map<string, Entry>();
let total = 0;

export function cachedText(key: string): string | undefined {
  const entry = entries.get(key);
  if (!entry) return undefined;
  // Most recently used last: eviction takes from the front.
  entries.delete(key);
  entries.set(key, entry);
  return entry.text;
}

/** Keeps `text`; `oneByte` when every character fits a byte (V8 then stores one byte each). */
export function keepText(key: string, text: string, oneByte: boolean): void {
  const bytes = oneByte ? text.length : 2 * text.length;
  if (entries.has(key) || bytes > MAX_CACHE_BYTES) return;
  entries.set(key, { text, bytes });
  total += bytes;
  for (const [oldest, entry] of entries) {
    if (total <= MAX_CACHE_BYTES) break;
    entries.delete(oldest);
    total -= entry.bytes;
  }
}

/** Bytes the cache holds: not the running call's, so left out of its memory figure (memory.ts). */
export function cachedBytes(): number {
  return total;
}

/** Forgets everything (an idle thread gives the memory back: pool-host.ts). */
export function clearReadCache(): void {
  entries.clear();
  total = 0;
}
