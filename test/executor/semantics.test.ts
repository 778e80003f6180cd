// execute_code semantics through the real pool (sandbox processes, piscina, SES): results, output,
// context_vars, JSON conversion, errors with positions, TypeScript, globals, limits, budget.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExecutor, createHostApi } from '../../src/executor/index.js';
import type { CallIdentity, ExecutionRequest, ExecutionResult, PooledExecutor } from '../../src/executor/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { Workspace } from '../../src/workspace/index.js';
import { FULL_PERMISSIONS, testConfig } from '../fixtures/config.js';

const config = testConfig({ limits: { ...testConfig().limits, maxOutputChars: 2_000 } });
const workspace = new Workspace({ root: config.workspaceDir, maxFileBytes: config.limits.maxFileBytes });
let executor: PooledExecutor;

const agent: CallIdentity = { agent: 'a', sessionId: 's-a', workspaceNamespace: 'agent-a', permissions: FULL_PERMISSIONS };

function run(code: string, extra: Partial<ExecutionRequest> = {}, identity: CallIdentity = agent): Promise<ExecutionResult> {
  return executor.execute({ code, language: 'javascript', timeoutSeconds: 10, memoryMb: 256, ...extra }, identity);
}

beforeAll(async () => {
  executor = await createExecutor({
    config,
    hostApi: createHostApi({ config, workspace, logger: silentLogger() }),
    logger: silentLogger(),
    workspace,
  });
});

afterAll(async () => {
  await executor.close();
});

describe('results', () => {
  it('returns the value of a top-level return', async () => {
    const r = await run('return 6 * 7');
    expect(r).toMatchObject({ success: true, result: 42, output: [] });
    expect(r.execution_time_ms).toBeGreaterThan(0);
  });

  it('supports top-level await', async () => {
    expect((await run('const v = await Promise.resolve(5); return v + 1')).result).toBe(6);
  });

  it("uses the global `result` when nothing is returned (the seed's convention)", async () => {
    expect((await run('result = { total: 3 }')).result).toEqual({ total: 3 });
  });

  it('gives null when nothing is returned or assigned', async () => {
    expect(await run('const x = 1')).toMatchObject({ success: true, result: null });
  });

  it('converts values that JSON cannot carry instead of crashing', async () => {
    const r = await run(`
      const cyclic = { name: 'c' }; cyclic.self = cyclic;
      return {
        undef: undefined, big: 12345678901234567890n, map: new Map([['k', 1]]), set: new Set([1, 2]),
        date: new Date(0), cyclic, fn: function named() {}, sym: Symbol('s'), nan: NaN,
        bytes: new Uint8Array([1, 2]), err: new RangeError('bad'), re: /x/g,
        proxy: new Proxy({}, { get() { throw new Error('trap'); }, ownKeys() { throw new Error('keys trap'); } }),
      };`);
    expect(r.success).toBe(true);
    expect(r.result).toEqual({
      undef: null,
      big: '12345678901234567890',
      map: { k: 1 },
      set: [1, 2],
      date: '1970-01-01T00:00:00.000Z',
      cyclic: { name: 'c', self: '[Circular]' },
      fn: '[Function: named]',
      sym: 'Symbol(s)',
      nan: null,
      bytes: [1, 2],
      err: { name: 'RangeError', message: 'bad' },
      re: '/x/g',
      proxy: expect.stringMatching(/^\[Unserializable: Error: (keys )?trap\]$/),
    });
  });

  it('describes a returned function or symbol at the top level', async () => {
    expect((await run('return () => 1')).result).toBe('[Function: anonymous]');
    expect((await run('return Symbol.iterator')).result).toBe('Symbol(Symbol.iterator)');
  });
});

describe('output', () => {
  it('captures console methods and print in order', async () => {
    const r = await run(`console.log('a', 1, {b: [2]}); console.info('i'); console.warn('w'); console.error('e'); print('p'); return null`);
    expect(r.output).toEqual(['a 1 {"b":[2]}', 'i', 'w', 'e', 'p']);
  });

  it('streams output lines to onOutput while the call runs', async () => {
    const lines: string[] = [];
    const r = await executor.execute(
      { code: "console.log('one'); await sleep(80); console.log('two'); return 1", language: 'javascript', timeoutSeconds: 10, memoryMb: 256 },
      agent,
      { onOutput: (line) => lines.push(line) },
    );
    expect(r.success).toBe(true);
    expect(lines).toEqual(['one', 'two']);
  });
});

describe('context_vars', () => {
  it('become globals', async () => {
    const r = await run('return items.filter((i) => i > limit)', { contextVars: { items: [1, 5, 9], limit: 4 } });
    expect(r.result).toEqual([5, 9]);
  });

  it('long strings reach the code whole, beside short values (they travel apart from the JSON)', async () => {
    const raw = JSON.stringify(Array.from({ length: 4_000 }, (_, i) => ({ id: i, q: '"\\\n😀' })));
    const r = await run('return [raw.length, raw === JSON.stringify(JSON.parse(raw)), JSON.parse(raw)[3999].q, n]', { contextVars: { raw, n: 2 } });
    expect(r.result).toEqual([raw.length, true, '"\\\n😀', 2]);
  });

  it('may not hide sandbox functions', async () => {
    const r = await run('return 1', { contextVars: { read_file: 'x' } });
    expect(r).toMatchObject({ success: false, error_type: 'ValidationError' });
    expect(r.error).toMatch(/read_file/);
  });

  it('must be identifiers', async () => {
    const r = await run('return 1', { contextVars: { 'not valid': 1 } });
    expect(r).toMatchObject({ success: false, error_type: 'ValidationError' });
  });
});

describe('errors', () => {
  it('reports the error class, message and line:column into the submitted code', async () => {
    const r = await run('const a = 1;\nconst b = null;\n  b.field;');
    expect(r).toMatchObject({ success: false, error_type: 'TypeError' });
    expect(r.error).toMatch(/Cannot read properties of null/);
    expect(r.traceback).toContain('user-code.js:3:5');
  });

  it('maps positions on the first line past the wrapper', async () => {
    const r = await run('null.x');
    expect(r.traceback).toContain('user-code.js:1:6');
  });

  it('keeps host paths and host frames out of tracebacks', async () => {
    const r = await run('function inner() { throw new Error("boom") }\ninner()');
    expect(r.traceback).toContain('at inner (user-code.js:1:26)');
    expect(r.traceback).not.toMatch(/node:|file:|\/work\/|dist\/|node_modules/);
  });

  it('keeps a custom error class name', async () => {
    const r = await run('class QuotaError extends Error { constructor(m) { super(m); this.name = "QuotaError"; } }\nthrow new QuotaError("over")');
    expect(r).toMatchObject({ error_type: 'QuotaError', error: 'over' });
  });

  it('describes a thrown non-error', async () => {
    expect(await run('throw "plain string"')).toMatchObject({ success: false, error_type: 'Error', error: 'Uncaught plain string' });
  });

  it('reports syntax errors with line and column before running anything', async () => {
    const r = await run('const ok = 1;\nconst = 2;');
    expect(r).toMatchObject({ success: false, error_type: 'SyntaxError' });
    expect(r.traceback).toMatch(/user-code\.js:2:7/);
  });

  it('explains that static imports are not available', async () => {
    const r = await run("import fs from 'node:fs';\nreturn 1");
    expect(r.error_type).toBe('SyntaxError');
    expect(r.error).toMatch(/import_skill/);
  });

  it('adds a hint for assignments to undeclared variables (strict mode)', async () => {
    const r = await run('total = 4');
    expect(r.error_type).toBe('ReferenceError');
    expect(r.error).toMatch(/let or const/);
  });

  it('turns an unhandled rejection into an output line, not a crash', async () => {
    const r = await run('Promise.reject(new Error("ignored")); await sleep(5); return "ok"');
    expect(r.result).toBe('ok');
    expect((await run('return 2')).result).toBe(2);
  });
});

describe('typescript', () => {
  it('strips types and runs', async () => {
    const r = await run('interface P { x: number }\nconst p: P = { x: 2 };\nfunction sq(n: number): number { return n * n }\nreturn sq(p.x) as number', { language: 'typescript' });
    expect(r).toMatchObject({ success: true, result: 4 });
  });

  it('points errors at the code as submitted', async () => {
    const r = await run('const label: string = "x";\nconst o: { v: number } | null = null;\nconst n: number = (o as any).v;', { language: 'typescript' });
    expect(r.error_type).toBe('TypeError');
    expect(r.traceback).toContain('user-code.js:3:30');
  });

  it('supports enums through the full compiler', async () => {
    const r = await run('enum Color { Red, Green }\nreturn Color.Green', { language: 'typescript' });
    expect(r.result).toBe(1);
  });
});

describe('source text SES would refuse', () => {
  it('runs code holding import(, <!-- and --> in strings, templates, regexes and comments', async () => {
    const r = await run(
      [
        '// call import(x) later <!-- note -->',
        "const html = '<!-- comment --> <script>import(\"x\")</script>';",
        'const tpl = `eval(${1}) import (y)`;',
        '/* eval(z) */ const re = /<!--/;',
        'let i = 3; while (i --> 0) {}',
        'return [html, tpl, re.test("<!--"), i]',
      ].join('\n'),
    );
    expect(r).toMatchObject({ success: true, result: ['<!-- comment --> <script>import("x")</script>', 'eval(1) import (y)', true, -1] });
  });

  it('refuses a real dynamic import with a clear message', async () => {
    const r = await run("const m = await import('node:fs');");
    expect(r).toMatchObject({ success: false, error_type: 'SyntaxError' });
    expect(r.error).toMatch(/dynamic import\(\) is not available/);
  });
});

describe('globals of a modern runtime', () => {
  it('has timers, sleep, Date, Math.random, URL, encoders, base64, structuredClone and crypto', async () => {
    const r = await run(`
      const order = [];
      const t = setTimeout(() => order.push('cleared'), 5); clearTimeout(t);
      setTimeout(() => order.push('timeout'), 1);
      let n = 0; const iv = setInterval(() => { if (++n === 3) clearInterval(iv); }, 1);
      // Waits for the interval's third run (a loaded machine may take longer than 30 ms), bounded.
      const until = Date.now() + 5000;
      await sleep(30);
      while (n < 3 && Date.now() < until) await sleep(10);
      const u = new URL('https://example.com/a?b=1'); const q = new URLSearchParams('x=2');
      const bytes = new TextEncoder().encode('hé'); const back = new TextDecoder().decode(bytes);
      const rnd = new Uint8Array(8); crypto.getRandomValues(rnd);
      return { order, n, now: Date.now() > 1.7e12, year: new Date().getFullYear() >= 2024, r: Math.random(),
        host: u.host, b: u.searchParams.get('b'), x: q.get('x'), len: bytes.length, back,
        b64: btoa('hi'), unb64: atob('aGk='), clone: structuredClone({ d: [1] }), uuid: crypto.randomUUID().length,
        rndFilled: rnd.some((v) => v !== 0) };`);
    expect(r.success).toBe(true);
    const v = r.result as Record<string, unknown>;
    expect(v).toMatchObject({ order: ['timeout'], n: 3, now: true, year: true, host: 'example.com', b: '1', x: '2', len: 3, back: 'hé', b64: 'aGk=', unb64: 'hi', clone: { d: [1] }, uuid: 36, rndFilled: true });
    expect(typeof v.r).toBe('number');
  });

  it('has no host powers', async () => {
    const r = await run('return [typeof process, typeof require, typeof Buffer, typeof module, typeof WebAssembly, typeof SharedArrayBuffer, typeof Compartment]');
    expect(r.result).toEqual(['undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined']);
  });
});

describe('workspace API', () => {
  it('writes, reads, lists and deletes inside the agent namespace', async () => {
    const r = await run(`
      const w = write_file('reports/q1.json', JSON.stringify({ total: 9 }));
      const data = JSON.parse(read_file('reports/q1.json'));
      const listed = list_files();
      const d = delete_file('reports/q1.json');
      return { w, total: data.total, listed, d, after: list_files('.'), name: workspace };`);
    expect(r.result).toEqual({
      w: 'Written 11 bytes to reports/q1.json',
      total: 9,
      listed: ['reports/q1.json'],
      d: 'Deleted reports/q1.json',
      after: [],
      name: 'agent-a',
    });
  });

  it('refuses paths that leave the workspace', async () => {
    const r = await run("return read_file('../../etc/passwd')");
    expect(r).toMatchObject({ success: false, error_type: 'PermissionError' });
    expect(r.error).toMatch(/outside the workspace/);
  });

  it('keeps agents in their own namespaces', async () => {
    const other: CallIdentity = { ...agent, agent: 'b', sessionId: 's-b', workspaceNamespace: 'agent-b' };
    await run("write_file('secret.txt', 'a-only')");
    const r = await run("return list_files()", {}, other);
    expect(r.result).toEqual([]);
    const miss = await run("return read_file('secret.txt')", {}, other);
    expect(miss).toMatchObject({ success: false, error_type: 'FileNotFoundError' });
  });

  it('enforces workspace permissions', async () => {
    const reader: CallIdentity = { ...agent, permissions: { ...FULL_PERMISSIONS, workspace: 'read' } };
    const denied = await run("write_file('x.txt', 'y')", {}, reader);
    expect(denied).toMatchObject({ success: false, error_type: 'PermissionError' });
    expect(denied.error).toMatch(/read-write/);
    const none: CallIdentity = { ...agent, permissions: { ...FULL_PERMISSIONS, workspace: 'none' } };
    expect((await run('return list_files()', {}, none)).error_type).toBe('PermissionError');
  });
});

describe("the seed's data helpers", () => {
  const data = [
    { name: 'a', status: 'active', score: 10 },
    { name: 'b', status: 'inactive', score: 20 },
    { name: 'c', status: 'active', score: 30 },
  ];

  it('filter_by_field keeps items whose field equals the value', async () => {
    expect((await run("return filter_by_field(data, 'status', 'active').map((d) => d.name)", { contextVars: { data } })).result).toEqual(['a', 'c']);
  });

  it('summarize_list gives count and sample', async () => {
    expect((await run('return summarize_list(data, 1)', { contextVars: { data } })).result).toEqual({ count: 3, sample: [data[0]] });
  });

  it('aggregate_stats gives sum, avg, min and max per numeric field', async () => {
    expect((await run('return aggregate_stats(data)', { contextVars: { data } })).result).toEqual({ count: 3, score_sum: 60, score_avg: 20, score_min: 10, score_max: 30 });
  });

  it('format_output gives pretty JSON cut to max_chars', async () => {
    const r = await run('return format_output({ a: [1, 2] }, 10)');
    expect(r.result).toBe(JSON.stringify({ a: [1, 2] }, null, 2).slice(0, 10));
  });

  it('reject bad arguments with a message naming the helper', async () => {
    const r = await run("return filter_by_field('nope', 'x', 1)");
    expect(r).toMatchObject({ success: false, error_type: 'TypeError' });
    expect(r.error).toMatch(/filter_by_field/);
  });
});

describe('limits', () => {
  it('ends a runaway loop with TimeoutError and keeps serving', async () => {
    const r = await run('for (;;) {}', { timeoutSeconds: 1 });
    expect(r).toMatchObject({ success: false, error_type: 'TimeoutError' });
    expect((await run('return "next"')).result).toBe('next');
  });

  it('ends a pending promise with TimeoutError', async () => {
    expect((await run('await new Promise(() => {})', { timeoutSeconds: 1 })).error_type).toBe('TimeoutError');
  });

  it('cancels a call when its signal aborts', async () => {
    const controller = new AbortController();
    const pending = executor.execute({ code: 'for (;;) {}', language: 'javascript', timeoutSeconds: 30, memoryMb: 256 }, agent, { signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    expect(await pending).toMatchObject({ success: false, error_type: 'CancelledError' });
  });

  it('validates timeout_seconds, memory_mb, language and code size', async () => {
    expect((await run('1', { timeoutSeconds: 0 })).error).toMatch(/timeout_seconds/);
    expect((await run('1', { timeoutSeconds: 10_000 })).error).toMatch(/timeout_seconds must be .* at most 300/);
    expect((await run('1', { memoryMb: 1 })).error).toMatch(/memory_mb/);
    expect((await run('1', { language: 'ruby' as never })).error).toMatch(/language/);
    expect((await run('x'.repeat(config.limits.maxCodeBytes + 1))).error).toMatch(/code is .* bytes/);
  });
});

describe('output budget', () => {
  it('cuts result plus output past the budget and writes the whole to a workspace file', async () => {
    const r = await run("for (let i = 0; i < 50; i++) console.log('line ' + i + ' ' + 'x'.repeat(60)); return 'y'.repeat(5000)");
    expect(r.success).toBe(true);
    expect(r.truncated).toBe(true);
    expect(r.output_file).toMatch(/^outputs\/execution-.*\.json$/);
    const shown = JSON.stringify(r.result).length + r.output.reduce((n, l) => n + l.length, 0);
    expect(shown).toBeLessThan(config.limits.maxOutputChars + 400);
    const full = JSON.parse(readFileSync(path.join(config.workspaceDir, 'agent-a', r.output_file as string), 'utf8')) as { result: string; output: string[] };
    expect(full.result).toBe('y'.repeat(5000));
    expect(full.output).toHaveLength(50);
    expect(r.result).toBe('y'.repeat(r.preview?.kept ?? -1));
    expect(r.preview).toMatchObject({ type: 'string', total: 5000, json_chars: 5002 });
  });

  it('a cut array stays an array of its first items, with a preview beside it, and the spill file is compact JSON', async () => {
    const r = await run("return Array.from({ length: 1000 }, (_, i) => ({ id: i, name: 'item ' + i, tags: ['a', 'b'] }))");
    expect(r.truncated).toBe(true);
    const items = r.result as { id: number }[];
    expect(Array.isArray(items)).toBe(true);
    expect(items.length).toBeGreaterThan(10);
    expect(items.length).toBeLessThan(1000);
    expect(items.slice(0, -1)).toEqual(Array.from({ length: items.length - 1 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ['a', 'b'] })));
    expect(JSON.stringify(items).length).toBeLessThanOrEqual(config.limits.maxOutputChars);
    expect(r.preview).toEqual({ type: 'array', total: 1000, kept: items.length, json_chars: expect.any(Number) as number });
    const text = readFileSync(path.join(config.workspaceDir, 'agent-a', r.output_file as string), 'utf8');
    const whole = JSON.parse(text) as { result: unknown[] };
    expect(whole.result).toHaveLength(1000);
    expect(text).toBe(JSON.stringify(whole));
    expect(r.preview?.json_chars).toBe(JSON.stringify(whole.result).length);
  });

  it('a cut object keeps its first keys, __proto__ among them', async () => {
    const r = await run("const o = JSON.parse('{\"__proto__\": 1}'); for (let i = 0; i < 500; i++) o['k' + i] = 'v'.repeat(20); return o");
    expect(r.truncated).toBe(true);
    const kept = r.result as Record<string, unknown>;
    expect(Object.keys(kept)[0]).toBe('__proto__');
    expect(Object.keys(kept).length).toBe(r.preview?.kept);
    expect(r.preview).toMatchObject({ type: 'object', total: 501 });
    expect(kept.k0).toBe('v'.repeat(20));
  });
});
