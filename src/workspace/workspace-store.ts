// The contract every workspace store keeps, so the composition root can choose one: today's
// Workspace (a folder per agent namespace on a local or shared file system, atomic renames,
// quotas) is the only one. Callers outside src/workspace/ depend on this, not on the classes.

/** One agent's namespace: every path is relative to it and confined to it; refusals are WorkspaceErrors. */
export interface WorkspaceNamespace {
  readonly namespaceName: string;
  readFile(file: unknown): Promise<{ content: string; size: number }>;
  /** Atomic: a reader sees the old content or the new, never a part. */
  writeFile(file: unknown, content: unknown): Promise<{ bytes: number }>;
  deleteFile(file: unknown): Promise<void>;
  listFiles(subpath?: unknown): Promise<string[]>;
  usage(): Promise<{ bytes: number; files: number; quota_bytes: number; quota_files: number }>;
  stats(): Promise<{ path: string; file_count: number; total_bytes: number }>;
  /**
   * The namespace's real folder, for the worker-side read grant (src/executor/host-api.ts): a
   * store whose files are not in a folder the sandbox processes can open rejects, and every
   * read then goes through readFile.
   */
  realRoot(): Promise<string>;
}

export interface WorkspaceStore {
  /** Largest file, bytes. */
  readonly maxFileBytes: number;
  namespace(ns: string): WorkspaceNamespace;
  /** Removes crash debris and expired spill files; resolves with how many went. */
  sweep(): Promise<number>;
  close(): void;
}
