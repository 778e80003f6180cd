// A workspace store with no folder: every namespace's files in a Map. Used by the contract suite
// (and by nothing in production) to prove the WorkspaceStore interface stands without the local
// folder: it has no `localFolder`, so the worker gets no read grant and every read_file goes
// through readFile. Paths, errors and quota refusals are the daemon's own (normalizeRelative,
// WorkspaceError, quotaRefusal), so callers cannot tell the stores apart by their answers.

import { MAX_LIST_ENTRIES, WorkspaceError, normalizeRelative } from '../../src/workspace/index.js';
import type { WorkspaceNamespace, WorkspaceStore } from '../../src/workspace/index.js';
import { DEFAULT_QUOTA_BYTES, DEFAULT_QUOTA_FILES, quotaRefusal } from '../../src/workspace/quota.js';
import type { QuotaLimits } from '../../src/workspace/quota.js';

export interface MemoryWorkspaceOptions {
  maxFileBytes: number;
  quotaBytes?: number;
  quotaFiles?: number;
}

export class MemoryWorkspace implements WorkspaceStore {
  readonly maxFileBytes: number;
  readonly quota: QuotaLimits;
  readonly #views = new Map<string, MemoryNamespace>();

  constructor(options: MemoryWorkspaceOptions) {
    this.maxFileBytes = options.maxFileBytes;
    this.quota = { bytes: options.quotaBytes ?? DEFAULT_QUOTA_BYTES, files: options.quotaFiles ?? DEFAULT_QUOTA_FILES };
  }

  namespace(ns: string): WorkspaceNamespace {
    const name = ns === '' ? '' : normalizeRelative(ns, 'workspace namespace');
    let view = this.#views.get(name);
    if (!view) {
      view = new MemoryNamespace(name, this.maxFileBytes, this.quota);
      this.#views.set(name, view);
    }
    return view;
  }

  async sweep(): Promise<number> {
    return 0;
  }

  close(): void {}
}

class MemoryNamespace implements WorkspaceNamespace {
  /** Path (posix, relative) -> content. A Map write is the atomic rename of this store. */
  readonly #files = new Map<string, string>();
  #bytes = 0;

  constructor(
    readonly namespaceName: string,
    readonly maxFileBytes: number,
    readonly limits: QuotaLimits,
  ) {}

  async readFile(file: unknown): Promise<{ content: string; size: number }> {
    const rel = normalizeRelative(file, 'filename');
    const content = this.#files.get(rel);
    if (content === undefined) {
      if (this.#isDirectory(rel)) throw new WorkspaceError('IS_DIRECTORY', `${display(file)} is a directory; use list_files to see its content`);
      throw new WorkspaceError('NOT_FOUND', `File not found: ${display(file)}`);
    }
    return { content, size: Buffer.byteLength(content) };
  }

  async writeFile(file: unknown, content: unknown): Promise<{ bytes: number }> {
    if (typeof content !== 'string') throw new WorkspaceError('PATH_INVALID', `content must be a string, got ${typeof content}; use JSON.stringify for data`);
    const bytes = Buffer.byteLength(content);
    if (bytes > this.maxFileBytes) throw new WorkspaceError('TOO_LARGE', `content is ${bytes} bytes, over the ${this.maxFileBytes}-byte file limit`);
    const rel = normalizeRelative(file, 'filename');
    if (this.#isDirectory(rel)) throw new WorkspaceError('IS_DIRECTORY', `${display(file)} is a directory`);
    const parts = rel.split('/');
    for (let i = 1; i < parts.length; i++) {
      if (this.#files.has(parts.slice(0, i).join('/'))) throw new WorkspaceError('NOT_A_FILE', `a parent of ${display(file)} is a file, not a directory`);
    }
    const old = this.#files.get(rel);
    const delta = { bytes: bytes - (old === undefined ? 0 : Buffer.byteLength(old)), files: old === undefined ? 1 : 0 };
    const refusal = quotaRefusal({ bytes: this.#bytes, files: this.#files.size }, this.limits, delta.bytes, delta.files, display(file), this.namespaceName);
    if (refusal) throw new WorkspaceError('QUOTA_EXCEEDED', refusal);
    this.#files.set(rel, content);
    this.#bytes += delta.bytes;
    return { bytes };
  }

  async deleteFile(file: unknown): Promise<void> {
    const rel = normalizeRelative(file, 'filename');
    const old = this.#files.get(rel);
    if (old === undefined) {
      if (this.#isDirectory(rel)) throw new WorkspaceError('IS_DIRECTORY', `${display(file)} is a non-empty directory`);
      throw new WorkspaceError('NOT_FOUND', `File not found: ${display(file)}`);
    }
    this.#files.delete(rel);
    this.#bytes -= Buffer.byteLength(old);
  }

  async listFiles(subpath: unknown = '.'): Promise<string[]> {
    const rel = subpath === '.' || subpath === '' || subpath === undefined ? '' : normalizeRelative(subpath, 'subpath');
    if (rel !== '' && this.#files.has(rel)) return [rel];
    if (rel !== '' && !this.#isDirectory(rel)) throw new WorkspaceError('NOT_FOUND', `Directory not found: ${display(subpath)}`);
    const prefix = rel === '' ? '' : `${rel}/`;
    // Sorted as a walk of sorted folders would list them: by path segments.
    const names = [...this.#files.keys()].filter((name) => name.startsWith(prefix));
    names.sort((a, b) => compareSegments(a.split('/'), b.split('/')));
    return names.slice(0, MAX_LIST_ENTRIES);
  }

  async usage(): Promise<{ bytes: number; files: number; quota_bytes: number; quota_files: number }> {
    return { bytes: this.#bytes, files: this.#files.size, quota_bytes: this.limits.bytes, quota_files: this.limits.files };
  }

  async stats(): Promise<{ path: string; file_count: number; total_bytes: number }> {
    return { path: this.namespaceName === '' ? '.' : this.namespaceName, file_count: this.#files.size, total_bytes: this.#bytes };
  }

  #isDirectory(rel: string): boolean {
    const prefix = `${rel}/`;
    for (const name of this.#files.keys()) if (name.startsWith(prefix)) return true;
    return false;
  }
}

function compareSegments(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] as string;
    const y = b[i] as string;
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

function display(p: unknown): string {
  const s = typeof p === 'string' ? p : String(p === null ? 'null' : typeof p);
  return JSON.stringify(s.length > 120 ? `${s.slice(0, 117)}...` : s);
}
