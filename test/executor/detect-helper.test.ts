// Attack class: synchronous work on the coordinator, through language detection. Code sent without
// a language is parsed to decide it: acorn, and, when JavaScript does not parse, the TypeScript
// stripper, which costs 1-2 s per MiB and traps (and loads afresh, ~0.1 s) on nesting past about 150
// levels. Every agent shares the coordinator's event loop, so that work runs on a helper thread.
// Before: one agent's 20 detections held the event loop for over a second, and another agent's
// detection waited behind all of them.

import { afterAll, describe, expect, it } from 'vitest';
import { detectLanguage } from '../../src/executor/detect-language.js';
import { closeDetectHelper, detectHelperStats, INLINE_DETECT_CHARS } from '../../src/executor/detect-helper.js';

const options = { python: false, defaultLanguage: 'javascript' as const };
/** Types, so JavaScript's parse fails and the stripper is tried; 200 levels of brackets trap it. */
const nested = 'let x: number = ' + '('.repeat(200) + '1' + ')'.repeat(200) + ';\nreturn x';
/** 30 KB of TypeScript declarations: tens of milliseconds of stripping each. */
const long = Array.from({ length: 1300 }, (_, i) => `let a${i}: number = ${i};`).join('\n') + '\nreturn a1';

afterAll(async () => {
  await closeDetectHelper();
});

describe('language detection off the event loop', () => {
  it("one agent's pathological code neither holds the event loop nor delays another agent's detection", async () => {
    const finished: string[] = [];
    const issuedAt = performance.now();
    const attack = Array.from({ length: 10 }, (_, i) => [
      detectLanguage(nested, options).then((d) => (finished.push(`alpha-nested-${i}`), d)),
      detectLanguage(long, options).then((d) => (finished.push(`alpha-long-${i}`), d)),
    ]).flat();
    // Issuing 20 detections is a few microseconds of work when they run elsewhere (inline: seconds).
    const issueMs = performance.now() - issuedAt;
    const beta = await detectLanguage('const total = [1, 2, 3].reduce((a, b) => a + b, 0);\nreturn total', options);
    finished.push('beta');
    const results = await Promise.all(attack);

    expect(beta.language).toBe('javascript');
    expect(finished.indexOf('beta'), finished.join(' ')).toBeLessThan(finished.length - 1);
    expect(finished[0], 'beta waited behind alpha').toBe('beta');
    expect(issueMs, "issuing alpha's detections held the event loop").toBeLessThan(250);
    // The long code is TypeScript; the nested code is TypeScript too deep for the stripper (its run says so).
    expect(results.filter((d, i) => i % 2 === 1).every((d) => d.language === 'typescript')).toBe(true);
    expect(results.filter((d, i) => i % 2 === 0).every((d) => d.reason === 'typescript-too-deep')).toBe(true);
    expect(detectHelperStats().completed).toBeGreaterThanOrEqual(20);
  });

  it('short JavaScript is decided inline, without the helper', async () => {
    const before = detectHelperStats().completed;
    const code = 'return 1 + 1';
    expect(code.length).toBeLessThan(INLINE_DETECT_CHARS);
    expect((await detectLanguage(code, options)).language).toBe('javascript');
    expect(detectHelperStats().completed).toBe(before);
  });

  it("takes turns by agent on the helper: another agent's long code waits behind one of alpha's detections, not all", async () => {
    const finished: string[] = [];
    // Long enough for the helper (inline below INLINE_DETECT_CHARS), plain JavaScript: one parse each.
    const js = (name: string, n: number): string => Array.from({ length: n }, (_, i) => `const ${name}${i} = ${i};`).join('\n') + `\nreturn ${name}1`;
    const alpha = Array.from({ length: 8 }, (_, i) => detectLanguage(js('a', 3000), { ...options, agent: 'alpha' }).then(() => finished.push(`alpha-${i}`)));
    const betaCode = js('b', 200);
    expect(betaCode.length).toBeGreaterThan(INLINE_DETECT_CHARS);
    const beta = detectLanguage(betaCode, { ...options, agent: 'beta' }).then((d) => (finished.push('beta'), d));
    expect((await beta).language).toBe('javascript');
    await Promise.all(alpha);
    // One FIFO for everyone put beta behind all 8 of alpha's parses; taking turns, behind the first.
    expect(finished.indexOf('beta'), finished.join(' ')).toBeLessThanOrEqual(1);
  });
});
