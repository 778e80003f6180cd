// Precision and recall of the detectors per PII type over the labelled corpus; the build fails
// below 0.95 on either, so a detector change that trades one for the other shows up here.
import { describe, expect, it } from 'vitest';
import { detectPii, PII_TYPES } from '../../src/pii/index.js';
import type { PiiType } from '../../src/pii/index.js';
import { NEGATIVE_CASES, POSITIVE_CASES } from './corpus.js';

const THRESHOLD = 0.95;

interface Tally {
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
}

function score(): { tallies: Record<PiiType, Tally>; mistakes: string[] } {
  const tallies = Object.fromEntries(
    PII_TYPES.map((t) => [t, { truePositives: 0, falsePositives: 0, falseNegatives: 0 }]),
  ) as Record<PiiType, Tally>;
  const mistakes: string[] = [];
  const cases = [...POSITIVE_CASES, ...NEGATIVE_CASES.map((text) => ({ text, pii: [] }))];
  for (const { text, pii } of cases) {
    // Multiset comparison of (type, value): a value found twice must be labelled twice.
    const expected = pii.map(([type, value]) => `${type}\u0000${value}`);
    for (const m of detectPii(text)) {
      const key = `${m.type}\u0000${m.value}`;
      const i = expected.indexOf(key);
      if (i >= 0) {
        expected.splice(i, 1);
        tallies[m.type].truePositives++;
      } else {
        tallies[m.type].falsePositives++;
        mistakes.push(`false ${m.type} ${JSON.stringify(m.value)} in ${JSON.stringify(text)}`);
      }
    }
    for (const key of expected) {
      const [type, value] = key.split('\u0000') as [PiiType, string];
      tallies[type].falseNegatives++;
      mistakes.push(`missed ${type} ${JSON.stringify(value)} in ${JSON.stringify(text)}`);
    }
  }
  return { tallies, mistakes };
}

describe('labelled corpus', () => {
  it('has at least 300 positive and 300 negative cases, covering every type', () => {
    expect(POSITIVE_CASES.length).toBeGreaterThanOrEqual(300);
    expect(NEGATIVE_CASES.length).toBeGreaterThanOrEqual(300);
    const covered = new Set(POSITIVE_CASES.flatMap((c) => c.pii.map(([type]) => type)));
    expect([...covered].sort()).toEqual([...PII_TYPES].sort());
  });

  it('labels values that occur in their text', () => {
    for (const { text, pii } of POSITIVE_CASES) for (const [, value] of pii) expect(text).toContain(value);
  });

  it(`reaches precision and recall of at least ${THRESHOLD} for every type`, () => {
    const { tallies, mistakes } = score();
    const rows = PII_TYPES.map((type) => {
      const { truePositives: tp, falsePositives: fp, falseNegatives: fn } = tallies[type];
      return { type, tp, fp, fn, precision: tp + fp === 0 ? 1 : tp / (tp + fp), recall: tp + fn === 0 ? 1 : tp / (tp + fn) };
    });
    console.log(
      ['type         labelled  found  false+  missed  precision  recall']
        .concat(
          rows.map(
            (r) =>
              `${r.type.padEnd(12)} ${String(r.tp + r.fn).padStart(8)} ${String(r.tp).padStart(6)} ${String(r.fp).padStart(7)} ` +
              `${String(r.fn).padStart(7)} ${r.precision.toFixed(3).padStart(10)} ${r.recall.toFixed(3).padStart(7)}`,
          ),
        )
        .join('\n'),
    );
    if (mistakes.length > 0) console.log(mistakes.join('\n'));
    for (const r of rows) {
      expect(r.precision, `${r.type} precision`).toBeGreaterThanOrEqual(THRESHOLD);
      expect(r.recall, `${r.type} recall`).toBeGreaterThanOrEqual(THRESHOLD);
    }
  });

  it('returns non-overlapping matches sorted by start whose values are the text they span', () => {
    for (const text of [...POSITIVE_CASES.map((c) => c.text), ...NEGATIVE_CASES]) {
      const matches = detectPii(text);
      for (let i = 0; i < matches.length; i++) {
        const m = matches[i]!;
        expect(text.slice(m.start, m.end)).toBe(m.value);
        if (i > 0) expect(m.start).toBeGreaterThanOrEqual(matches[i - 1]!.end);
      }
    }
  });
});
