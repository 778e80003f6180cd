// The daemon's token counter never loads the tokenizer inside a call: until it is loaded (after
// the first call, off its path) figures are the length guess and say so; then they are exact.
// Alone in its file: the tokenizer must not have been loaded by another test in this worker.

import { describe, expect, it } from 'vitest';
import { TOKENIZER_LOAD_DELAY_MS, measureTokens, measureTokensWhenLoaded, tokenizerInstalled } from '../../src/util/tokens.js';

describe('measureTokensWhenLoaded', () => {
  it('guesses (marked estimated) until the tokenizer is loaded in the background, then counts exactly', async () => {
    expect(tokenizerInstalled()).toBe(true);
    const text = 'The quick brown fox jumps over the lazy dog, again and again.';
    // a guess, so the tables were not loaded on this call's path (loaded, they would have counted)
    const first = measureTokensWhenLoaded(text);
    expect(first).toEqual({ tokens: Math.ceil(text.length / 4), estimated: true });
    await new Promise((resolve) => setTimeout(resolve, TOKENIZER_LOAD_DELAY_MS + 10));
    // the load ran on the timer; a generous bound only proves it happened without another count
    const deadline = performance.now() + 30_000;
    let later = measureTokensWhenLoaded(text);
    while (later.estimated && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      later = measureTokensWhenLoaded(text);
    }
    expect(later).toEqual(measureTokens(text));
    expect(later.estimated).toBe(false);
  });
});
