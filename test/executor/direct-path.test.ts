// The direct path (SPEC "Shape"): a JavaScript call goes from the coordinator straight to its
// worker thread over the thread's own link and its answer comes back there; the sandbox process's
// main thread keeps only the control plane (abort, memory watch, replacing threads). Through real
// sandbox processes: results, output streaming, host calls both ways, timeouts, cancels, memory
// kills and thread replacement, two agents alternating on one thread with realms prepared while
// idle, and floods of the link. The frame rules themselves are in thread-links.test.ts.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../fixtures/escape/sandbox.js';
import type { Sandbox } from '../fixtures/escape/sandbox.js';

describe('the direct path, one process of one thread', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({
      sandbox: { processes: 1, threadsPerProcess: 1 },
      toolNames: ['up.echo'],
      extensions: { call_tool: async ([, , args]) => ({ echoed: args }) },
    });
  });
  afterAll(async () => {
    await sb.close();
  });

  it('runs calls over the thread link, not through the process main thread', async () => {
    const before = sb.executor.stats().direct_calls;
    for (let i = 0; i < 5; i++) {
      const r = await sb.run(`return ${i} * 2`);
      expect(r.success).toBe(true);
      expect(r.result).toBe(i * 2);
    }
    expect(sb.executor.stats().direct_calls - before).toBe(5);
  });

  it('streams output back over the link while the call runs, and keeps it in the result', async () => {
    const streamed: string[] = [];
    const r = await sb.run('console.log("one"); await sleep(120); console.log("two"); return 1', { onOutput: (l) => streamed.push(l) });
    expect(r.success).toBe(true);
    expect(r.output).toEqual(['one', 'two']);
    expect(streamed).toEqual(['one', 'two']);
  });

  it('serves awaited host calls on the link and blocking ones through the process', async () => {
    const r = await sb.run('write_file("d.txt", "hello"); const t = await tools.up.echo({ n: 1 }); return [read_file("d.txt"), t]');
    expect(r.success).toBe(true);
    expect(r.result).toEqual(['hello', { echoed: { n: 1 } }]);
  });

  it('ends a synchronous runaway loop with TimeoutError, replaces the thread, and serves the next call', async () => {
    const r = await sb.run('for (;;) {}', { timeoutSeconds: 1 });
    expect(r.success).toBe(false);
    expect(r.error_type).toBe('TimeoutError');
    expect(r.error).toMatch(/timed out after (1|0\.9\d*) seconds/);
    const next = await sb.run('return "alive"');
    expect(next.result).toBe('alive');
  });

  it('cancels a running call (its thread is ended) and serves the next one', async () => {
    const controller = new AbortController();
    const identity = { agent: 'a', sessionId: 's', workspaceNamespace: 'agent-a', permissions: { workspace: 'read-write' as const, skills: 'read-write' as const, tools: ['*'], net: [] } };
    const running = sb.executor.execute({ code: 'for (;;) {}', language: 'javascript', timeoutSeconds: 20, memoryMb: 200 }, identity, { signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    const r = await running;
    expect(r.error_type).toBe('CancelledError');
    expect((await sb.run('return 7')).result).toBe(7);
  });

  it('stops a call past its memory_mb and serves the next one', async () => {
    const r = await sb.run('const a = []; for (;;) a.push(new Array(1e5).fill(1))', { memoryMb: 64, timeoutSeconds: 20 });
    expect(r.success).toBe(false);
    expect(r.error_type).toBe('MemoryLimitError');
    expect((await sb.run('return "after"')).result).toBe('after');
  });

  it('a guest that floods its link with output stays within its output bound and the next call is served', async () => {
    const r = await sb.run('for (let i = 0; i < 200000; i++) console.log("x".repeat(100)); return 1', { onOutput: () => undefined, timeoutSeconds: 20 });
    expect(r.success).toBe(true);
    const next = await sb.run('return "next"');
    expect(next.result).toBe('next');
  });

  it('a thread ended while it streams output answers its call with TimeoutError, and the next call is served', async () => {
    const r = await sb.run('for (;;) console.log("y".repeat(1000))', { onOutput: () => undefined, timeoutSeconds: 1 });
    expect(r.error_type).toBe('TimeoutError');
    expect((await sb.run('return 3')).result).toBe(3);
  });
});

describe('two agents on one thread, realms prepared while idle', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ sandbox: { processes: 1, threadsPerProcess: 1 } });
  });
  afterAll(async () => {
    await sb.close();
  });

  it('what a planter leaves in its realm never reaches the next agent, prepared or not', async () => {
    for (let round = 0; round < 3; round++) {
      const plant = await sb.run(
        `globalThis.planted = "mallory"; result = "x"; var leaked = 1;
         globalThis.console.log = () => "hijacked"; globalThis.read_file = () => "forged";
         try { Object.prototype.evil = 1 } catch {}
         return Object.keys(globalThis).length`,
        { agent: 'mallory', namespace: 'mallory' },
      );
      expect(plant.success).toBe(true);
      const victim = await sb.run(
        `console.log("mine"); return { planted: typeof planted, leaked: typeof leaked, result: typeof result === "undefined" ? "undefined" : result, evil: ({}).evil, read: String(read_file).includes("forged") }`,
        { agent: 'alice', namespace: 'alice' },
      );
      expect(victim.success).toBe(true);
      expect(victim.output).toEqual(['mine']);
      expect(victim.result).toEqual({ planted: 'undefined', leaked: 'undefined', result: 'undefined', evil: null, read: false });
    }
  });

  it('a call cannot reach the realm prepared for the next call', async () => {
    // Everything a guest can walk from its own globals: no other Compartment, no host realm.
    const r = await sb.run(
      `const seen = [];
       for (const k of Object.getOwnPropertyNames(globalThis)) { try { const v = globalThis[k]; if (v && typeof v === "object" && v !== globalThis && typeof v.evaluate === "function") seen.push(k) } catch {} }
       return { seen, compartment: typeof Compartment }`,
      { agent: 'mallory', namespace: 'mallory' },
    );
    expect(r.result).toEqual({ seen: [], compartment: 'undefined' });
    const v = await sb.run('return typeof planted', { agent: 'alice', namespace: 'alice' });
    expect(v.result).toBe('undefined');
  });
});
