// Where user data lives: the repository's folders in a clone, a per-user data directory when the
// package is installed (so upgrades never delete it), and a named error when it is unwritable.

import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataDirError, prepareDataFolders, runsFromClone, userDataDir } from '../../src/config/data-dir.js';
import { loadConfig } from '../../src/config/load-config.js';

const temp = (): string => mkdtempSync(path.join(tmpdir(), 'cem-data-'));

function installedRoot(): string {
  const root = path.join(temp(), 'node_modules', 'code-execution-mcp');
  mkdirSync(root, { recursive: true });
  return root;
}

describe('data directory', () => {
  it('a clone keeps its own skills/ and workspace/', () => {
    const root = temp();
    expect(runsFromClone(root)).toBe(true);
    const { config } = loadConfig({ root, env: {}, cwd: root });
    expect(config.skillsDir).toBe(path.join(root, 'skills'));
    expect(config.workspaceDir).toBe(path.join(root, 'workspace'));
    expect(config.dataDir).toBeUndefined();
  });

  it('an installed package keeps user data in XDG_DATA_HOME, outside the package', () => {
    const root = installedRoot();
    const xdg = temp();
    const { config } = loadConfig({ root, env: { XDG_DATA_HOME: xdg }, cwd: xdg });
    expect(config.dataDir).toBe(path.join(xdg, 'code-execution-mcp'));
    expect(config.skillsDir).toBe(path.join(xdg, 'code-execution-mcp', 'skills'));
    expect(config.workspaceDir).toBe(path.join(xdg, 'code-execution-mcp', 'workspace'));
    expect(config.catalogDir).toBe(path.join(root, 'catalog'));
  });

  it('a package inside node_modules that is a git checkout counts as a clone', () => {
    const root = installedRoot();
    mkdirSync(path.join(root, '.git'));
    expect(runsFromClone(root)).toBe(true);
  });

  it('follows each platform convention', () => {
    expect(userDataDir({ HOME: '/home/u' }, 'linux')).toBe('/home/u/.local/share/code-execution-mcp');
    expect(userDataDir({ HOME: '/home/u', XDG_DATA_HOME: 'relative' }, 'linux')).toBe('/home/u/.local/share/code-execution-mcp');
    expect(userDataDir({ HOME: '/Users/u' }, 'darwin')).toBe('/Users/u/Library/Application Support/code-execution-mcp');
    expect(userDataDir({ HOME: '/h', LOCALAPPDATA: 'C:\\Users\\u\\AppData\\Local' }, 'win32')).toContain('code-execution-mcp');
  });

  it('--data-dir moves skills and workspace; explicit folders still win', () => {
    const root = installedRoot();
    const data = temp();
    const own = temp();
    const { config } = loadConfig({ root, env: { CODE_EXEC_DATA_DIR: data }, flags: { 'skills-dir': own }, cwd: data });
    expect(config.dataDir).toBe(data);
    expect(config.workspaceDir).toBe(path.join(data, 'workspace'));
    expect(config.skillsDir).toBe(own);
  });

  it('an unwritable data folder is refused with its path and the option that moves it', () => {
    const blocker = path.join(temp(), 'a-file');
    writeFileSync(blocker, 'not a folder');
    const dir = path.join(blocker, 'code-execution-mcp', 'skills');
    expect(() => prepareDataFolders([{ dir, option: '--data-dir DIR' }])).toThrow(DataDirError);
    expect(() => prepareDataFolders([{ dir, option: '--data-dir DIR' }])).toThrow(`cannot write to ${dir} (ENOTDIR); make it writable or choose another folder with --data-dir DIR`);
  });
});
