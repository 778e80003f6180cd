// Attack class: an agent whose calls keep trapping the shared TypeScript stripper. Each trap is
// contained (a fresh stripper, in the trapping call), but it still costs a thread every agent
// shares about 0.1 s and a reload; before, nothing stopped one agent from doing it forever, and
// code sent without `language` trapped twice (detection's helper, then the sandbox thread). Now
// each trap is one strike against the agent that caused it, wherever it happened (a run, detection,
// a skill save); at STRIKES_BEFORE_COOL_DOWN its TypeScript is refused at once for a cool-down,
// while its JavaScript and every other agent's calls go on.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STRIKES_BEFORE_COOL_DOWN } from '../../src/util/trap-strikes.js';
import { TRAPPING_SHAPES } from '../executor/fixtures/trapping-typescript.js';
import { bystander, percentile } from '../resilience/helpers.js';
import { agent, startIsolationDaemon, tool } from './helpers.js';
import type { IsolationDaemon } from './helpers.js';

const TOO_DEEP = /^TypeScript too deeply nested for the type stripper: it ran out of stack/;
const REFUSED = /^TypeScript refused for this agent for \d+ s more: its code trapped the type stripper 5 times within 60 s/;
const labels = TRAPPING_SHAPES['labels (870)'] as (n: number) => string;
const keyof = TRAPPING_SHAPES['keyof chain (3,300)'] as (n: number) => string;

let d: IsolationDaemon;

beforeAll(async () => {
  d = await startIsolationDaemon({ agents: ['alpha', 'beta', 'gamma', 'delta'].map((n) => agent(n)), processes: 1 });
}, 120_000);

afterAll(async () => {
  await d?.stop();
});

interface Answer {
  success: boolean;
  error?: string;
  result?: unknown;
  language?: string;
}

async function call(c: Client, code: string, language?: string): Promise<Answer> {
  const r = await c.callTool({ name: 'execute_code', arguments: { code, timeout_seconds: 60, ...(language ? { language } : {}) } }, undefined, { timeout: 120_000 });
  return r.structuredContent as Answer;
}

describe('agents that keep trapping the type stripper', () => {
  it("alpha's trapping calls are refused after its strikes while beta's calls all succeed", async () => {
    const [alpha, beta] = await Promise.all([d.client('alpha'), d.client('beta')]);
    let done!: () => void;
    const watching = bystander(beta, d.daemon.base, new Promise<void>((resolve) => (done = resolve)));
    const answers: Answer[] = [];
    const took: number[] = [];
    let coolingSince = Infinity;
    try {
      for (let i = 0; i < 30; i++) {
        const t = performance.now();
        answers.push(await call(alpha, `const a${i}: number = ${i};\n${labels(5000)}\nreturn a${i}`, 'typescript'));
        took.push(performance.now() - t);
        if (i === STRIKES_BEFORE_COOL_DOWN - 1) coolingSince = Date.now();
      }
    } finally {
      done();
    }
    const timings = await watching;
    const cooled = timings.calls.filter((_, i) => (timings.startedAt[i] ?? 0) >= coolingSince);
    console.info(`alpha 30 trapping calls (refused ones: median ${percentile(took.slice(STRIKES_BEFORE_COOL_DOWN), 50).toFixed(0)} ms); beta ${timings.calls.length} calls, p99 ${percentile(timings.calls, 99).toFixed(0)} ms, ${cooled.length} after the cool-down began, p99 ${percentile(cooled, 99).toFixed(0)} ms`);
    for (const [i, r] of answers.entries()) {
      expect(r.success, `call ${i}`).toBe(false);
      expect(r.error, `call ${i}`).toMatch(i < STRIKES_BEFORE_COOL_DOWN ? TOO_DEEP : REFUSED);
    }
    expect(timings.failures).toEqual([]);
    // Refused at once, without the shared thread: generous bounds that show no trap ran.
    expect(percentile(took.slice(STRIKES_BEFORE_COOL_DOWN), 50)).toBeLessThan(1_000);
    expect(cooled.length).toBeGreaterThan(0);
    expect(percentile(cooled, 99)).toBeLessThan(2_000);
    // Alpha's JavaScript still runs, and beta's TypeScript on the thread alpha trapped.
    expect((await call(alpha, 'return 40 + 2', 'javascript')).result).toBe(42);
    expect((await call(beta, 'const n: number = 41;\nreturn n + 1', 'typescript')).result).toBe(42);
  }, 600_000);

  it('without `language`, trapping code is charged once (detection), not run to trap the sandbox too', async () => {
    const gamma = await d.client('gamma');
    const code = (i: number): string => `const g${i}: number = ${i};\n${keyof(5000)}\nreturn g${i}`;
    // Charged twice (detection, then the run), the third call would already be refused.
    for (let i = 0; i < STRIKES_BEFORE_COOL_DOWN; i++) {
      const r = await call(gamma, code(i));
      expect(r, `call ${i}`).toMatchObject({ success: false, language: 'typescript' });
      expect(r.error, `call ${i}`).toMatch(TOO_DEEP);
    }
    const refused = await call(gamma, code(99));
    expect(refused).toMatchObject({ success: false, language: 'typescript' });
    expect(refused.error).toMatch(REFUSED);
  }, 300_000);

  it("a skill save that traps the stripper is a strike too: delta's saves cool its TypeScript calls down", async () => {
    const delta = await d.client('delta');
    for (let i = 0; i < STRIKES_BEFORE_COOL_DOWN; i++) {
      const r = await tool(delta, 'save_skill', { name: `deep_${i}`, language: 'typescript', code: `export const d: number = ${i};\n${labels(5000)}\n` });
      expect(r.isError, r.text).toBe(true);
      expect(r.text).toMatch(/TypeScript too deeply nested for the type stripper/);
    }
    expect((await call(delta, 'const n: number = 1;\nreturn n', 'typescript')).error).toMatch(REFUSED);
    const beta = await d.client('beta');
    const saved = await tool(beta, 'save_skill', { name: 'typed_add', language: 'typescript', code: 'export function add(a: number, b: number): number { return a + b }\n' });
    expect(saved.isError, saved.text).toBe(false);
  }, 300_000);
});
