// What the start screen and the optional-package advice tell a person depends on how the package
// was installed: a clone runs `node bin/code-execution-mcp.js` and installs with `npm install X`
// in the clone; a local install runs `npx code-execution-mcp`; a global one runs
// `code-execution-mcp` and needs `npm install -g X` (a plain `npm install X` changes nothing there).

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { commandFor, installKind, npmInstallFor } from '../../src/util/install-kind.js';
import { OPTIONAL_PACKAGES, missingPackageMessage } from '../../src/util/optional-package.js';
import { BIN, REPO, scratch } from '../fixtures/mcp/cli.js';
import type { Scratch } from '../fixtures/mcp/cli.js';

const FILE = path.join('code-execution-mcp', 'dist', 'src', 'util', 'install-kind.js');
let dir: string | undefined;
let home: Scratch | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
  home?.remove();
  home = undefined;
});

describe('how the package was installed', () => {
  it('tells a clone, a local install and a global one apart by where its files are', () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cem-install-kind-'));
    const project = path.join(dir, 'project');
    mkdirSync(path.join(project, 'node_modules'), { recursive: true });
    writeFileSync(path.join(project, 'package.json'), '{}');
    const node = path.join(dir, 'opt', 'node', 'bin', 'node');
    expect(installKind(path.join(REPO, 'src', 'util', 'install-kind.ts'), {}, node, 'linux')).toBe('clone');
    expect(installKind(path.join(project, 'node_modules', FILE), {}, node, 'linux')).toBe('local');
    // npm's global folder for Node's own prefix, for a configured prefix, and a node_modules with no project around it.
    expect(installKind(path.join(dir, 'opt', 'node', 'lib', 'node_modules', FILE), {}, node, 'linux')).toBe('global');
    expect(installKind(path.join(dir, 'prefix', 'lib', 'node_modules', FILE), { npm_config_prefix: path.join(dir, 'prefix') }, node, 'linux')).toBe('global');
    expect(installKind(path.join(dir, 'usr', 'lib', 'node_modules', FILE), {}, node, 'linux')).toBe('global');
  });

  it('gives each its command and its install advice', () => {
    expect(commandFor('clone')).toBe('node bin/code-execution-mcp.js');
    expect(commandFor('local')).toBe('npx code-execution-mcp');
    expect(commandFor('global')).toBe('code-execution-mcp');
    expect(npmInstallFor('local', ['a', 'b'])).toBe('npm install a b');
    expect(missingPackageMessage(OPTIONAL_PACKAGES.tokenizer, 'global')).toMatch(/; install it with: npm install -g gpt-tokenizer$/);
    expect(missingPackageMessage(OPTIONAL_PACKAGES.tokenizer, 'clone')).toMatch(/; install it with: npm install gpt-tokenizer$/);
  });

  it("the start screen of a clone names the clone's own command", async () => {
    home = scratch();
    const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--log-format', 'text'], { cwd: REPO, env: home.env, stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: proc.stderr! }).on('line', (text) => text.includes('connect a stdio client') && resolve(text));
        proc.once('exit', (code) => reject(new Error(`serve exited ${code}`)));
      });
      expect(line).toMatch(/^ {2}connect a stdio client: {2}node bin\/code-execution-mcp\.js stdio --connect http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    } finally {
      proc.kill('SIGTERM');
      await new Promise((resolve) => proc.once('exit', resolve));
    }
  }, 60_000);
});
