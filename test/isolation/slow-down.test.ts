// Attack class: slowing another agent down. While one agent floods the pool with busy loops, sleepy
// calls, tool-call floods and Python crash loops, another agent's trivial calls still finish within
// a generous bound and are never refused as overloaded because of the flood.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agent, PYTHON_START_MS, run, startIsolationDaemon, value } from './helpers.js';
import type { IsolationDaemon, Language, RunResult } from './helpers.js';

/** Generous: a trivial call waits at most for one of the attacker's calls, never for all of them. */
const JS_BOUND_MS = 10_000;
const PYTHON_BOUND_MS = 25_000;

let d: IsolationDaemon;
let attacker: Client;
let victim: Client;

beforeAll(async () => {
  d = await startIsolationDaemon({ agents: [agent('hog'), agent('alice')], processes: 2, pythonProcesses: 1, config: { limits: { maxQueuedCalls: 40 } } });
  [attacker, victim] = await Promise.all([d.client('hog'), d.client('alice')]);
  // Python is loaded before timing anything.
  expect(await value(victim, 'result = 1 + 1', 'python')).toBe(2);
}, PYTHON_START_MS);

afterAll(async () => {
  await d?.stop();
});

/** The victim's trivial call, timed. */
async function timed(code: string, language: Language): Promise<{ ms: number; r: RunResult }> {
  const start = Date.now();
  const r = await run(victim, code, language, 60);
  return { ms: Date.now() - start, r };
}

/** Starts the flood and resolves when it is over (every attacker call answered or failed). */
function flood(calls: Promise<unknown>[]): Promise<unknown> {
  return Promise.allSettled(calls);
}

describe('one agent flooding the shared pool', () => {
  it('busy loops, sleepy calls and a call flood do not hold back the other agent', async () => {
    const hog = flood([
      ...Array.from({ length: 4 }, () => run(attacker, 'for (;;) {}', 'javascript', 8)),
      ...Array.from({ length: 60 }, () => run(attacker, 'await sleep(4000); return 1', 'javascript', 8)),
      run(attacker, 'await Promise.all(Array.from({ length: 200 }, () => Promise.resolve().then(() => list_files()))); for (;;) {}', 'javascript', 8),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (let i = 0; i < 4; i++) {
      const { ms, r } = await timed(`return ${i} * 2`, 'javascript');
      expect(r, `victim call ${i}`).toMatchObject({ success: true, result: i * 2 });
      expect(r.error_type).not.toBe('OverloadedError');
      expect(ms, `victim call ${i} took ${ms} ms`).toBeLessThan(JS_BOUND_MS);
    }
    await hog;
  }, 120_000);

  it('a Python crash loop does not hold back the other agent in either language', async () => {
    const crash = 'import sys\nsys.setrecursionlimit(10 ** 6)\ndef f(n):\n    return f(n + 1) + 1\nf(0)';
    const spin = 'while True:\n    pass';
    const hog = flood([
      ...Array.from({ length: 4 }, (_, i) => run(attacker, i % 2 === 0 ? crash : spin, 'python', 6)),
      ...Array.from({ length: 4 }, () => run(attacker, 'for (;;) {}', 'javascript', 6)),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const js = await timed('return "still here"', 'javascript');
    expect(js.r).toMatchObject({ success: true, result: 'still here' });
    expect(js.ms, `JavaScript call took ${js.ms} ms`).toBeLessThan(JS_BOUND_MS);
    const py = await timed('result = "still here"', 'python');
    expect(py.r).toMatchObject({ success: true, result: 'still here' });
    expect(py.ms, `Python call took ${py.ms} ms`).toBeLessThan(PYTHON_BOUND_MS);
    await hog;
  }, 180_000);
});
