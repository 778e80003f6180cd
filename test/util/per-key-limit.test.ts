// PerKeyLimit: N tasks at once per key, the rest in order, a full queue refused at once; other keys
// are never held up by one key's burst.

import { expect, it } from 'vitest';
import { PerKeyLimit } from '../../src/util/per-key-limit.js';

it('runs at most N per key, queues M in order, refuses past that, and leaves other keys free', async () => {
  const limit = new PerKeyLimit(2, 2);
  const gates: (() => void)[] = [];
  const started: string[] = [];
  const task = (label: string) => () =>
    new Promise<string>((resolve) => {
      started.push(label);
      gates.push(() => resolve(label));
    });
  const runs = ['a1', 'a2', 'a3', 'a4'].map((l) => limit.run('a', task(l)));
  expect(await limit.run('a', task('a5'))).toEqual({ refused: true });
  const other = limit.run('b', task('b1'));
  await new Promise((r) => setImmediate(r));
  expect(started).toEqual(['a1', 'a2', 'b1']);
  gates.shift()?.();
  await new Promise((r) => setImmediate(r));
  expect(started).toEqual(['a1', 'a2', 'b1', 'a3']);
  while (gates.length > 0) {
    gates.shift()?.();
    await new Promise((r) => setImmediate(r));
  }
  expect((await Promise.all([...runs, other])).map((r) => (r.refused ? 'refused' : r.value))).toEqual(['a1', 'a2', 'a3', 'a4', 'b1']);
});
