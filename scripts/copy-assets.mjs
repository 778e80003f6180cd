#!/usr/bin/env node
// After tsc (`npm run build`): copies what tsc does not, the Python the worker loads at run time
// (workers/python/py/*.py, read by workers/python/prelude.ts from next to the compiled module),
// into dist/. The Python unit tests (py/tests/) stay in the source tree. Files of an earlier
// build that no longer exist in the source are removed, so dist/ never ships a stale one.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const from = path.join(root, 'workers', 'python', 'py');
const to = path.join(root, 'dist', 'workers', 'python', 'py');

fs.rmSync(to, { recursive: true, force: true });
fs.mkdirSync(to, { recursive: true });
for (const name of fs.readdirSync(from)) {
  if (name.endsWith('.py')) fs.copyFileSync(path.join(from, name), path.join(to, name));
}
