// PII detection of large texts yields to the event loop between slices and finds exactly what
// detection of the whole text finds, values straddling slice edges included.

import { describe, expect, it } from 'vitest';
import { CHUNK_CHARS, findPiiYielding } from '../../src/pii/detect-chunked.js';
import { detectPii, PII_TYPES, PiiVaultStore, piiTypesInYielding } from '../../src/pii/index.js';
import { POSITIVE_CASES } from '../pii/corpus.js';

/** A long document: corpus cases and filler, with cases placed across every slice edge. */
function document(chars: number): string {
  const parts: string[] = [];
  let length = 0;
  let i = 0;
  let padded = 0;
  while (length < chars) {
    const sample = POSITIVE_CASES[i++ % POSITIVE_CASES.length]!.text;
    // Close to a slice edge, pad once so the next case starts a few characters before it.
    const nextEdge = (Math.floor(length / CHUNK_CHARS) + 1) * CHUNK_CHARS;
    const near = nextEdge - length < 2000 && nextEdge > padded;
    if (near) padded = nextEdge;
    const filler = near && nextEdge - length > 20 ? ' '.repeat(nextEdge - length - 1 - (i % 13)) : ' lorem ipsum dolor sit amet 42 ';
    parts.push(filler, sample);
    length += filler.length + sample.length;
  }
  return parts.join('');
}

describe('PII detection of large texts', () => {
  it('finds what whole-text detection finds, across slice edges', async () => {
    const text = document(6 * CHUNK_CHARS);
    const whole = detectPii(text);
    expect(whole.length).toBeGreaterThan(500);
    expect(await findPiiYielding(text)).toEqual(whole);
  }, 60_000);

  it('lets timers run while a multi-megabyte text is tokenized', async () => {
    const text = document(4 * 1024 * 1024);
    const vault = new PiiVaultStore({ maxBytesPerAgent: 1 << 30 });
    const owner = { sessionId: 's', agent: 'a' };
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const result = await vault.tokenize(owner, text);
    clearInterval(timer);
    expect(result.found).toBeGreaterThan(0);
    expect((await vault.detokenize(owner, result.text)).text).toBe(text);
    // One slice at a time: the event loop turned between slices (32 of them).
    expect(ticks).toBeGreaterThanOrEqual(10);
  }, 60_000);

  it('stays linear on many @ without a URL scheme (a back-scan to the text start was quadratic)', async () => {
    const text = 'a:b@'.repeat(64 * 1024) + ' bob@example.org';
    const started = performance.now();
    const found = detectPii(text);
    // Generous: about 0.2 s here; the quadratic scan took about 30 s for this text.
    expect(performance.now() - started).toBeLessThan(5000);
    expect(found.map((m) => m.value)).toEqual(['bob@example.org']);
    expect(await findPiiYielding(text)).toEqual(found);
  }, 60_000);

  it('tokenizes a value off the event loop, keys included, and restores it whole', async () => {
    const big = document(3 * CHUNK_CHARS);
    const value = { 'alice@example.com': [big, 'call +1 415 555 0100', { nested: 'ssn 123-45-6789', n: 3 }], plain: null };
    const vault = new PiiVaultStore({ maxBytesPerAgent: 1 << 30 });
    const owner = { sessionId: 's', agent: 'a' };
    const tokenized = await vault.tokenizeValue(owner, value);
    // Every string as tokenize would have it, keys included.
    const key = (await vault.tokenize(owner, 'alice@example.com')).text;
    expect(Object.keys(tokenized as object)).toEqual([key, 'plain']);
    expect(JSON.stringify(tokenized)).not.toMatch(/alice@example\.com|555 0100|123-45-6789/);
    expect((await vault.detokenizeValue(owner, tokenized)).value).toEqual(value);
    expect(await piiTypesInYielding(JSON.stringify(value))).toEqual(PII_TYPES.filter((t) => detectPii(JSON.stringify(value)).some((m) => m.type === t)));
  }, 60_000);
});
