// The same supervision under a real file-descriptor limit (prlimit): the fork of a replacement
// really fails with EMFILE ('error' and no 'exit'), and the pool serves again once descriptors are
// free. The pool runs in a child process so only that process hits the limit.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const PRLIMIT = '/usr/bin/prlimit';
const script = fileURLToPath(new URL('./fixtures/fork-at-fd-limit.mjs', import.meta.url));

it.skipIf(!existsSync(PRLIMIT))('a fork that fails with a real EMFILE is retried until the pool serves again', async () => {
  const { stdout } = await promisify(execFile)(PRLIMIT, ['--nofile=256', process.execPath, script], { timeout: 60_000 });
  const report = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
  expect(report).toMatchObject({
    exhausted: 'EMFILE',
    sawFailure: true,
    during: { ready: 0, canRun: false },
    recovered: true,
    outcome: { ok: true, value: 42 },
  });
}, 90_000);
