// Attack class: a shared parser whose failures were neither contained nor charged. Alpha sends
// TypeScript that passes the nesting guard and still traps the type stripper (long label, `new`,
// `await`, `keyof`, `readonly` chains), with and without `language`, on a daemon whose one sandbox
// thread it shares with beta. Before: each trap loaded the stripper twice and kept ~11 MB of the
// dead instances in the thread every agent shares (88 -> 640 MB after about 50 calls, then beta's
// trivial calls failed "over its memory_mb limit"), and detection's helper thread inside the daemon
// kept ~22 MB per call without `language` (146 -> 1,051 MB after 40). Now each trap costs its
// caller one fresh stripper, the dead one's memory goes, and beta never notices.

import { readFileSync, readdirSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bystander } from '../resilience/helpers.js';
import { TRAPPING_SHAPES } from '../executor/fixtures/trapping-typescript.js';
import { agent, startIsolationDaemon } from './helpers.js';
import type { IsolationDaemon } from './helpers.js';

/** The bounds docs/shared-budgets.md states: growth over 50 trapping calls, MiB. */
const SANDBOX_GROWTH_MB = 150;
const DAEMON_GROWTH_MB = 150;

let d: IsolationDaemon;
let alpha: Client;
let beta: Client;

beforeAll(async () => {
  d = await startIsolationDaemon({ agents: [agent('alpha'), agent('beta')], processes: 1 });
  [alpha, beta] = await Promise.all([d.client('alpha'), d.client('beta')]);
}, 120_000);

afterAll(async () => {
  await d?.stop();
});

/** Resident memory of a process, MiB. */
function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:')) ?? '';
  return Number(/(\d+)/.exec(line)?.[1] ?? 0) / 1024;
}

/** The daemon's sandbox processes (its children running node). */
function sandboxPids(daemonPid: number): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1] === String(daemonPid);
      } catch {
        return false;
      }
    });
}

function memory(): { daemon: number; sandbox: number } {
  const pid = d.daemon.proc.pid as number;
  return { daemon: rssMb(pid), sandbox: Math.max(0, ...sandboxPids(pid).map(rssMb)) };
}

/** Alpha's i-th trapping call: with `language`, one of five chains; without, a TypeScript-only chain (keyof) under detection's 32 KiB. */
function attack(i: number): { code: string; language?: string } {
  const withLanguage = ['labels (870)', 'new chain (4,600)', 'await chain (3,600)', 'keyof chain (3,300)', 'readonly chain (3,300)'];
  if (i % 2 === 0) {
    const shape = TRAPPING_SHAPES[withLanguage[(i / 2) % withLanguage.length] as string] as (n: number) => string;
    return { code: `const alpha${i}: number = ${i};\n${shape(5000)}\nreturn alpha${i}`, language: 'typescript' };
  }
  const shape = TRAPPING_SHAPES['keyof chain (3,300)'] as (n: number) => string;
  return { code: `const alpha${i}: number = ${i};\n${shape(5000)}\nreturn alpha${i}` };
}

describe('TypeScript that traps the type stripper', () => {
  it("fails alpha's 50 calls with the clear error while beta's calls succeed and neither process grows past its bound", async () => {
    // Warm: the stripper loaded in the sandbox thread and in detection's helper.
    const warm = await alpha.callTool({ name: 'execute_code', arguments: { code: 'type T = { a: number };\nconst x: T = { a: 1 };\nreturn x.a' } });
    expect((warm.structuredContent as { result?: unknown }).result).toBe(1);
    const before = memory();

    let done!: () => void;
    const stop = new Promise<void>((resolve) => (done = resolve));
    const watching = bystander(beta, d.daemon.base, stop);
    const answers: { success: boolean; error?: string; language?: string }[] = [];
    try {
      for (let i = 0; i < 50; i++) {
        const answer = await alpha.callTool({ name: 'execute_code', arguments: { ...attack(i), timeout_seconds: 60 } }, undefined, { timeout: 120_000 });
        answers.push(answer.structuredContent as { success: boolean; error?: string; language?: string });
      }
    } finally {
      done();
    }
    const after = memory();
    const timings = await watching;
    console.info(`50 trapping calls: sandbox ${before.sandbox.toFixed(0)} -> ${after.sandbox.toFixed(0)} MB, daemon ${before.daemon.toFixed(0)} -> ${after.daemon.toFixed(0)} MB, beta ${timings.calls.length} calls`);

    for (const [i, r] of answers.entries()) {
      expect(r, `call ${i}`).toMatchObject({ success: false, language: 'typescript' });
      // After its first traps alpha cools down (stripper-strikes.test.ts): refused at once, saying why.
      expect(r.error, `call ${i}`).toMatch(/^TypeScript (too deeply nested for the type stripper|refused for this agent for \d+ s more): .*pass language "javascript" if (it|the code) has no types/);
    }
    expect(timings.failures).toEqual([]);
    expect(timings.calls.length).toBeGreaterThan(0);
    expect(after.sandbox - before.sandbox, 'sandbox process growth, MB').toBeLessThan(SANDBOX_GROWTH_MB);
    expect(after.daemon - before.daemon, 'daemon growth, MB').toBeLessThan(DAEMON_GROWTH_MB);

    // The thread alpha trapped 50 times still runs beta's TypeScript.
    const ts = await beta.callTool({ name: 'execute_code', arguments: { code: 'const n: number = 41;\nreturn n + 1', language: 'typescript' } });
    expect((ts.structuredContent as { result?: unknown }).result).toBe(42);
  }, 900_000);
});
