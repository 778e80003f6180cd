#!/usr/bin/env node
// `npm start` from a fresh clone: the package no longer builds on install (the published tarball
// ships dist/), so build once when the build output is missing. An installed package has dist/.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
if (!existsSync(path.join(root, 'dist', 'src', 'cli', 'main.js'))) {
  console.error('code-execution-mcp: dist/ is missing; building it once (npm run build)');
  const built = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  process.exit(built.status ?? 1);
}
