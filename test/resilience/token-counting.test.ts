// Token counting runs on the coordinator's event loop on guest data, so it is bounded: inputs that
// made exact BPE quadratic (long runs without whitespace) are counted in pieces or estimated, and
// say so; a figure not marked estimated is exact.

import { randomBytes } from 'node:crypto';
import { countTokens as referenceCount } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { CALL_BUDGET_MS, measureTokens } from '../../src/util/tokens.js';

const reference = (text: string): number => referenceCount(text, { disallowedSpecial: new Set() });
const randomLetters = (n: number): string => Array.from({ length: n }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('');

describe('bounded token counting', () => {
  it('a figure not marked estimated equals the exact count', () => {
    const rows = Array.from({ length: 400 }, (_, i) => ({ id: i, name: `user ${i}`, email: `u${i}@example.com`, tag: randomBytes(6).toString('hex'), note: "it's fine, isn't it?" }));
    const samples = [
      'The quick brown fox jumps over the lazy dog. '.repeat(300),
      JSON.stringify(rows),
      JSON.stringify(rows, null, 2),
      'function f(a, b) {\n  return a.map((x) => x * b).filter(Boolean);\n}\n'.repeat(200),
      `${'1234567890'.repeat(500)} mixed 3.14159 ${randomBytes(300).toString('base64')}`,
    ];
    for (const text of samples) {
      const measured = measureTokens(text);
      if (!measured.estimated) expect(measured.tokens).toBe(reference(text));
      else expect(Math.abs(measured.tokens - reference(text)) / reference(text)).toBeLessThan(0.02);
      // Short texts never meet the time budget: without long runs they are exact.
      const short = text.slice(0, 2000);
      expect(measureTokens(short)).toEqual({ tokens: reference(short), estimated: false });
    }
  });

  it('long runs without whitespace are counted quickly and marked estimated', () => {
    for (const text of [randomLetters(256 * 1024), 'x'.repeat(1024 * 1024), '!?'.repeat(128 * 1024), randomBytes(768 * 1024).toString('base64')]) {
      const started = performance.now();
      const measured = measureTokens(text);
      // Exact BPE took 65–150 s on 256 KiB of this; a generous bound proves that is gone.
      expect(performance.now() - started).toBeLessThan(2000);
      expect(measured.estimated).toBe(true);
      expect(measured.tokens).toBeGreaterThan(text.length / 16);
      expect(measured.tokens).toBeLessThanOrEqual(text.length);
    }
  });

  it("past a call's counting budget, payloads are guessed from their length", () => {
    const budget = { spentMs: CALL_BUDGET_MS };
    expect(measureTokens('a'.repeat(4000), budget)).toEqual({ tokens: 1000, estimated: true });
    const fresh = { spentMs: 0 };
    expect(measureTokens('hello world', fresh)).toEqual({ tokens: 2, estimated: false });
    expect(fresh.spentMs).toBeGreaterThan(0);
  });
});
