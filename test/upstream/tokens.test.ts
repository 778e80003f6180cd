// countTokens (o200k_base via gpt-tokenizer) and the running TokenLedger. Lives beside the
// upstream tests because token accounting is measured on what upstream tools return.
import { randomBytes } from 'node:crypto';
import { countTokens as referenceCount } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { TokenLedger, contextSavings, countTokens } from '../../src/util/tokens.js';

describe('countTokens', () => {
  it('counts strings as is with the o200k_base encoding', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('hello world')).toBe(2);
    expect(countTokens('The quick brown fox jumps over the lazy dog.')).toBe(referenceCount('The quick brown fox jumps over the lazy dog.'));
  });

  it('counts other values as their JSON', () => {
    const value = { users: [{ id: 1, name: 'Ada' }], ok: true };
    expect(countTokens(value)).toBe(countTokens(JSON.stringify(value)));
    expect(countTokens(42)).toBe(1);
    expect(countTokens(null)).toBe(1);
    expect(countTokens(undefined)).toBe(0);
  });

  it('treats special-token text in data as plain text instead of throwing', () => {
    expect(countTokens('a <|endoftext|> b')).toBeGreaterThan(3);
  });

  it('never throws on values JSON cannot hold', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic['self'] = cyclic;
    expect(countTokens(cyclic)).toBeGreaterThan(0);
    expect(countTokens({ big: 10n ** 30n })).toBeGreaterThan(0);
    expect(countTokens({ toJSON: () => { throw new Error('no'); } })).toBe(0);
  });

  it('counts or estimates long JSON close to the exact count', () => {
    const rows = Array.from({ length: 12_000 }, (_, i) => ({ id: i, email: `user${i}@example.com`, tag: randomBytes(4).toString('hex') }));
    const json = JSON.stringify(rows);
    expect(json.length).toBeGreaterThan(512 * 1024);
    const exact = referenceCount(json);
    const estimate = countTokens(json);
    expect(Math.abs(estimate - exact) / exact).toBeLessThan(0.02);
  });
});

describe('TokenLedger', () => {
  it('keeps running totals and counts a call that returns more than it read as no saving', () => {
    const ledger = new TokenLedger();
    expect(ledger.totals()).toEqual({ calls: 0, tokens_in: 0, tokens_out: 0, tokens_saved: 0 });
    expect(ledger.add(10_000, 200)).toEqual({ tokens_in: 10_000, tokens_out: 200, tokens_saved: 9_800 });
    expect(ledger.add(0, 50)).toEqual({ tokens_in: 0, tokens_out: 50, tokens_saved: 0 });
    expect(ledger.totals()).toEqual({ calls: 2, tokens_in: 10_000, tokens_out: 250, tokens_saved: 9_800 });
  });

  it('refuses counts that are not non-negative integers, naming them', () => {
    expect(() => contextSavings(-1, 0)).toThrow(/tokensIn must be a non-negative integer/);
    expect(() => new TokenLedger().add(1, 1.5)).toThrow(/tokensOut/);
  });
});
