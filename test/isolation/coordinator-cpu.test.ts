// Attack class: unbounded CPU on the coordinator's event loop. One agent sends the text shapes the
// PII detectors handle worst, through every door that takes text (sanitize_pii and restore_pii,
// tokenize_pii and detokenize_pii from code, an upstream call with pii.flows on); another agent's
// trivial calls and GET /healthz keep answering meanwhile. Before: one 128 KiB sanitize_pii of
// 'a:b@' runs took the event loop for seconds (a quadratic back-scan), and an upstream call with a
// 16 MB argument was scanned for flows in one synchronous piece. Language detection is such a door
// too: code without a language was parsed on the event loop (acorn, then the TypeScript stripper,
// which costs 1-2 s per MiB and traps and reloads on deep nesting): 60-150 ms a call, chosen by the agent.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everythingConfig } from '../upstream/helpers.js';
import { bystander, percentile } from '../resilience/helpers.js';
import { agent, run, startIsolationDaemon, tool, waitForServers } from './helpers.js';
import type { IsolationDaemon } from './helpers.js';

/** Generous: the target is 250 ms p99; this proves the stall is gone. */
const BOUND_MS = 2000;

let d: IsolationDaemon;
let alpha: Client;
let beta: Client;

beforeAll(async () => {
  d = await startIsolationDaemon({
    agents: [agent('alpha'), agent('beta')],
    processes: 2,
    config: {
      mcpServers: { everything: everythingConfig() },
      pii: { flows: [{ tools: 'everything.*', types: ['SSN'], action: 'deny' }] },
    },
  });
  [alpha, beta] = await Promise.all([d.client('alpha'), d.client('beta')]);
  await waitForServers(alpha, ['everything']);
}, 120_000);

afterAll(async () => {
  await d?.stop();
});

/** Runs `attack` while beta's bystander loop times its calls; returns the timings. */
async function whileAttacking(attack: () => Promise<void>): Promise<{ healthz: number[]; calls: number[] }> {
  let done!: () => void;
  const stop = new Promise<void>((r) => (done = r));
  const watching = bystander(beta, d.daemon.base, stop);
  try {
    await attack();
  } finally {
    done();
  }
  const timings = await watching;
  expect(timings.failures).toEqual([]);
  expect(timings.calls.length).toBeGreaterThan(0);
  return timings;
}

function expectFast(what: string, timings: { healthz: number[]; calls: number[] }): void {
  console.info(`${what}: bystander healthz p99 ${percentile(timings.healthz, 99).toFixed(1)} ms, call p99 ${percentile(timings.calls, 99).toFixed(1)} ms (n=${timings.calls.length})`);
  expect(Math.max(...timings.healthz), `${what}: slowest /healthz`).toBeLessThan(BOUND_MS);
  expect(Math.max(...timings.calls), `${what}: slowest trivial call`).toBeLessThan(BOUND_MS);
}

describe('PII work stays off the coordinator event loop', () => {
  it('sanitize_pii and restore_pii of adversarial text from two sessions', async () => {
    const second = await d.daemon.connect('isolation-alpha-token-0123456789abcdef');
    const text = 'a:b@'.repeat(32 * 1024) + ' mail alice@example.com';
    const timings = await whileAttacking(async () => {
      await Promise.all(
        [alpha, second].map(async (client) => {
          const sanitized = await tool(client, 'sanitize_pii', { text });
          expect(sanitized.isError, sanitized.text).toBe(false);
          expect(sanitized.structured?.['pii_types']).toEqual(['EMAIL']);
          const restored = await tool(client, 'restore_pii', { text: String(sanitized.structured?.['sanitized_text']) });
          expect(restored.structured?.['restored_text']).toBe(text);
        }),
      );
    });
    await second.close();
    expectFast('sanitize_pii flood', timings);
  }, 180_000);

  it('tokenize_pii and detokenize_pii of adversarial text from code', async () => {
    const timings = await whileAttacking(async () => {
      const r = await run(alpha, "const t = tokenize_pii('a:b@'.repeat(64 * 1024) + ' 123-45-6789'); return detokenize_pii(t).length", 'javascript', 120);
      expect(r.success, r.error).toBe(true);
      expect(r.result).toBe(256 * 1024 + 12);
    });
    expectFast('tokenize_pii from code', timings);
  }, 180_000);

  it('an upstream call with pii.flows on and a 16 MB argument', async () => {
    const timings = await whileAttacking(async () => {
      const r = await run(alpha, "try { await tools.everything.echo({ message: 'key='.repeat(4 * 1024 * 1024) + ' 123-45-6789' }); return 'sent' } catch (e) { return String(e.message) }", 'javascript', 120);
      expect(r.success, r.error).toBe(true);
      expect(String(r.result)).toMatch(/PII flow refused.*SSN/);
    });
    expectFast('flows on a 16 MB argument', timings);
  }, 180_000);

  it('language detection of deeply nested and long TypeScript from many concurrent calls', async () => {
    // Types make JavaScript's parse fail, so detection tries the TypeScript stripper: 200 levels of
    // brackets trap it (it reloads), 30 KB of declarations take it tens of milliseconds.
    const nested = 'let x: number = ' + '('.repeat(200) + '1' + ')'.repeat(200) + ';\nreturn x';
    const long = Array.from({ length: 1300 }, (_, i) => `let a${i}: number = ${i};`).join('\n') + '\nreturn a1';
    const timings = await whileAttacking(async () => {
      await Promise.all(
        Array.from({ length: 40 }, async () => {
          const [deep, big] = await Promise.all([tool(alpha, 'execute_code', { code: nested }), tool(alpha, 'execute_code', { code: long })]);
          expect(deep.structured?.['success'], deep.text).toBe(false);
          expect(big.structured?.['success'], big.text).toBe(true);
          expect(big.structured?.['result']).toBe(1);
        }),
      );
    });
    expectFast('detection of nested and long TypeScript', timings);
  }, 180_000);
});
