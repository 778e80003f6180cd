// Per-namespace disk quota (bytes and file count): the counter's contract, the walk that measures a
// namespace, and the refusal's text. Usage is measured by walking the namespace once, then kept up
// to date by the writes and deletes that pass through the workspace, and measured again when it is
// older than USAGE_TTL_MS or a write would pass a limit (files added by hand). It is counted once,
// in the shared store (store-quota.ts): this daemon's memory, or Redis when daemons share the
// workspace folder; the composition root picks the store.

import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { isTempName } from '../util/atomic-write.js';

/** Default per-namespace quota, bytes (1 GiB). */
export const DEFAULT_QUOTA_BYTES = 1024 * 1024 * 1024;
/** Default per-namespace quota, files. */
export const DEFAULT_QUOTA_FILES = 10_000;
/** How long a measured usage is trusted before it is measured again, ms. */
export const USAGE_TTL_MS = 60_000;

export interface QuotaLimits {
  bytes: number;
  files: number;
}

export interface Usage {
  bytes: number;
  files: number;
}

/** Bytes and regular files below `root` (symlinks and temporary files not counted), stopping past `maxFiles`. */
export async function measureUsage(root: string, maxFiles: number): Promise<Usage> {
  const usage: Usage = { bytes: 0, files: 0 };
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (usage.files > maxFiles) return;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile() && !isTempName(entry.name)) {
        usage.files++;
        usage.bytes += (await lstat(full).catch(() => undefined))?.size ?? 0;
      }
    }
  };
  await walk(root);
  return usage;
}

/** How the workspace counts one namespace's usage against its quota. */
export interface QuotaCounter {
  readonly limits: QuotaLimits;
  usage(): Promise<Usage>;
  /**
   * Admits a change of `bytes` and `files` or returns why not (the message names the limit to
   * raise). An admitted change is counted at once, so concurrent writers cannot both pass the
   * last free byte; `settle` it once the write is done.
   */
  admit(bytes: number, files: number, what: string, namespace: string): Promise<string | undefined>;
  /** An admitted change ended: kept when `written`, undone otherwise. Never throws. */
  settle(bytes: number, files: number, written: boolean): void;
  /** Counts a change made outside admit (a delete, pruned spill files). Never throws. */
  apply(bytes: number, files: number): void;
  /**
   * Runs `fn` as the only change of `file` (its path in the namespace) this counter admits: the
   * size a write replaces is read, admitted and settled with no other write or delete of that
   * file in between, so concurrent overwrites are counted against what they really replaced
   * (each subtracting the same old size would undercount). Across daemons too, for a shared count.
   */
  exclusive<T>(file: string, fn: () => Promise<T>): Promise<T>;
}

/** Makes the counter of a namespace (`namespace` as configured, `root` its folder). */
export type QuotaCounterFactory = (namespace: string, root: () => Promise<string>, limits: QuotaLimits) => QuotaCounter;

/** The refusal for a change that would pass a limit, or undefined. */
export function quotaRefusal(usage: Usage, limits: QuotaLimits, bytes: number, files: number, what: string, namespace: string): string | undefined {
  const ns = namespace === '' ? 'the workspace' : `namespace "${namespace}"`;
  if (files > 0 && usage.files + files > limits.files) {
    return `workspace quota exceeded: ${ns} already holds ${usage.files} files, the limit is ${limits.files}; delete files or ask the operator to raise limits.workspaceQuotaFiles`;
  }
  if (bytes > 0 && usage.bytes + bytes > limits.bytes) {
    return `workspace quota exceeded: writing ${what} would bring ${ns} to ${usage.bytes + bytes} bytes, over its ${limits.bytes}-byte quota; delete files or ask the operator to raise limits.workspaceQuotaBytes`;
  }
  return undefined;
}
