// The output budget's cut of a result (src/executor/result-budget.ts): the type is kept, the cut
// fits the budget as compact JSON, a preview says how much is kept, and measuring is bounded by
// the budget, not by the size of the value.

import { describe, expect, it } from 'vitest';
import { cutResult, jsonLengthUpTo } from '../../src/executor/result-budget.js';

function cut(value: unknown, budget: number) {
  return cutResult(value, budget, JSON.stringify(value).length);
}

describe('cutResult', () => {
  it('leaves a result that fits alone, and never cuts numbers, booleans or null', () => {
    expect(cut([1, 2, 3], 7)).toBeUndefined();
    expect(cutResult(123456789, 3, 9)).toBeUndefined();
    expect(cutResult(null, 1, 4)).toBeUndefined();
  });

  it('keeps an array an array of its first items, within the budget', () => {
    const list = Array.from({ length: 100 }, (_, i) => ({ id: i, name: `n${i}` }));
    const r = cut(list, 200);
    const kept = r?.result as unknown[];
    expect(Array.isArray(kept)).toBe(true);
    expect(JSON.stringify(kept).length).toBeLessThanOrEqual(200);
    expect(kept.slice(0, -1)).toEqual(list.slice(0, kept.length - 1));
    expect(r?.preview).toEqual({ type: 'array', total: 100, kept: kept.length, json_chars: JSON.stringify(list).length });
  });

  it('keeps an object an object of its first keys, own keys named __proto__ or constructor included', () => {
    const record = JSON.parse(`{"__proto__":"p","constructor":"c",${Array.from({ length: 50 }, (_, i) => `"k${i}":${i}`).join(',')}}`) as Record<string, unknown>;
    const r = cut(record, 60);
    const kept = r?.result as Record<string, unknown>;
    expect(Object.keys(kept).slice(0, 2)).toEqual(['__proto__', 'constructor']);
    expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
    expect(JSON.stringify(kept).length).toBeLessThanOrEqual(60);
    expect(r?.preview).toMatchObject({ type: 'object', total: 52, kept: Object.keys(kept).length });
  });

  it('cuts a string to a prefix whose JSON fits, escapes counted', () => {
    const text = '\u0001\n"'.repeat(1000);
    const r = cut(text, 100);
    const kept = r?.result as string;
    expect(text.startsWith(kept)).toBe(true);
    expect(JSON.stringify(kept).length).toBeLessThanOrEqual(100);
    expect(r?.preview).toMatchObject({ type: 'string', total: 3000, kept: kept.length });
  });

  it('cuts into a big first item rather than keep nothing', () => {
    const r = cut([{ rows: Array.from({ length: 1000 }, (_, i) => i) }], 100);
    const kept = r?.result as { rows: number[] }[];
    expect(kept).toHaveLength(1);
    expect(kept[0]?.rows.length).toBeGreaterThan(5);
    expect(JSON.stringify(kept).length).toBeLessThanOrEqual(100);
  });

  it('measures a value nested deep around megabytes with work bounded by the budget', () => {
    let deep: unknown = 'x'.repeat(8 * 1024 * 1024);
    for (let i = 0; i < 60; i++) deep = [deep, i];
    expect(jsonLengthUpTo(deep, 1000)).toBe(1001);
    const started = performance.now();
    const r = cutResult(deep, 1000, 9_000_000);
    // A generous bound: measuring with JSON.stringify at each level would serialize 8 MB sixty times.
    expect(performance.now() - started).toBeLessThan(1000);
    expect(JSON.stringify(r?.result).length).toBeLessThanOrEqual(1000);
  });
});
