// Each worker thread keeps one channel to its pool host for all its calls (thread-channel.ts).
// What one call's host traffic leaves on it - a reply that comes after the call ended - must
// never be taken by the next call on that thread, which is another agent's as often as not.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../fixtures/escape/sandbox.js';
import type { Sandbox } from '../fixtures/escape/sandbox.js';

let sb: Sandbox;

beforeAll(async () => {
  sb = await startSandbox({
    // One process with one thread: every call runs on the same thread, one after another.
    sandbox: { processes: 1, threadsPerProcess: 1 },
    toolNames: ['up.slow', 'up.echo'],
    extensions: {
      call_tool: async ([, tool, args]) => {
        if (tool === 'slow') await new Promise((resolve) => setTimeout(resolve, 400));
        return args;
      },
    },
  });
}, 60_000);

afterAll(async () => {
  await sb?.close();
});

describe('a thread shared by consecutive calls', () => {
  it('a reply for an ended call never answers the next call on the same thread', async () => {
    for (let round = 0; round < 3; round++) {
      // The first call ends (timeout) while its upstream call is still out; its reply lands later.
      const first = await sb.run('await tools.up.slow({ from: "mallory" }); return "unreachable"', { agent: 'mallory', namespace: 'agent-m', timeoutSeconds: 0.2 });
      expect(first.error_type).toBe('TimeoutError');
      // The next call on that thread asks the same shape of question, with the same host call ids.
      const second = await sb.run('const a = await tools.up.slow({ from: "alice" }); const b = await tools.up.echo({ n: 2 }); return [a, b]', { agent: 'alice', namespace: 'agent-a' });
      expect(second.error, second.traceback).toBeUndefined();
      expect(second.result).toEqual([{ from: 'alice' }, { n: 2 }]);
    }
  });

  it('output streamed by a call is its own, whatever ran on the thread before', async () => {
    await sb.run('console.log("from mallory"); for (let i = 0; i < 50; i++) console.log(i);', { agent: 'mallory', namespace: 'agent-m' });
    const lines: string[] = [];
    const r = await sb.run('console.log("from alice"); return 1', { agent: 'alice', namespace: 'agent-a', onOutput: (l) => lines.push(l) });
    expect(r.output).toEqual(['from alice']);
    expect(lines).toEqual(['from alice']);
  });
});

describe('the tools object, listed only when code enumerates it', () => {
  let perAgent: Sandbox;

  beforeAll(async () => {
    perAgent = await startSandbox({
      sandbox: { processes: 1, threadsPerProcess: 1 },
      toolNames: (identity) => (identity.agent === 'alice' ? ['up.echo', 'docs.search'] : ['up.slow', 'evil.plant']),
      extensions: { call_tool: async ([server, tool, args]) => ({ server, tool, args }) },
    });
  }, 60_000);

  afterAll(async () => {
    await perAgent?.close();
  });

  it('enumeration, `in`, JSON and harden show exactly what the agent may call', async () => {
    const r = await perAgent.run(
      `const keys = [Object.keys(tools), Object.keys(tools.up), 'up' in tools, 'nope' in tools, 'echo' in tools.up];
       const same = tools.up.echo === tools.up.echo;
       const json = JSON.stringify(tools);
       harden(tools);
       return [...keys, same, json, Object.isFrozen(tools.up), await tools.up.echo({ n: 1 })]`,
      { agent: 'alice' },
    );
    expect(r.error, r.traceback).toBeUndefined();
    expect(r.result).toEqual([['up', 'docs'], ['echo'], true, false, true, true, '{"up":{},"docs":{}}', true, { server: 'up', tool: 'echo', args: { n: 1 } }]);
  });

  it('a call that never enumerates still reaches any tool by name; unknown names reach the host too', async () => {
    const r = await perAgent.run('return [await tools.docs.search({ q: 1 }), typeof tools.nothere.tool]', { agent: 'alice' });
    expect(r.result).toEqual([{ server: 'docs', tool: 'search', args: { q: 1 } }, 'function']);
  });

  it("what one agent lists or plants on its tools object is gone for the next agent on the same thread", async () => {
    for (let round = 0; round < 2; round++) {
      const m = await perAgent.run('Object.keys(tools); tools.up.echo = () => "planted"; tools.planted = { x: 1 }; return Object.keys(tools)', { agent: 'mallory', namespace: 'agent-m' });
      expect(m.result).toEqual(['up', 'evil', 'planted']);
      const a = await perAgent.run('return [Object.keys(tools), Object.keys(tools.up), await tools.up.echo({ ok: true })]', { agent: 'alice' });
      expect(a.result).toEqual([['up', 'docs'], ['echo'], { server: 'up', tool: 'echo', args: { ok: true } }]);
    }
  });
});
