// Attack class: slowing another agent down. While one agent floods the pool with busy loops, sleepy
// calls, tool-call floods and Python crash loops, another agent's trivial calls still finish within
// a generous bound and are never refused as overloaded because of the flood.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agent, PYTHON_START_MS, run, startIsolationDaemon, value } from './helpers.js';
import type { IsolationDaemon, Language, RunResult } from './helpers.js';

/** Generous: a trivial call may wait for one of the attacker's calls (3-5 s), never for its queue. */
const JS_BOUND_MS = 10_000;
/** One attacker call (5 s) plus a Pyodide reload after a stack exhaustion (5-10 s on a busy machine). */
const PYTHON_BOUND_MS = 20_000;

let d: IsolationDaemon;
let attacker: Client;
let victim: Client;

beforeAll(async () => {
  d = await startIsolationDaemon({ agents: [agent('hog'), agent('alice')], processes: 2, pythonProcesses: 1 });
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

/**
 * A sustained flood: `lanes` loops, each sending the next call as soon as the last is answered,
 * until stopped (at most `seconds`). More lanes than workers keeps a queue of the attacker's calls
 * standing, so a first-come queue makes the victim wait for several of them; a fair one for one.
 */
function flood(lanes: { code: string; language: Language; timeout: number }[], seconds: number): { stop(): Promise<string> } {
  const end = Date.now() + seconds * 1000;
  let stopped = false;
  const done = Promise.all(
    lanes.map(async ({ code, language, timeout }) => {
      const outcomes: string[] = [];
      while (!stopped && Date.now() < end) outcomes.push((await run(attacker, code, language, timeout)).error_type ?? 'ok');
      return outcomes.join(',');
    }),
  );
  return {
    async stop() {
      stopped = true;
      return (await done).join(',');
    },
  };
}

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1500));

describe('one agent flooding the shared pool', () => {
  it('sustained busy loops and sleepy calls do not hold back the other agent', async () => {
    const busy = { code: 'for (;;) {}', language: 'javascript' as const, timeout: 3 };
    const sleepy = { code: 'await sleep(2800); return 1', language: 'javascript' as const, timeout: 3 };
    const hog = flood([busy, busy, busy, sleepy, sleepy, sleepy, busy, sleepy], 30);
    const calls: { ms: number; r: RunResult }[] = [];
    try {
      await settle();
      for (let i = 0; i < 4; i++) calls.push(await timed(`return ${i} * 2`, 'javascript'));
    } finally {
      // The flood really ran: the attacker's loops were cut by their timeouts.
      expect(await hog.stop()).toMatch(/TimeoutError/);
    }
    calls.forEach(({ ms, r }, i) => {
      expect(r, `victim call ${i}`).toMatchObject({ success: true, result: i * 2 });
      expect(ms, `victim call ${i} took ${ms} ms`).toBeLessThan(JS_BOUND_MS);
    });
  }, 120_000);

  it('a Python crash loop does not hold back the other agent in either language', async () => {
    const crash = { code: 'import sys\nsys.setrecursionlimit(10 ** 6)\ndef f(n):\n    return f(n + 1) + 1\nf(0)', language: 'python' as const, timeout: 5 };
    const spin = { code: 'while True:\n    pass', language: 'python' as const, timeout: 5 };
    const busy = { code: 'for (;;) {}', language: 'javascript' as const, timeout: 5 };
    const hog = flood([crash, spin, crash, busy, busy, busy], 30);
    let js: { ms: number; r: RunResult };
    let py: { ms: number; r: RunResult };
    try {
      await settle();
      js = await timed('return "still here"', 'javascript');
      py = await timed('result = "still here"', 'python');
    } finally {
      expect(await hog.stop()).toMatch(/Error/);
    }
    expect(js.r).toMatchObject({ success: true, result: 'still here' });
    expect(js.ms, `JavaScript call took ${js.ms} ms`).toBeLessThan(JS_BOUND_MS);
    expect(py.r, JSON.stringify(py.r)).toMatchObject({ success: true, result: "still here" });
    expect(py.ms, `Python call took ${py.ms} ms`).toBeLessThan(PYTHON_BOUND_MS);
  }, 180_000);
});
