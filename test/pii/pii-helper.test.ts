// The PII helper thread (src/pii/pii-worker.ts, loaded from the build like the sandbox workers):
// a long text is scanned there, not inline, and the thread finds what the detectors find. Without
// its worker file the helper falls back to scanning inline, silently, so only its figures show
// that the thread ran.

import { afterAll, describe, expect, it } from 'vitest';
import { findPii } from '../../src/pii/detectors.js';
import { CHUNK_CHARS, findPiiYielding } from '../../src/pii/detect-chunked.js';
import { closePiiHelper, findPiiOffLoop, INLINE_MAX_CHARS, piiHelperStats } from '../../src/pii/pii-helper.js';

afterAll(() => closePiiHelper());

describe('PII helper thread', () => {
  it('scans a text longer than the inline limit on the helper thread, finding what the detectors find', async () => {
    const line = 'mail alice@example.com or call +1 415 555 0100 about card 4111 1111 1111 1111. ';
    const text = line.repeat(Math.ceil((INLINE_MAX_CHARS * 2) / line.length));
    const before = piiHelperStats().completed;
    const found = await findPiiOffLoop(text);
    const stats = piiHelperStats();
    expect(stats.completed, 'the helper thread did not run: is dist/src/pii/pii-worker.js built? (npm run build)').toBe(before + 1);
    expect(stats.threads).toBeGreaterThan(0);
    const inline = findPii(text).map(({ type, start, end, value }) => ({ type, start, end, value }));
    expect(found).toEqual(inline);
    expect(found.length).toBeGreaterThan(0);
  });

  it("takes turns by owner: one agent's many concurrent scans do not queue in front of another agent's", async () => {
    const line = 'mail alice@example.com or call +1 415 555 0100 about card 4111 1111 1111 1111. ';
    // Two slices each (detect-chunked.ts), alpha's six and beta's one alike.
    const text = line.repeat(Math.ceil((CHUNK_CHARS * 1.5) / line.length));
    const finished: string[] = [];
    const alpha = Array.from({ length: 6 }, (_, i) => findPiiYielding(text, 'alpha').then(() => finished.push(`alpha-${i}`)));
    const beta = findPiiYielding(text, 'beta').then((m) => (finished.push('beta'), m));
    expect((await beta).length).toBeGreaterThan(0);
    await Promise.all(alpha);
    // One FIFO of slices for everyone finished beta last (its second slice queued behind alpha's
    // six); taking turns, beta's slices go next whenever a thread frees.
    expect(finished.indexOf('beta'), finished.join(' ')).toBeLessThanOrEqual(2);
  });
});
