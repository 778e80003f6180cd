// The contract every workspace store keeps, so the composition root can choose one: the daemon's
// Workspace (a folder per agent namespace on a local or shared file system, atomic renames,
// quotas), or a store without a folder (test/contracts/memory-workspace.ts proves one can exist).
// Callers outside src/workspace/ depend on this, not on the classes; the local folder is an
// optional capability, and callers fall back to readFile/writeFile when it is absent.

/** The local-folder capability of a namespace: the worker's own reads, past the coordinator. */
export interface LocalFolder {
  /** The namespace folder's real path (created if missing). */
  root(): Promise<string>;
}

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
   * Present only when the namespace's files are a folder the sandbox processes can open
   * themselves: the worker then serves plain reads from it (the read grant built in
   * src/executor/host-api.ts). A store without it (in memory, an object store) leaves every read
   * and write to the methods above.
   */
  readonly localFolder?: LocalFolder;
}

export interface WorkspaceStore {
  /** Largest file, bytes. */
  readonly maxFileBytes: number;
  namespace(ns: string): WorkspaceNamespace;
  /** Removes crash debris and expired spill files; resolves with how many went. */
  sweep(): Promise<number>;
  close(): void;
}
