// Adversarial suite: the public vm2, node:vm and SES escape shapes, run against the real sandbox
// (sandbox process, piscina worker, SES Compartment). Each probe goes for an observable effect - a
// marker file written outside the workspace, a host secret file read, a host global changed,
// `process` reached - and the suite checks afterwards that none of it happened and that the next
// call sees pristine intrinsics. References: vm2 issues #32, #174, #175, #177, #179, #199, #225,
// #562; the node:vm `this.constructor.constructor('return process')()` family; SES's rejection
// of `import(`, HTML comments and direct eval.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionResult } from '../../src/executor/index.js';
import { tempDir } from '../fixtures/config.js';
import { startSandbox, textOf, untilAborted } from '../fixtures/escape/sandbox.js';
import type { RunOptions, Sandbox } from '../fixtures/escape/sandbox.js';

const outside = tempDir('cem-escape-outside-');
const MARKER = path.join(outside, 'pwned.txt');
const SECRET_PATH = path.join(outside, 'secret.txt');
const SECRET = `SECRET-${randomUUID()}`;
const SENTINEL = `sentinel-${randomUUID()}`;
const hostGlobal = globalThis as Record<string, unknown>;

let sb: Sandbox;
let nsDir: string;
/** Every result this suite saw: searched at the end for the secret and for host paths. */
const seen: ExecutionResult[] = [];
let pristine: unknown;

async function run(code: string, options?: RunOptions): Promise<ExecutionResult> {
  const r = await sb.run(code, options);
  seen.push(r);
  return r;
}

/**
 * Wraps a probe body: `__power(label, thunk)` evaluates a candidate and, if it is (or holds) a
 * real `process`, uses it for the effects the suite looks for: the marker file and the secret.
 * The body may `return` data; the wrapper reports `{reached, value, error}`.
 */
function probe(body: string): string {
  return `
const __marker = ${JSON.stringify(MARKER)};
const __secretPath = ${JSON.stringify(SECRET_PATH)};
const __reached = [];
const __power = (label, get) => {
  let v;
  try { v = get(); } catch { return false; }
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return false;
  let proc;
  try {
    proc = typeof v.getBuiltinModule === 'function' || typeof v.binding === 'function' || typeof v.mainModule === 'object' ? v : v.process;
  } catch { return false; }
  if (proc === null || proc === undefined) return false;
  __reached.push(label);
  try {
    const fs = typeof proc.getBuiltinModule === 'function' ? proc.getBuiltinModule('node:fs') : proc.mainModule.require('fs');
    fs.writeFileSync(__marker, label);
    __reached.push(fs.readFileSync(__secretPath, 'utf8'));
    proc.__pwned = label;
  } catch (e) { __reached.push(label + ': fs failed'); }
  return true;
};
let __value; let __error;
try {
  __value = await (async () => {
${body}
  })();
} catch (e) {
  try { __error = String(e && e.message !== undefined ? e.message : e); } catch { __error = 'unprintable'; }
}
return { reached: __reached, value: __value === undefined ? null : __value, error: __error ?? null };
`;
}

interface ProbeResult {
  reached: string[];
  value: unknown;
  error: string | null;
}

/** Runs a probe and checks it reached nothing; returns its value for further checks. */
async function expectNoEscape(body: string, options?: RunOptions): Promise<ProbeResult> {
  const r = await run(probe(body), options);
  expect(r.error_type, r.error).toBeUndefined();
  const p = r.result as ProbeResult;
  expect(p.reached).toEqual([]);
  expect(existsSync(MARKER)).toBe(false);
  return p;
}

/** A fingerprint of the intrinsics and globals a call sees: equal before and after every attack. */
const FINGERPRINT = `
const targets = {
  Object, 'Object.prototype': Object.prototype, Array, 'Array.prototype': Array.prototype,
  'Function.prototype': Function.prototype, Promise, 'Promise.prototype': Promise.prototype, JSON,
  Error, 'Error.prototype': Error.prototype, 'TypeError.prototype': TypeError.prototype,
  'String.prototype': String.prototype, RegExp, 'RegExp.prototype': RegExp.prototype,
  'Map.prototype': Map.prototype, 'Set.prototype': Set.prototype, Reflect, Symbol, Math, Date,
  'Date.prototype': Date.prototype, 'Number.prototype': Number.prototype,
  'Uint8Array.prototype': Uint8Array.prototype, 'TypedArray.prototype': Object.getPrototypeOf(Uint8Array.prototype),
  '%IteratorPrototype%': Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]())),
  'URL.prototype': URL.prototype, crypto, 'TextEncoder.prototype': TextEncoder.prototype,
};
const fp = {};
for (const [k, o] of Object.entries(targets)) {
  fp[k] = Reflect.ownKeys(o).map((key) => {
    const d = Object.getOwnPropertyDescriptor(o, key);
    return String(key) + ':' + (d.get ? 'get' : typeof d.value) + (typeof d.value === 'function' ? '/' + d.value.name : '') + (d.writable ? 'w' : '') + (d.configurable ? 'c' : '');
  }).sort().join(',') + '|frozen=' + Object.isFrozen(o) + '|proto=' + String(Object.getPrototypeOf(o) && Object.getPrototypeOf(o).constructor && Object.getPrototypeOf(o).constructor.name);
}
fp.globals = Object.getOwnPropertyNames(globalThis).sort().join(',');
fp.globalFrozen = Object.isFrozen(globalThis);
fp.behaviour = [({}).polluted, [].polluted, ({}).x, [1, 2].map((x) => x * 2).join(), JSON.stringify(JSON.parse('{"a":[1]}')),
  Object.prototype.toString.call([]), typeof Promise.resolve().then, [3, 1, 2].sort().join(), String(new Error('e')),
  typeof RegExp.$1, typeof RegExp.lastMatch, typeof leftover, typeof globalThis.__pwned].join('|');
return fp;
`;

beforeAll(async () => {
  writeFileSync(SECRET_PATH, SECRET);
  hostGlobal.__cemEscapeSentinel = SENTINEL;
  sb = await startSandbox({
    // One sandbox thread: every call lands on the same worker, so leftovers of one call would meet
    // the next one.
    sandbox: { processes: 1, threadsPerProcess: 1 },
    toolNames: ['slow.echo', 'slow.late', 'slow.fail'],
    extensions: {
      call_tool: async ([, tool, args], ctx) => {
        if (tool === 'fail') throw new Error(`upstream failed reading ${path.join(process.cwd(), 'dist', 'secret-config.json')}`);
        // 'late' answers only after the call that asked has ended.
        if (tool === 'late') await untilAborted(ctx.signal);
        return args;
      },
    },
  });
  nsDir = sb.namespaceDir('agent-a');
  const fp = await run(FINGERPRINT);
  expect(fp.success, fp.error).toBe(true);
  pristine = fp.result;
}, 60_000);

afterAll(async () => {
  await sb?.close();
  delete hostGlobal.__cemEscapeSentinel;
});

describe('constructor walks reach nothing of the host', () => {
  it('the classic node:vm and vm2 walks from this, endowments, intrinsics and their prototypes', async () => {
    await expectNoEscape(`
      const candidates = {
        'this.constructor.constructor': () => this.constructor.constructor('return process')(),
        'globalThis.constructor.constructor': () => globalThis.constructor.constructor('return process')(),
        'read_file.constructor': () => read_file.constructor('return process')(),
        'write_file.constructor': () => write_file.constructor('return process')(),
        'console.log.constructor': () => console.log.constructor('return process')(),
        'console.constructor.constructor': () => console.constructor.constructor('return process')(),
        'tools.constructor': () => tools.constructor('return process')(),
        'tools.slow.echo.constructor': () => tools.slow.echo.constructor('return process')(),
        'Date.constructor': () => Date.constructor('return process')(),
        'Math.constructor.constructor': () => Math.constructor.constructor('return process')(),
        'URL.constructor': () => URL.constructor('return process')(),
        'TextEncoder.constructor': () => TextEncoder.constructor('return process')(),
        'crypto.getRandomValues.constructor': () => crypto.getRandomValues.constructor('return process')(),
        'structuredClone.constructor': () => structuredClone.constructor('return process')(),
        'filter_by_field.constructor': () => filter_by_field.constructor('return process')(),
        'sleep.constructor': () => sleep.constructor('return process')(),
        'import_skill.constructor': () => import_skill.constructor('return process')(),
        'harden.constructor': () => harden.constructor('return process')(),
        'Compartment.constructor': () => Compartment.constructor('return process')(),
        'async function constructor': () => (async () => {}).constructor('return process')(),
        'generator constructor': () => (function* () {}).constructor('yield process')().next().value,
        'async generator constructor': () => (async function* () {}).constructor('yield process')(),
        'Function("return this")': () => Function('return this')(),
        'Function("return globalThis")': () => Function('return globalThis')(),
        'Reflect.construct(Function)': () => Reflect.construct(Function, ['return process'])(),
        'Function.prototype.constructor': () => Function.prototype.constructor('return process')(),
        'Object.getPrototypeOf(read_file).constructor': () => Object.getPrototypeOf(read_file).constructor('return process')(),
        '__lookupGetter__(__proto__)': () => ({}).__lookupGetter__('__proto__').call(read_file).constructor('return process')(),
        'TextEncoder buffer ArrayBuffer constructor': () => new TextEncoder().encode('x').buffer.constructor.constructor('return process')(),
        'URL searchParams constructor': () => new URL('http://h/?a=1').searchParams.constructor.constructor('return process')(),
        'structuredClone result constructor': () => structuredClone(new Map([[1, 2]])).constructor.constructor('return process')(),
        'crypto result constructor': () => crypto.getRandomValues(new Uint8Array(2)).constructor.constructor('return process')(),
        'Promise from host constructor': () => tools.slow.echo({}).constructor.constructor('return process')(),
        'caught host error constructor': () => { try { read_file('missing.txt') } catch (e) { return e.constructor.constructor('return process')() } },
        'caught host error __proto__': () => { try { read_file('missing.txt') } catch (e) { return e.__proto__.constructor.constructor('return process')() } },
      };
      for (const [label, get] of Object.entries(candidates)) __power(label, get);
      __power('process global', () => process);
      __power('global', () => global);
      __power('require', () => require('fs'));
      __power('module', () => module.constructor._load('fs'));
    `);
  });

  it('a walk over every object reachable from the globals and from endowment results finds no host power, and every shared object is frozen', async () => {
    const p = await expectNoEscape(`
      // Made afresh for each call, so they may stay unfrozen.
      const perCall = new Set(['globalThis', 'console', 'print', 'setTimeout', 'setInterval', 'clearTimeout', 'clearInterval',
        'queueMicrotask', 'sleep', 'read_file', 'write_file', 'list_files', 'delete_file', 'save_skill', 'load_skill',
        'list_skills', 'import_skill', 'tokenize_pii', 'detokenize_pii', 'search_tools', 'tools', 'fetch', 'result']);
      const caught = (f) => { try { f() } catch (e) { return e } };
      const made = {
        readError: caught(() => read_file('missing.txt')),
        outsideError: caught(() => read_file('../outside.txt')),
        writeError: caught(() => write_file('x.txt', 1)),
        atobError: caught(() => atob('***')),
        cloneError: caught(() => structuredClone(() => 1)),
        cryptoError: caught(() => crypto.getRandomValues(new Uint8Array(70000))),
        urlError: caught(() => new URL('::')),
        jsonError: caught(() => JSON.parse('{')),
        filterError: caught(() => filter_by_field(null, 'a', 1)),
        timerError: caught(() => setTimeout(1)),
        overflowError: (() => { const r = () => r(); return caught(r) })(),
        toolError: await tools.slow.fail({}).catch((e) => e),
        importError: await import_skill('nope').catch((e) => e),
        encoded: new TextEncoder().encode('x'),
        decoder: new TextDecoder(),
        url: new URL('http://h/p?q=1'),
        params: new URLSearchParams('a=1'),
        cloned: structuredClone({ m: new Map([[1, { d: new Date() }]]), s: new Set([1]), e: new RangeError('r') }),
        random: crypto.getRandomValues(new Uint32Array(2)),
        uuid: crypto.randomUUID(),
        date: new Date(),
        promise: Promise.resolve(1),
        hostPromise: tools.slow.echo({ a: 1 }),
        toolResult: await tools.slow.echo({ a: [1] }),
        listed: list_files(),
        asyncFn: (async () => {})(),
        gen: (function* () {})(),
        asyncGen: (async function* () {})(),
        iter: [][Symbol.iterator](),
        mapIter: new Map().entries(),
        matchAll: 'x'.matchAll(/x/g),
        regexResult: /(x)/.exec('x'),
        weak: new WeakMap(),
        boxedBigInt: Object(1n),
        boxedSymbol: Object(Symbol('s')),
        args: (function () { return arguments })(1),
        descriptors: Object.getOwnPropertyDescriptors(globalThis),
      };
      const seen = new Set();
      const queue = [];
      const unfrozen = [];
      const push = (o, where, shared) => {
        if (o === null || (typeof o !== 'object' && typeof o !== 'function') || seen.has(o)) return;
        seen.add(o);
        queue.push([o, where, shared]);
      };
      for (const name of Object.getOwnPropertyNames(globalThis)) {
        const d = Object.getOwnPropertyDescriptor(globalThis, name);
        push(d.value, name, !perCall.has(name));
      }
      for (const [k, v] of Object.entries(made)) push(v, 'made.' + k, false);
      push(globalThis, 'globalThis', false);
      let walked = 0;
      while (queue.length > 0 && walked < 50000) {
        const [o, where, shared] = queue.shift();
        walked++;
        if (shared && !Object.isFrozen(o)) unfrozen.push(where);
        for (const c of [o, (() => { try { return o.constructor } catch { return undefined } })()]) {
          const C = c && (() => { try { return c.constructor } catch { return undefined } })();
          if (typeof C === 'function') {
            __power(where + '.constructor.constructor(process)', () => C('return process')());
            __power(where + '.constructor.constructor(this)', () => C('return this')());
          }
        }
        let proto;
        try { proto = Object.getPrototypeOf(o) } catch { proto = null }
        // A per-call object's prototype is shared (Function.prototype, Object.prototype), except the
        // first link of what the guest made itself (a generator's prototype is its function's own).
        push(proto, where + '.__proto__', !(where.startsWith('made.') && !where.includes('.__proto__')));
        let keys = [];
        try { keys = Reflect.ownKeys(o) } catch {}
        for (const key of keys) {
          let d;
          try { d = Object.getOwnPropertyDescriptor(o, key) } catch { continue }
          if (!d) continue;
          const sub = where + '.' + String(key);
          push(d.value, sub, shared);
          push(d.get, sub + '<get>', shared);
          push(d.set, sub + '<set>', shared);
        }
      }
      return { walked, unfrozen };
    `);
    const value = p.value as { walked: number; unfrozen: string[] };
    expect(value.walked).toBeGreaterThan(500);
    expect(value.unfrozen).toEqual([]);
  });

  // Regression for finding F0 (fixed in adbbe78): the data helpers were the module's own functions,
  // shared by every call on a worker and never hardened, so agent A could plant an `apply` that
  // copied agent B's records, and read them back in a later call.
  it('one agent cannot plant code or data on the shared data helpers for another agent (F0)', async () => {
    const plant = await run(`
      const planted = [];
      try {
        Object.defineProperty(filter_by_field, 'apply', {
          value: function (thisArg, args) { filter_by_field.loot = JSON.stringify(args[0]); return Reflect.apply(filter_by_field, thisArg, args) },
          configurable: true,
        });
        planted.push('filter_by_field.apply');
      } catch {}
      for (const [name, f] of Object.entries({ filter_by_field, summarize_list, aggregate_stats, format_output })) {
        try { f.loot = 'planted'; planted.push(name + '.loot') } catch {}
        try { Object.defineProperty(f, 'toString', { value: () => 'planted' }); planted.push(name + '.toString') } catch {}
        try { f.prototype.planted = true; planted.push(name + '.prototype') } catch {}
      }
      return planted;
    `, { agent: 'mallory', namespace: 'agent-m' });
    const victim = await run(`
      const rows = [{ user: 'bob', card: 'victim-private-1' }, { user: 'eve', card: 'victim-private-2' }];
      return filter_by_field.apply(null, [rows, 'user', 'bob']).length;
    `, { agent: 'bob', namespace: 'agent-b' });
    expect(victim.result).toBe(1);
    const collect = await run('return [filter_by_field.loot ?? null, (summarize_list.prototype ?? {}).planted ?? null]', { agent: 'mallory', namespace: 'agent-m' });
    expect(plant.result).toEqual([]);
    expect(collect.result).toEqual([null, null]);
  });

  it('guests cannot build a child Compartment: a nested one would carry SES defaults that are Node host classes', async () => {
    // SES gives a new Compartment Node's own TextEncoder and TextDecoder, whose errors have mutable
    // prototypes shared by every call (found by the reachability audit); the sandbox API has no use
    // for nested compartments, so the constructor is not endowed and no route leads to it.
    const p = await expectNoEscape(`
      const routes = {
        global: typeof Compartment,
        viaGlobalThis: typeof globalThis.Compartment,
        viaIndirectEval: typeof (0, eval)('typeof Compartment === "undefined" ? undefined : Compartment'),
        viaFunction: typeof Function('return typeof Compartment === "undefined" ? undefined : Compartment')(),
      };
      __power('Compartment from eval', () => (0, eval)('Compartment'));
      return routes;
    `);
    expect(p.value).toEqual({ global: 'undefined', viaGlobalThis: 'undefined', viaIndirectEval: 'undefined', viaFunction: 'undefined' });
  });
});

describe('Function, eval and import tricks', () => {
  it('Function("return this")() and indirect eval see the call\'s own global, never the host\'s', async () => {
    const p = await expectNoEscape(`
      __power('indirect eval this', () => (0, eval)('this'));
      __power('indirect eval process', () => (0, eval)('process'));
      __power('Function this', () => Function('return this')());
      __power('new Function sloppy', () => new Function('return (function () { return this })()')());
      const g = (0, eval)('globalThis');
      return [g === globalThis, typeof Function('return this')(), (0, eval)('typeof process')];
    `);
    expect(p.value).toEqual([true, 'undefined', 'undefined']);
  });

  it('direct eval is refused with a clear message; built at run time it sees only the call\'s own compartment', async () => {
    const r = await run('return eval("1 + 1")');
    expect(r.error_type).toBe('SyntaxError');
    expect(r.error).toMatch(/direct eval/);
    const p = await expectNoEscape(`
      try { return (0, eval)('ev' + 'al("typeof process + typeof require")') } catch (e) { return e.name }
    `);
    expect(['undefinedundefined', 'SyntaxError']).toContain(p.value);
  });

  it('a real dynamic import is refused, in every disguise', async () => {
    const disguises = [
      "return import('node:fs')",
      'return import /* comment */ ("node:fs")',
      "return import // comment\n('node:fs')",
      "return import\n('node:fs')",
      'return `${await import("node:fs")}`',
      "return \\u0069mport('node:fs')",
      "const spec = 'node:fs'; return (0, import)(spec)",
      'return import.meta',
    ];
    for (const code of disguises) {
      const r = await run(code);
      expect(r.success, code).toBe(false);
      expect(r.error_type, code).toBe('SyntaxError');
    }
    // Built at run time, the same text goes through SES's own rejection.
    const p = await expectNoEscape(`
      const errors = [];
      for (const make of [
        () => Function('return imp' + 'ort("node:fs")')(),
        () => (0, eval)('imp' + 'ort("node:fs")'),
        () => new Compartment().evaluate('imp' + 'ort("node:fs")'),
        () => new Compartment().evaluate('imp' + 'ort("node:fs")', { __evadeImportExpressionTest__: true }),
        () => (async function () {}).constructor('return await imp' + 'ort("node:fs")')(),
      ]) {
        try { const v = make(); if (v && typeof v.then === 'function') await v; errors.push('no error') } catch (e) { errors.push(e.message) }
      }
      return errors;
    `);
    for (const message of p.value as string[]) expect(message).not.toBe('no error');
  });

  it('code that only mentions import(, eval(, <!-- and --> in strings, templates, regexes and comments runs unchanged', async () => {
    const r = await run(
      [
        '// a comment that says import("x") and eval(y) <!-- -->',
        "const s = 'import(\"fs\") eval(1) <!-- c -->';",
        'const t = `import(${1}) eval(2)`;',
        '/* import(\'x\') */ const re = /import\\(|-->/;',
        'return [s, t, re.test("x-->"), s.length];',
      ].join('\n'),
    );
    expect(r.error, r.traceback).toBeUndefined();
    expect(r.result).toEqual(['import("fs") eval(1) <!-- c -->', 'import(1) eval(2)', true, 31]);
  });
});

describe('error stacks leak nothing', () => {
  it('a guest prepareStackTrace is never handed host call sites, even when host code throws or formats the error', async () => {
    const r = await run(`
      const traces = [];
      // vm2 #562: with prepareStackTrace unset and a Symbol name, V8's default formatting throws in host code.
      try { Error.prepareStackTrace = undefined } catch {}
      const sym = new Error('m');
      sym.name = Symbol('s');
      try { traces.push(sym.stack) } catch (err) { if (err.constructor !== TypeError) traces.push('foreign error') }
      Error.prepareStackTrace = (e, sites) => {
        write_file('pst-called.txt', JSON.stringify(sites.map((s) => [String(s.getFileName()), typeof s.getThis(), typeof s.getFunction()])));
        return 'hijacked';
      };
      const e = new Error('x');
      Error.captureStackTrace(e);
      traces.push(e.stack, (() => { try { read_file('../x') } catch (err) { return err.stack } })());
      const o = {};
      Error.captureStackTrace(o);
      traces.push(o.stack);
      if (traces.some((t) => t !== '')) return traces;
      // Uncaught: the host formats this one.
      read_file('../../etc/passwd');
    `);
    expect(r.error_type, JSON.stringify(r.result)).toBe('PermissionError');
    expect(existsSync(path.join(nsDir, 'pst-called.txt'))).toBe(false);
    expect(r.traceback).toMatch(/^PermissionError: /);
    expect(textOf(r)).not.toContain('hijacked');
    for (const line of (r.traceback ?? '').split('\n').slice(1)) expect(line).toMatch(/^ {4}at \S+ \(user-code\.js:\d+:\d+\)$/);
  });

  it('stacks are empty for the guest and tracebacks name only user-code.js frames', async () => {
    const r = await run(`
      function inner() { return filter_by_field(null, 'a', 1) }
      function outer() { return inner() }
      const seen = [new Error('a').stack, (() => { try { null.x } catch (e) { return e.stack } })()];
      if (seen.some((s) => s !== '')) return seen;
      outer();
    `);
    expect(r.error_type).toBe('TypeError');
    const lines = (r.traceback ?? '').split('\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines.slice(1)) expect(line).toMatch(/^ {4}at \S+ \(user-code\.js:\d+:\d+\)$/);
  });

  it('a stack overflow thrown from inside host functions gives intrinsic errors (vm2 #199)', async () => {
    const p = await expectNoEscape(`
      const got = [];
      const dive = (n) => {
        try { return dive(n + 1) } catch {
          for (const f of [() => filter_by_field([{ a: 1 }], 'a', 1), () => atob('YQ=='), () => structuredClone({ a: 1 }), () => read_file('nope'), () => console.log({ a: 1 })]) {
            try { f() } catch (e) { got.push(e) }
          }
          return 0;
        }
      };
      dive(0);
      for (const e of got) {
        __power('overflow error constructor', () => e.constructor.constructor('return process')());
        __power('overflow error proto', () => Object.getPrototypeOf(e).constructor.constructor('return process')());
      }
      return got.every((e) => e instanceof Error);
    `);
    expect(p.value).toBe(true);
  });

  it('host failures reach the guest without host paths', async () => {
    const r = await run(`
      const messages = [];
      try { await tools.slow.fail({}) } catch (e) { messages.push(e.name + ': ' + e.message) }
      try { write_file('a/b\\u0000c', 'x') } catch (e) { messages.push(e.message) }
      try { read_file('.') } catch (e) { messages.push(e.message) }
      return messages;
    `);
    expect(r.success, r.error).toBe(true);
    const text = textOf(r);
    expect(text).not.toContain(process.cwd());
    expect(text).not.toContain('dist/secret-config');
    expect(text).toContain('<path>');
  });
});

describe('Promise species, Array species and Proxy traps', () => {
  it('species tricks on guest and host-made promises and arrays reach nothing', async () => {
    const p = await expectNoEscape(`
      const captured = [];
      class Spy extends Promise {
        static get [Symbol.species]() {
          return function (executor) { executor((v) => captured.push(v), (e) => captured.push(e)); };
        }
      }
      await Spy.resolve(1);
      const hostPromise = tools.slow.echo({ a: 1 });
      hostPromise.constructor = { [Symbol.species]: function (executor) { executor((v) => captured.push(v), (e) => captured.push(e)) } };
      try { hostPromise.then(() => {}) } catch {}
      try { Promise.prototype.then.call(import_skill('nope'), () => {}, () => {}) } catch {}
      class Arr extends Array { static get [Symbol.species]() { return function () { return { length: 0 } } } }
      const filtered = filter_by_field(Arr.from([{ x: 1 }, { x: 2 }]), 'x', 1);
      const summary = summarize_list(Arr.from([1, 2, 3]), 2);
      for (const v of [...captured, filtered, summary]) {
        __power('species captured', () => v);
        __power('species captured constructor', () => v.constructor.constructor('return process')());
      }
      return { isArray: Array.isArray(filtered), count: summary.count };
    `);
    expect(p.value).toMatchObject({ count: 3 });
  });

  it('a Proxy result whose traps throw fails the call with the guest\'s own error, and a revoked Proxy result is described', async () => {
    const thrown = await run(`return new Proxy({}, { get() { throw new Error('trap fired') }, ownKeys() { throw new Error('keys') } })`);
    expect(thrown.success).toBe(false);
    expect(thrown.error_type).toBe('Error');
    expect(thrown.error).toBe('trap fired');
    const described = await run(`
      const r = Proxy.revocable({}, {});
      r.revoke();
      result = { revoked: r.proxy, list: [r.proxy], fine: new Proxy({ a: 1 }, {}) };
    `);
    expect(described.success, described.error).toBe(true);
    expect(described.result).toMatchObject({ revoked: expect.stringMatching(/^\[Unserializable: TypeError/), fine: { a: 1 } });
  });

  it('Proxies handed to endowed functions run only guest code and change nothing outside', async () => {
    const p = await expectNoEscape(`
      const log = [];
      const rows = new Proxy([{ a: 1, b: 'x' }, { a: 2, b: 'y' }], {
        get(t, k, r) {
          log.push(String(k));
          if (k === 'constructor') return { [Symbol.species]: function () { return new Proxy([], {}) } };
          return Reflect.get(t, k, r);
        },
      });
      const filtered = filter_by_field(rows, 'a', 1);
      const stats = aggregate_stats(rows, ['a']);
      const text = format_output(rows, 200);
      const pathProxy = new Proxy({}, { get: (t, k) => (k === 'toString' || k === Symbol.toPrimitive ? () => '../secret.txt' : undefined) });
      const pathErrors = [];
      for (const f of [() => read_file(pathProxy), () => list_files(pathProxy), () => delete_file(pathProxy)]) {
        try { f(); pathErrors.push('accepted') } catch (e) { pathErrors.push(e.name + ': ' + e.message) }
      }
      const cloneError = (() => { try { structuredClone(rows); return 'cloned' } catch (e) { return e.name } })();
      console.log(rows, new Proxy(function f() {}, {}));
      return { filtered: JSON.parse(JSON.stringify(filtered)), stats, text: text.length > 0, pathErrors, cloneError };
    `);
    const value = p.value as { filtered: unknown; stats: Record<string, number>; pathErrors: string[]; cloneError: string };
    expect(value.stats).toMatchObject({ count: 2, a_sum: 3 });
    for (const e of value.pathErrors) expect(e).toMatch(/must be a string|Not found|not found/);
    expect(value.cloneError).toBe('DataCloneError');
  });

  // Regression for finding F1 (fixed in adbbe78): errorInfo() ran `err instanceof Error` outside any
  // try, so a thrown revoked Proxy was reported as SandboxCrashError, and a Proxy whose
  // getPrototypeOf trap throws a function hung the call until its timeout.
  it('throwing a revoked Proxy is reported as the guest\'s error, not as a sandbox crash (F1)', async () => {
    const r = await run('const r = Proxy.revocable({}, {}); r.revoke(); throw r.proxy');
    expect(r.success).toBe(false);
    expect(r.error_type).not.toBe('SandboxCrashError');
    expect(r.error_type).not.toBe('TimeoutError');
  });

  it('throwing a Proxy whose getPrototypeOf trap throws a function (vm2 #174) reaches nothing, and the next call works', async () => {
    const r = await run(`throw new Proxy({}, { getPrototypeOf() { throw (x) => x.constructor.constructor('return process')().getBuiltinModule('node:fs').writeFileSync(${JSON.stringify(MARKER)}, 'vm2-174') } })`, { timeoutSeconds: 2 });
    expect(r.success).toBe(false);
    expect(existsSync(MARKER)).toBe(false);
    const next = await run('return 1');
    expect(next.result).toBe(1);
  });
});

describe('the host never runs guest hooks', () => {
  it('nodejs.util.inspect.custom, toString, valueOf and Symbol.toPrimitive are not called by the host on logged, returned, thrown or passed values', async () => {
    const r = await run(`
      const hook = (name) => function () { try { write_file('hook-' + name + '.txt', 'called') } catch {} return 'HOOKED' };
      const evil = {
        [Symbol.for('nodejs.util.inspect.custom')]: hook('inspect'),
        toString: hook('toString'),
        valueOf: hook('valueOf'),
        [Symbol.toPrimitive]: hook('toPrimitive'),
        plain: 1,
      };
      console.log(evil);
      console.error('with text', evil, [evil]);
      for (const f of [() => read_file(evil), () => write_file(evil, 'x'), () => list_files(evil), () => delete_file(evil), () => structuredClone(evil)]) {
        try { f() } catch {}
      }
      Promise.reject(evil);
      await sleep(5);
      result = { evil, nested: [evil] };
    `);
    for (const name of ['inspect', 'toString', 'valueOf', 'toPrimitive']) {
      expect(existsSync(path.join(nsDir, `hook-${name}.txt`)), name).toBe(false);
    }
    expect(textOf(r)).not.toContain('HOOKED');
  });

  it('a thrown object with a custom inspect hook and throwing getters is described, not inspected', async () => {
    const r = await run(`
      throw { [Symbol.for('nodejs.util.inspect.custom')]() { write_file('hook-thrown.txt', 'x'); return 'HOOKED' }, get name() { throw new Error('name getter') }, message: 'odd' };
    `);
    expect(r.success).toBe(false);
    expect(existsSync(path.join(nsDir, 'hook-thrown.txt'))).toBe(false);
    expect(textOf(r)).not.toContain('HOOKED');
  });
});

describe('values that are not JSON travel as descriptions', () => {
  it('functions, Symbols, BigInts, cyclic and very deep objects, Maps, Sets and Dates', async () => {
    const r = await run(`
      const cyclic = { name: 'c' }; cyclic.self = cyclic;
      let deep = {}; const root = deep; for (let i = 0; i < 100000; i++) { deep.next = {}; deep = deep.next }
      return { fn: function named() {}, arrow: () => 1, sym: Symbol('s'), big: 12345678901234567890n, cyclic, root,
        map: new Map([['k', 1]]), set: new Set([1, 2]), date: new Date(0), undef: undefined, nan: NaN };
    `);
    expect(r.success, r.error).toBe(true);
    expect(r.result).toMatchObject({
      fn: '[Function: named]',
      sym: 'Symbol(s)',
      big: '12345678901234567890',
      cyclic: { name: 'c', self: '[Circular]' },
      map: { k: 1 },
      set: [1, 2],
      date: '1970-01-01T00:00:00.000Z',
      undef: null,
      nan: null,
    });
    expect(JSON.stringify(r.result)).toContain('[Object: too deep]');
  });

  it('getters and toJSON that throw are described; a getter that loops ends as TimeoutError and the next call works', async () => {
    const r = await run(`return { get boom() { throw new Error('getter') }, toJSON: undefined, inner: { toJSON() { throw new Error('tojson') } }, ok: 1 }`);
    expect(r.success, r.error).toBe(true);
    expect(r.result).toMatchObject({ boom: expect.stringContaining('getter'), inner: expect.stringContaining('tojson'), ok: 1 });
    const loop = await run('return { get forever() { for (;;) {} } }', { timeoutSeconds: 1.5 });
    expect(loop.error_type).toBe('TimeoutError');
    const next = await run('return 2');
    expect(next.result).toBe(2);
  });
});

describe('prototype pollution is refused and never reaches the next call', () => {
  it('every write to a shared intrinsic throws, and the next call sees pristine intrinsics', async () => {
    const p = await expectNoEscape(`
      // Each attempt says whether it took effect; strict mode makes most of them throw.
      const attempts = {
        'Object.prototype.x': () => { Object.prototype.x = 1; return ({}).x === 1 },
        'Object.prototype.polluted (defineProperty)': () => { Object.defineProperty(Object.prototype, 'polluted', { value: 1 }); return ({}).polluted === 1 },
        'Object.prototype __proto__ swap': () => { Object.setPrototypeOf(Object.prototype, { polluted: 1 }); return ({}).polluted === 1 },
        'Array.prototype.push': () => { Array.prototype.push = () => 0; return [].push(1) === 0 },
        'Array.prototype.polluted': () => { [].__proto__.polluted = 1; return [].polluted === 1 },
        'JSON.parse': () => { JSON.parse = () => ({}); return JSON.parse('1') !== 1 },
        'Function.prototype.call': () => { Function.prototype.call = () => 0; return (() => 1).call() === 0 },
        'Promise.prototype.then': () => { Promise.prototype.then = () => 0; return Promise.resolve().then() === 0 },
        'Error.prototype.toString': () => { Error.prototype.toString = () => 'x'; return String(new Error('e')) === 'x' },
        'TypeError.prototype.get_process (vm2 #225)': () => { TypeError.prototype.get_process = (f) => f.constructor('return process')(); return 'get_process' in new TypeError() },
        'Object.prototype get (vm2 #175)': () => { Object.defineProperty(Object.prototype, 'get', { get() { return 1 } }); return ({}).get === 1 },
        'Math.random': () => { Math.random = () => 4; return Math.random() === 4 },
        'Date.now': () => { Date.now = () => 0; return Date.now() === 0 },
        'RegExp.prototype.exec': () => { RegExp.prototype.exec = () => null; return /x/.exec('x') === null },
        'Array.prototype[Symbol.iterator]': () => { Array.prototype[Symbol.iterator] = function* () {}; return [...[1]].length === 0 },
        'URL.prototype.toString': () => { URL.prototype.toString = () => 'x'; return String(new URL('http://h/')) === 'x' },
        'crypto.randomUUID': () => { crypto.randomUUID = () => 'x'; return crypto.randomUUID() === 'x' },
        'TextEncoder.prototype.encode': () => { TextEncoder.prototype.encode = () => 'x'; return new TextEncoder().encode('a') === 'x' },
        'Error.stackTraceLimit': () => { Error.stackTraceLimit = 0; return Error.stackTraceLimit === 0 },
        'delete Array.prototype.map': () => delete Array.prototype.map && [].map === undefined,
      };
      const accepted = [];
      for (const [name, attempt] of Object.entries(attempts)) {
        try { if (attempt()) accepted.push(name) } catch {}
      }
      // Per-call things may change: they belong to this call only.
      console.log = () => {};
      globalThis.leftover = 'from an earlier call';
      Object.defineProperty(globalThis, '__pwned', { value: 1, enumerable: true });
      harden(globalThis);
      return accepted;
    `);
    expect(p.value).toEqual([]);
    const after = await run(FINGERPRINT);
    expect(after.success, after.error).toBe(true);
    expect(after.result).toEqual(pristine);
  });

  it('a host error object from an endowment has intrinsic prototypes; changing it does not reach the next call', async () => {
    const first = await expectNoEscape(`
      let e;
      try { read_file('missing.txt') } catch (err) { e = err }
      const facts = [e.name, Object.getPrototypeOf(e) === Error.prototype, e.constructor === Error, e instanceof Error, Object.isFrozen(Object.getPrototypeOf(e))];
      e.name = 'Renamed';
      e.message = 'changed';
      try { Object.getPrototypeOf(e).name = 'Polluted' } catch {}
      try { e.constructor.prototype.toString = () => 'polluted' } catch {}
      return facts;
    `);
    expect(first.value).toEqual(['FileNotFoundError', true, true, true, true]);
    const second = await run(`try { read_file('missing.txt') } catch (e) { return [e.name, String(e), Error.prototype.name] }`);
    expect(second.result).toEqual(['FileNotFoundError', 'FileNotFoundError: File not found: "missing.txt"', 'Error']);
  });
});

describe('nothing one call leaves behind runs into the next', () => {
  it('a global set in one call is absent in the next', async () => {
    await run('globalThis.carried = 41; Object.defineProperty(globalThis, "hidden", { value: 1 }); result = 1');
    const r = await run('return [typeof carried, typeof globalThis.carried, typeof hidden, Object.isFrozen(globalThis)]');
    expect(r.result).toEqual(['undefined', 'undefined', 'undefined', false]);
  });

  it('intervals and timeouts of an earlier call write no output into a later one', async () => {
    const first = await run(`
      setInterval(() => console.log('LEAK-interval'), 1);
      setTimeout(() => console.log('LEAK-timeout'), 30);
      queueMicrotask(() => console.log('in-call microtask'));
      return 'started';
    `);
    expect(first.result).toBe('started');
    const streamed: string[] = [];
    const second = await run('await sleep(150); console.log("second"); return 2', { onOutput: (line) => streamed.push(line) });
    expect(second.output).toEqual(['second']);
    expect(streamed.join('\n')).not.toContain('LEAK');
  });

  it('a rejection or exception left by an earlier call is never written into a later call', async () => {
    // Every way a call can leave a rejection or a throw behind: at once, after microtasks, from a
    // timer or a host reply that comes after the end, from a thenable, from a getter read later.
    const first = await run(`
      Promise.reject(new Error('LEAK-now'));
      (async () => { for (let i = 0; i < 1000; i++) await null; throw new Error('LEAK-microtasks') })();
      sleep(30).then(() => { throw new Error('LEAK-sleep') });
      setTimeout(() => { throw new Error('LEAK-timer') }, 20);
      tools.slow.late({}).then(() => { throw new Error('LEAK-tool') });
      Promise.resolve({ then(_, reject) { setTimeout(() => reject(new Error('LEAK-thenable')), 10) } });
      const e = new Error('x');
      Object.defineProperty(e, 'message', { get() { return 'LEAK-getter' } });
      Promise.reject(e);
      return 'planted';
    `);
    expect(first.result).toBe('planted');
    const streamed: string[] = [];
    const second = await run('await sleep(200); console.log("second"); return 2', { onOutput: (line) => streamed.push(line) });
    expect(second).toMatchObject({ success: true, result: 2, output: ['second'] });
    expect(streamed.join('\n')).not.toContain('LEAK');
  });

  it('a promise left pending by an ended call cannot write files when it settles (timers and late host replies)', async () => {
    const first = await run(`
      sleep(50).then(() => write_file('late-sleep.txt', 'x'));
      tools.slow.late({}).then(() => write_file('late-tool.txt', 'x'), () => write_file('late-tool-error.txt', 'x'));
      new Promise((resolve) => setTimeout(resolve, 60)).then(() => write_file('late-timer.txt', 'x'));
      return 'ended';
    `);
    expect(first.result).toBe('ended');
    const second = await run('await sleep(250); return list_files()');
    expect(second.success, second.error).toBe(true);
    for (const f of ['late-sleep.txt', 'late-tool.txt', 'late-tool-error.txt', 'late-timer.txt']) {
      expect(existsSync(path.join(nsDir, f)), f).toBe(false);
    }
    expect(sb.hostLog.afterEnd).toBe(0);
  });

  it('no shared place carries data from one call to the next (stash attempts, RegExp statics)', async () => {
    await run(`
      for (const o of [Object.prototype, Array.prototype, Function.prototype, Date, Math, JSON, crypto, URL, TextEncoder, Error]) {
        try { o.stash = 'carried' } catch {}
      }
      /(carried-[a-z]+)/.exec('carried-secret');
      Symbol.for('stash-carried');
      return 1;
    `);
    const r = await run(`
      const found = [];
      for (const o of [{}, [], () => 1, Date, Math, JSON, crypto, URL, TextEncoder, Error]) {
        if (o.stash !== undefined) found.push(o.stash);
      }
      for (const k of ['$1', 'lastMatch', 'input', '$_']) { try { if (RegExp[k]) found.push(String(RegExp[k])) } catch {} }
      return found;
    `);
    expect(r.result).toEqual([]);
  });
});

describe('host objects and powers are out of reach', () => {
  it('process, require, module, Buffer, WebAssembly, SharedArrayBuffer, Atomics, Worker and the like are absent (fetch is there and refuses without a net permission)', async () => {
    const r = await run(`
      const names = ['process', 'require', 'module', 'exports', '__dirname', '__filename', 'global', 'Buffer', 'WebAssembly',
        'SharedArrayBuffer', 'Atomics', 'Worker', 'MessageChannel', 'Compartment', 'setImmediate', 'performance', 'WeakRef',
        'FinalizationRegistry', 'getStackString', 'navigator', 'XMLHttpRequest', 'WebSocket'];
      return Object.fromEntries(names.map((n) => [n, typeof globalThis[n]]));
    `);
    expect(r.success, r.error).toBe(true);
    for (const [name, type] of Object.entries(r.result as Record<string, string>)) expect(type, name).toBe('undefined');
  });

  it('structuredClone, crypto, TextEncoder and URL hand out only intrinsic, frozen things', async () => {
    const p = await expectNoEscape(`
      const u8 = new TextEncoder().encode('abc');
      const clonedError = structuredClone(new RangeError('r'));
      const clonedMap = structuredClone(new Map([[1, 2]]));
      const facts = {
        encodeIsPlainUint8Array: Object.getPrototypeOf(u8) === Uint8Array.prototype,
        bufferIsIntrinsic: Object.getPrototypeOf(u8.buffer) === ArrayBuffer.prototype,
        clonedErrorIntrinsic: Object.getPrototypeOf(clonedError) === RangeError.prototype,
        clonedMapIntrinsic: Object.getPrototypeOf(clonedMap) === Map.prototype,
        cryptoFrozen: Object.isFrozen(crypto),
        noSubtle: typeof crypto.subtle,
        // As Node and the platform refuse it: a TypeMismatchError (an intrinsic Error named so, not a DOMException).
        dataViewRefused: (() => { try { crypto.getRandomValues(new DataView(new ArrayBuffer(4))); return false } catch (e) { return e.name === 'TypeMismatchError' && Object.getPrototypeOf(e) === Error.prototype } })(),
        cloneFunctionRefused: (() => { try { structuredClone({ f() {} }); return false } catch (e) { return e.name === 'DataCloneError' && Object.getPrototypeOf(e) === Error.prototype } })(),
        urlFrozen: Object.isFrozen(URL) && Object.isFrozen(URL.prototype) && Object.isFrozen(URLSearchParams.prototype),
      };
      __power('TextEncoder.constructor', () => TextEncoder.constructor('return process')());
      __power('u8.buffer.constructor.constructor', () => u8.buffer.constructor.constructor('return process')());
      __power('clonedError.constructor.constructor', () => clonedError.constructor.constructor('return process')());
      return facts;
    `);
    expect(p.value).toEqual({
      encodeIsPlainUint8Array: true,
      bufferIsIntrinsic: true,
      clonedErrorIntrinsic: true,
      clonedMapIntrinsic: true,
      cryptoFrozen: true,
      noSubtle: 'undefined',
      dataViewRefused: true,
      cloneFunctionRefused: true,
      urlFrozen: true,
    });
  });

  it('the host secret file is not readable through the workspace API, by absolute or relative path', async () => {
    const relative = path.relative(nsDir, SECRET_PATH);
    const r = await run(`
      const out = [];
      for (const p of [${JSON.stringify(SECRET_PATH)}, ${JSON.stringify(relative)}, 'x/../' + ${JSON.stringify(relative)}]) {
        try { out.push(read_file(p)) } catch (e) { out.push(e.name) }
        try { out.push(list_files(p).join()) } catch (e) { out.push(e.name) }
      }
      return out;
    `);
    expect(r.result).toEqual(['PermissionError', 'PermissionError', 'PermissionError', 'PermissionError', 'PermissionError', 'PermissionError']);
  });

  it('harden and lockdown do nothing beyond the call: lockdown refuses, a hardened global is fresh next time', async () => {
    const p = await expectNoEscape(`
      let lockdownError = '';
      try { lockdown() } catch (e) { lockdownError = e.message }
      harden(globalThis);
      harden(read_file);
      return lockdownError;
    `);
    expect(p.value).toMatch(/already locked down/i);
    const next = await run('globalThis.x = 1; read_file.y = 2; return [Object.isFrozen(globalThis), x, read_file.y]');
    expect(next.result).toEqual([false, 1, 2]);
  });

  it('read_file and write_file never run code of an object path; write_file refuses non-string content', async () => {
    const r = await run(`
      let ran = false;
      const sneaky = { toString() { ran = true; return '../secret.txt' }, valueOf() { ran = true; return '../secret.txt' } };
      const errors = [];
      for (const f of [() => read_file(sneaky), () => write_file(sneaky, 'x')]) {
        try { f(); errors.push('accepted') } catch (e) { errors.push(e.name + ': ' + e.message) }
      }
      for (const content of [123, { a: 1 }, null, [1], new Uint8Array(2), undefined]) {
        try { write_file('content.txt', content); errors.push('accepted') } catch (e) { errors.push(e.name + ': ' + e.message) }
      }
      return { ran, errors };
    `);
    const value = r.result as { ran: boolean; errors: string[] };
    expect(value.ran).toBe(false);
    expect(value.errors).toHaveLength(8);
    for (const e of value.errors.slice(0, 2)) expect(e).toMatch(/^\w+Error: .*(path|filename) must be a string, got object/);
    for (const e of value.errors.slice(2)) expect(e).toMatch(/^\w+Error: .*content must be a string, got \w+.*JSON\.stringify/);
    expect(existsSync(path.join(nsDir, 'content.txt'))).toBe(false);
  });

  // Regression for finding F2 (fixed in adbbe78): plain() turned Symbols, BigInts, functions and
  // unserializable objects into their descriptions, so write_file(Symbol('x'), 'a') created a file
  // named "Symbol(x)" and write_file('f', 10n) wrote "10".
  it('write_file refuses Symbol, BigInt, function and Proxy arguments instead of writing their descriptions (F2)', async () => {
    const r = await run(`
      const r = Proxy.revocable({}, {}); r.revoke();
      const accepted = [];
      for (const [name, content] of [[Symbol('x'), 'a'], ['big.txt', 10n], ['fn.txt', function f() {}], ['proxy.txt', r.proxy]]) {
        try { write_file(name, content); accepted.push(String(typeof name === 'symbol' ? 'symbol' : name)) } catch {}
      }
      return accepted;
    `);
    expect(r.result).toEqual([]);
  });
});

describe('after every probe', () => {
  it('nothing happened outside: no marker file, the secret never surfaced, host globals untouched, intrinsics pristine', async () => {
    const final = await run(FINGERPRINT);
    expect(final.result).toEqual(pristine);
    expect(existsSync(MARKER)).toBe(false);
    expect(readFileSync(SECRET_PATH, 'utf8')).toBe(SECRET);
    expect(hostGlobal.__cemEscapeSentinel).toBe(SENTINEL);
    expect('__pwned' in hostGlobal).toBe(false);
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
    expect(sb.hostLog.afterEnd).toBe(0);
    const hostPaths = [process.cwd(), path.dirname(sb.config.workspaceDir), 'node_modules', '/dist/', 'file://'];
    for (const r of seen) {
      const text = textOf(r);
      expect(text).not.toContain(SECRET);
      for (const p of hostPaths) expect(text, `${p} in ${text.slice(0, 200)}`).not.toContain(p);
    }
    expect(seen.length).toBeGreaterThan(25);
  });
});
