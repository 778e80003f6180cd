// The facts of skill files (digest, size, front matter) are kept per version of a file: an
// unchanged file is not read again, a changed one is, and concurrent askers share one read.

import { createHash } from 'node:crypto';
import { utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { SkillFileFacts } from '../../src/skills/index.js';
import { tempDir } from '../fixtures/config.js';

const sha = (text: string): string => `sha256:${createHash('sha256').update(text).digest('hex')}`;

it('derives once per settled version, again after a change, and shares one read between concurrent askers', async () => {
  const file = path.join(tempDir('cem-facts-'), 'index.js');
  writeFileSync(file, 'one');
  let derived = 0;
  let now = Date.now();
  const facts = new SkillFileFacts(() => ++derived, () => now);
  // Just written: not settled, so not remembered (two writes in one clock tick could look alike).
  expect((await facts.of(file))?.digest).toBe(sha('one'));
  expect((await facts.of(file))?.derived).toBe(2);
  // Settled: remembered; concurrent askers share one read.
  now += 10_000;
  const many = await Promise.all(Array.from({ length: 8 }, () => facts.of(file)));
  expect(new Set(many.map((f) => f?.derived))).toEqual(new Set([3]));
  expect((await facts.of(file))?.derived).toBe(3);
  // Changed (even to the same size, with the old modification time put back): read anew.
  writeFileSync(file, 'two');
  utimesSync(file, new Date(now - 60_000), new Date(now - 60_000));
  const changed = await facts.of(file);
  expect(changed).toMatchObject({ digest: sha('two'), size: 3, derived: 4 });
  expect(await facts.of(path.join(path.dirname(file), 'missing.js'))).toBeNull();
});
