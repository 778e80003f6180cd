// Attacks on the single path (issue 31, item 6), by two and three agents on one real sandbox
// process of each language: a guest that floods its thread's link (output streamed as fast as it
// can print, awaited host calls past their bound) while other agents' calls run and follow, and a
// link dropped in the middle of a Python call. Each passes when the other agents' calls are served
// whole, on time and with nothing of the attacker's, and the dropped call ends with a clear error
// instead of hanging.

import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionResult } from '../../src/executor/index.js';
import { startSandbox } from '../fixtures/escape/sandbox.js';
import type { Sandbox } from '../fixtures/escape/sandbox.js';
import { PYTHON_START_MS } from '../python/helpers.js';

type Language = 'javascript' | 'python';

/** One call of `agent`, its streamed lines collected. */
async function call(sb: Sandbox, agent: string, code: string, language: Language, timeoutSeconds = 20, onLine?: () => void): Promise<{ r: ExecutionResult; streamed: string[]; ms: number }> {
  const streamed: string[] = [];
  const started = performance.now();
  const onOutput = (l: string): void => {
    streamed.push(l);
    onLine?.();
  };
  const r = await sb.run(code, { agent, namespace: `ns-${agent}`, timeoutSeconds, language: language as 'javascript', onOutput });
  return { r, streamed, ms: performance.now() - started };
}

/** Every line an agent printed or got streamed, as one string: nothing of another agent's may be in it. */
const linesOf = (c: { r: ExecutionResult; streamed: string[] }): string => [...c.r.output, ...c.streamed].join('\n');

const JS_FLOOD = [
  "let sent = 0, refused = 0;",
  'for (let i = 0; ; i++) {',
  "  console.log('ALPHA-FLOOD-' + 'a'.repeat(2000));",
  "  tools.up.echo({ from: 'ALPHA-FLOOD' }).then(() => sent++, () => refused++);",
  '  if (i % 200 === 0) await sleep(0);',
  '}',
].join('\n');

const PY_FLOOD = "while True:\n    print('ALPHA-FLOOD-' + 'a' * 2000)";

describe('a guest flooding its link: JavaScript, three agents on one process of two threads', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({
      sandbox: { processes: 1, threadsPerProcess: 2 },
      toolNames: ['up.echo'],
      extensions: { call_tool: async ([, , args]) => ({ echoed: args }) },
    });
  });
  afterAll(async () => {
    await sb.close();
  });

  it("serves beta's calls whole and on time beside alpha's flood, and gamma's after it, with nothing of alpha's", async () => {
    const flood = call(sb, 'alpha', JS_FLOOD, 'javascript', 4);
    const betas: Awaited<ReturnType<typeof call>>[] = [];
    for (let i = 0; i < 15; i++) {
      betas.push(await call(sb, 'beta', `console.log('beta ${i}'); const t = await tools.up.echo({ n: ${i} }); return [${i}, t]`, 'javascript'));
    }
    const alpha = await flood;
    expect(alpha.r.error_type).toBe('TimeoutError');
    // Its output stayed within the per-call bound, however fast it printed, and its host calls
    // within theirs (call-scope.ts MAX_ASYNC_IN_FLIGHT, beta's one beside them).
    expect(alpha.r.output.length).toBeLessThanOrEqual(10_001);
    expect(sb.hostLog.maxInFlight).toBeLessThanOrEqual(33);
    betas.forEach((b, i) => {
      expect(b.r.success, `${b.r.error_type}: ${b.r.error}`).toBe(true);
      expect(b.r.result).toEqual([i, { echoed: { n: i } }]);
      expect(b.r.output).toEqual([`beta ${i}`]);
      expect(linesOf(b)).not.toContain('ALPHA');
      // Generous: a flood on the other thread must not stall this one (a stall waits out alpha's 4 s).
      expect(b.ms).toBeLessThan(3_000);
    });
    for (const agent of ['gamma', 'beta']) {
      const after = await call(sb, agent, `console.log('${agent} after'); return '${agent}'`, 'javascript');
      expect(after.r.result).toBe(agent);
      expect(after.r.output).toEqual([`${agent} after`]);
      expect(after.streamed).toEqual([`${agent} after`]);
    }
  }, 60_000);
});

describe('Python on one process: a flooding guest and a link dropped mid-call, three agents', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 1 } });
    const first = await call(sb, 'beta', 'result = 1', 'python', PYTHON_START_MS / 1000 - 10);
    if (!first.r.success) throw new Error(`the Python sandbox did not start: ${first.r.error_type}: ${first.r.error}`);
  }, PYTHON_START_MS);
  afterAll(async () => {
    await sb.close();
  });

  it("alpha's flood ends at its time limit within its output bound; beta and gamma then get the process, with nothing of alpha's", async () => {
    const alpha = await call(sb, 'alpha', PY_FLOOD, 'python', 3);
    expect(alpha.r.error_type).toBe('TimeoutError');
    expect(alpha.r.output.length).toBeLessThanOrEqual(10_001);
    for (const agent of ['beta', 'gamma', 'alpha']) {
      const next = await call(sb, agent, `print('${agent} here')\nresult = '${agent}'`, 'python', 60);
      expect(next.r.result, `${next.r.error_type}: ${next.r.error}`).toBe(agent);
      expect(next.r.output).toEqual([`${agent} here`]);
      expect(linesOf(next)).not.toContain('ALPHA');
    }
  }, 240_000);

  it("a link dropped while alpha's call runs ends that call with a clear error, not a hang; beta, gamma and alpha are served after", async () => {
    let started: () => void = () => {};
    const onThread = new Promise<void>((resolve) => (started = resolve));
    const running = call(sb, 'alpha', "import time\nprint('alpha started')\nwhile True:\n    time.sleep(0.01)", 'python', 60, () => started());
    // The call is on its thread once its first line came back over the link.
    await Promise.race([onThread, running]);
    const dropped = linkSockets();
    expect(dropped.length).toBeGreaterThan(0);
    for (const s of dropped) s.destroy();
    const alpha = await running;
    expect(alpha.r.success).toBe(false);
    expect(alpha.r.error_type).toBe('SandboxCrashError');
    // Answered by its process, or after LINK_LOST_MS (2 s) at most: far from the call's 60 s.
    expect(alpha.ms).toBeLessThan(20_000);
    for (const agent of ['beta', 'gamma', 'alpha']) {
      const next = await call(sb, agent, `print('${agent} again')\nresult = '${agent}'`, 'python', 60);
      expect(next.r.result, `${next.r.error_type}: ${next.r.error}`).toBe(agent);
      expect(next.r.output).toEqual([`${agent} again`]);
    }
  }, 240_000);
});

/** The coordinator's ends of the host links in this test's process (accepted by a link server's socket). */
function linkSockets(): net.Socket[] {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles.filter((h): h is net.Socket => {
    if (!(h instanceof net.Socket)) return false;
    const address = (h as net.Socket & { server?: net.Server }).server?.address();
    return typeof address === 'string' && /cem-host-[^/]+\/host\.sock$/.test(address);
  });
}
