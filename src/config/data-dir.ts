// Where user data (skills, workspace) lives. Run from a clone it is the repository's own folders;
// installed as a package it is a per-user data directory, so an upgrade (which replaces the
// package folder) never deletes saved skills or workspace files.

import { closeSync, existsSync, mkdirSync, openSync, unlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { DaemonError } from '../util/daemon-error.js';

export const DATA_DIR_NAME = 'code-execution-mcp';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * True when the package runs from a git checkout (or any folder outside node_modules): its own
 * skills/ and workspace/ are then the user's data, as a developer expects.
 */
export function runsFromClone(packageRoot: string): boolean {
  if (existsSync(path.join(packageRoot, '.git'))) return true;
  return !path.resolve(packageRoot).split(path.sep).includes('node_modules');
}

/** The per-user data directory of this platform (XDG on Linux, Application Support on macOS, LOCALAPPDATA on Windows). */
export function userDataDir(env: Env, platform: NodeJS.Platform = process.platform): string {
  const home = env['HOME'] !== undefined && env['HOME'] !== '' ? env['HOME'] : homedir();
  if (platform === 'win32') {
    const local = env['LOCALAPPDATA'];
    return path.join(local !== undefined && local !== '' ? local : path.join(home, 'AppData', 'Local'), DATA_DIR_NAME);
  }
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', DATA_DIR_NAME);
  const xdg = env['XDG_DATA_HOME'];
  // XDG says a relative XDG_DATA_HOME is invalid and must be ignored
  const base = xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(home, '.local', 'share');
  return path.join(base, DATA_DIR_NAME);
}

/** The default data directory: undefined when run from a clone (the repository folders are used). */
export function defaultDataDir(packageRoot: string, env: Env): string | undefined {
  return runsFromClone(packageRoot) ? undefined : userDataDir(env);
}

/** A data folder that cannot be created or written; the message names the path and the option that moves it. */
export class DataDirError extends DaemonError {
  constructor(
    readonly dir: string,
    readonly option: string,
    cause: string,
  ) {
    super('DATA_DIR_UNWRITABLE', `cannot write to ${dir} (${cause}); make it writable or choose another folder with ${option}`);
    this.name = 'DataDirError';
  }
}

/** A folder that must exist and be writable, and the option a user changes to move it. */
export interface DataFolder {
  dir: string;
  option: string;
}

/**
 * Creates each folder and proves it writable by creating and removing a probe file (access(W_OK)
 * says yes to root on a read-only mount and says nothing about a full disk).
 */
export function prepareDataFolders(folders: readonly DataFolder[]): void {
  for (const { dir, option } of folders) {
    const probe = path.join(dir, `.write-probe-${process.pid}`);
    try {
      mkdirSync(dir, { recursive: true });
      closeSync(openSync(probe, 'w'));
      unlinkSync(probe);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
      throw new DataDirError(dir, option, code);
    }
  }
}
