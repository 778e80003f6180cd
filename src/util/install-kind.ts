// How this package was installed, from where its files are: a clone (a git checkout or any folder
// outside node_modules), a local install (a project's node_modules) or a global one (npm install
// -g). What a person types differs between them: the command that runs it, and how to add an
// optional package beside it (`npm install -g X` after a global install; `npm install X` in a
// local one, where it changes nothing for a global install).

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type InstallKind = 'clone' | 'local' | 'global';

const BIN = 'code-execution-mcp';

/** Where npm puts global packages for these prefixes: <prefix>/lib/node_modules (<prefix>\node_modules on Windows). */
function globalModuleRoots(env: Readonly<Record<string, string | undefined>>, execPath: string, platform: NodeJS.Platform): string[] {
  // Node's own prefix: <prefix>/bin/node, or <prefix>\node.exe on Windows.
  const nodePrefix = platform === 'win32' ? path.dirname(execPath) : path.dirname(path.dirname(execPath));
  const prefixes = [env['npm_config_prefix'], env['NPM_CONFIG_PREFIX'], nodePrefix].filter((p): p is string => p !== undefined && p !== '');
  return prefixes.map((p) => path.resolve(platform === 'win32' ? path.join(p, 'node_modules') : path.join(p, 'lib', 'node_modules')));
}

/**
 * The install `file` (one of this package's files) belongs to. Global: its node_modules is npm's
 * global folder, or has no project around it (no package.json beside it: /usr/lib, a prefix).
 */
export function installKind(file: string = fileURLToPath(import.meta.url), env: Readonly<Record<string, string | undefined>> = process.env, execPath: string = process.execPath, platform: NodeJS.Platform = process.platform): InstallKind {
  const parts = path.resolve(file).split(path.sep);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return 'clone';
  const modules = parts.slice(0, at + 1).join(path.sep);
  if (globalModuleRoots(env, execPath, platform).includes(modules)) return 'global';
  return existsSync(path.join(path.dirname(modules), 'package.json')) ? 'local' : 'global';
}

/** What runs the command in this install: `node bin/code-execution-mcp.js` in a clone, `npx code-execution-mcp` locally, `code-execution-mcp` globally. */
export function commandFor(kind: InstallKind): string {
  return kind === 'clone' ? `node bin/${BIN}.js` : kind === 'local' ? `npx ${BIN}` : BIN;
}

/** The npm command that adds `packages` beside this install. */
export function npmInstallFor(kind: InstallKind, packages: readonly string[]): string {
  return `npm install${kind === 'global' ? ' -g' : ''} ${packages.join(' ')}`;
}
