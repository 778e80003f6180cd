// Attack class: JavaScript objects shared by every call on a worker. Node-internal objects that the
// endowed host classes return or throw (iterator prototypes, internal error classes, util.inspect)
// escape lockdown's hardening; an agent that patches them reads and changes another agent's data.
// Every test runs on one sandbox process with one thread, so attacker and victim share the worker.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agent, expectNoSecret, loot, run, startIsolationDaemon } from './helpers.js';
import type { IsolationDaemon, RunResult } from './helpers.js';

const SECRET = 'sk-victim-SECRET-7f3a9c';

// What the victim does, ordinary code over every endowed host class: its result, output and
// workspace alone are the reference every attacked run must equal.
const VICTIM = `
const KEY = ${JSON.stringify(SECRET)};
const out = {};
const params = new URLSearchParams('api_key=' + KEY + '&amount=10');
out.pairs = [...params];
out.entries = [...params.entries()].map(([k, v]) => k + ':' + v);
out.values = [...params.values()];
const url = new URL('https://pay.example/charge?api_key=' + KEY + '&amount=10');
out.amount = url.searchParams.get('amount');
out.keys = [...url.searchParams.keys()];
out.href = url.href;
out.errors = [];
const probe = (f) => {
  try { f(); out.errors.push('no error'); }
  catch (e) { out.errors.push([String(e), e.message, e.name, e instanceof Error, Object.prototype.toString.call(e), e.constructor && e.constructor.name, e.code ?? null]); }
};
probe(() => new URL(KEY));
probe(() => new URLSearchParams([[KEY]]));
probe(() => URL.createObjectURL(KEY));
probe(() => URL.revokeObjectURL());
probe(() => atob(KEY + '%'));
probe(() => structuredClone(() => KEY));
probe(() => crypto.getRandomValues(new Uint8Array(70000)));
probe(() => new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xff])));
probe(() => new TextEncoder().encodeInto(KEY, Object.create(Uint8Array.prototype)));
probe(() => new TextEncoder().encodeInto(KEY, new Proxy(new Uint8Array(8), {})));
probe(() => new TextDecoder().decode(Object.create(ArrayBuffer.prototype)));
probe(() => crypto.getRandomValues(Object.create(Uint8Array.prototype)));
out.math = [Math.max(1, 2), Math.floor(2.5), typeof Math.random(), Math.PI];
out.date = [new Date(0).toISOString(), typeof Date.now(), Date.UTC(2020, 0, 1)];
out.json = JSON.stringify({ key: KEY, amount: 10 });
out.uuid = crypto.randomUUID().length;
out.files = list_files();
out.order = Object.fromEntries(params);
write_file('receipt.txt', KEY + ' amount=' + out.order.amount);
console.log('charged', out.amount, 'with', KEY);
await sleep(5);
return out;
`;

// util.inspect, if any facade formats a guest value with it: look-alikes of every kind a facade
// takes, each carrying Node's inspect hook (and no constructor name to print instead).
const INSPECT_BAIT = `
      let inspect;
      const hook = Symbol.for('nodejs.util.inspect.custom');
      const baited = (o) => { Object.defineProperty(o, hook, { value: (depth, options, i) => { inspect = i; return 'x'; } }); Object.defineProperty(o, 'constructor', { value: undefined }); return o; };
      const routes = [
        (b) => URL.createObjectURL(b),
        (b) => new TextEncoder().encodeInto('x', b),
        (b) => new TextDecoder().decode(b),
        (b) => crypto.getRandomValues(b),
        (b) => structuredClone(1, { transfer: [b] }),
        (b) => new TextDecoder('utf-8', b),
      ];
      for (const route of routes) {
        for (const make of [() => Object.create(null), () => Object.create(Uint8Array.prototype), () => Object.create(ArrayBuffer.prototype), () => Object.create(DataView.prototype)]) {
          try { route(baited(make())); } catch {}
        }
      }`;

// Every object an agent can reach from the endowments that is not made afresh for its call, by label.
const REACH = `
const reach = () => {
  const found = [];
  const add = (label, o) => {
    let depth = 0;
    for (let p = o; p && depth < 6; p = Object.getPrototypeOf(p), depth++) found.push([label + '#' + depth, p]);
  };
  add('URLSearchParams iterator', new URLSearchParams('a=1')[Symbol.iterator]());
  add('URLSearchParams keys', new URLSearchParams('a=1').keys());
  add('URL searchParams', new URL('http://x/?a=1').searchParams);
  add('URL instance', new URL('http://x/'));
  const throwers = {
    'URL error': () => new URL('::'),
    'URLSearchParams tuple error': () => new URLSearchParams([[1]]),
    'createObjectURL error': () => URL.createObjectURL(1),
    'revokeObjectURL error': () => URL.revokeObjectURL(),
    'append error': () => new URL('http://x').searchParams.append(),
    'atob error': () => atob('%'),
    'structuredClone error': () => structuredClone(() => 1),
    'getRandomValues error': () => crypto.getRandomValues(new Uint8Array(70000)),
    'TextDecoder error': () => new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xff])),
    'encodeInto fake error': () => new TextEncoder().encodeInto('x', Object.create(Uint8Array.prototype)),
    'encodeInto Proxy error': () => new TextEncoder().encodeInto('x', new Proxy(new Uint8Array(8), {})),
    'decode fake error': () => new TextDecoder().decode(Object.create(ArrayBuffer.prototype)),
    'getRandomValues fake error': () => crypto.getRandomValues(Object.create(Uint8Array.prototype)),
    'structuredClone transfer error': () => structuredClone(1, { transfer: [Object.create(ArrayBuffer.prototype)] }),
  };
  for (const [label, f] of Object.entries(throwers)) { try { f(); } catch (e) { if (e && typeof e === 'object') add(label, e); } }
  ${INSPECT_BAIT}
  if (typeof inspect === 'function') {
    found.push(['util.inspect', inspect], ['inspect.defaultOptions', inspect.defaultOptions], ['inspect.styles', inspect.styles], ['inspect.colors', inspect.colors]);
  }
  const named = { Date, 'Date.prototype': Date.prototype, Math, crypto, URL, 'URL.prototype': URL.prototype, URLSearchParams, 'URLSearchParams.prototype': URLSearchParams.prototype,
    'crypto.getRandomValues': crypto.getRandomValues, 'crypto.randomUUID': crypto.randomUUID, atob, btoa, structuredClone, filter_by_field, summarize_list, aggregate_stats, format_output,
    'sleep()': sleep(0), 'list_files()': list_files(), 'list_skills()': list_skills(), 'search_tools()': search_tools('file'), 'tokenize_pii()': tokenize_pii('a@b.example') };
  for (const [label, o] of Object.entries(named)) add(label, o);
  for (const name of ['TextEncoder', 'TextDecoder', 'Float64Array', 'Float32Array']) if (typeof globalThis[name] === 'function') add(name, globalThis[name]);
  return found.filter(([, o]) => o !== null && (typeof o === 'object' || typeof o === 'function'));
};
`;

let d: IsolationDaemon;
let attacker: Client;
let victim: Client;
let auditor: Client;
let reference: RunResult;

// A fresh daemon per test: one planted trick that works must not be blamed on the next test.
beforeEach(async () => {
  d = await startIsolationDaemon({ agents: [agent('mallory'), agent('alice'), agent('auditor', { workspace: 'read', skills: 'read' }, 'alice')], processes: 1 });
  [attacker, victim, auditor] = await Promise.all([d.client('mallory'), d.client('alice'), d.client('auditor')]);
  reference = await run(victim, VICTIM);
  expect(reference.success, reference.error).toBe(true);
  await run(victim, 'delete_file("receipt.txt")');
}, 60_000);

afterEach(async () => {
  await d?.stop();
});

/** The victim's run after an attack equals its run alone: result, output and workspace. */
async function expectVictimUntouched(): Promise<void> {
  await run(victim, 'delete_file("receipt.txt")');
  const attacked = await run(victim, VICTIM);
  expect(attacked).toMatchObject({ success: reference.success, result: reference.result, output: reference.output });
  const receipt = await run(victim, 'return read_file("receipt.txt")');
  expect(receipt.result).toBe(`${SECRET} amount=10`);
}

/** Plant, victim, collect: three rounds, each order, on the same worker. */
async function attackRounds(plant: string, collect: string): Promise<void> {
  for (let round = 0; round < 3; round++) {
    if (round === 1) await expectVictimUntouched(); // victim first: the attacker then reaps what it left
    const planted = await run(attacker, plant);
    await expectVictimUntouched();
    const collected = await run(attacker, collect);
    expectNoSecret(collected, [SECRET]);
    expect(JSON.stringify(planted)).not.toContain(SECRET);
  }
  expectNoSecret(await loot(attacker), [SECRET]);
}

describe('host objects shared between calls', () => {
  it('a mark one agent puts on any object reachable from the endowments is invisible to the next agent', async () => {
    const plant = `${REACH}
      const marked = [];
      for (const [label, o] of reach()) { try { Object.defineProperty(o, '__mallory', { value: label, configurable: true }); marked.push(label); } catch {} }
      return marked;`;
    const seen = `${REACH} return reach().filter(([, o]) => { try { return Object.prototype.hasOwnProperty.call(o, '__mallory'); } catch { return false; } }).map(([label]) => label);`;
    const planted = await run(attacker, plant);
    expect(planted.success, planted.error).toBe(true);
    const visible = await run(victim, seen);
    expect(visible.success, visible.error).toBe(true);
    expect(visible.result, 'objects the attacker marked that the victim sees').toEqual([]);
  }, 60_000);

  it('patching the URLSearchParams iterator prototype neither reads nor changes another agent\'s parameters', async () => {
    const plant = `
      const proto = Object.getPrototypeOf(new URLSearchParams('a=1')[Symbol.iterator]());
      const next = proto.next;
      const stash = proto.__stash ?? [];
      try {
        Object.defineProperty(proto, 'next', { configurable: true, writable: true, value: function () {
          const r = next.call(this);
          if (!r.done && Array.isArray(r.value)) { stash.push(r.value.join('=')); if (r.value[0] === 'amount') r.value[1] = '999999'; }
          return r;
        } });
        Object.defineProperty(proto, '__stash', { configurable: true, value: stash });
        return 'planted';
      } catch (e) { return 'refused: ' + e.message; }`;
    const collect = `
      const stash = Object.getPrototypeOf(new URLSearchParams('a=1')[Symbol.iterator]()).__stash ?? [];
      write_file('loot.txt', JSON.stringify(stash));
      return stash;`;
    await attackRounds(plant, collect);
  }, 60_000);

  it("a spy on the iterator prototype that changes nothing still collects nothing of another agent's", async () => {
    const plant = `
      const proto = Object.getPrototypeOf(new URLSearchParams('a=1')[Symbol.iterator]());
      const next = proto.next;
      const stash = proto.__stash ?? [];
      try {
        proto.next = function () { const r = next.call(this); if (!r.done) stash.push(String(r.value)); return r; };
        proto.__stash = stash;
      } catch {}
      return 'planted';`;
    const collect = `
      const stash = Object.getPrototypeOf(new URLSearchParams('a=1')[Symbol.iterator]()).__stash ?? [];
      write_file('loot.txt', JSON.stringify(stash));
      return stash;`;
    await attackRounds(plant, collect);
  }, 60_000);

  it("patching the prototypes of Node's internal errors neither reads nor changes another agent's errors", async () => {
    const plant = `
      const throwers = [() => new URL('::'), () => new URLSearchParams([[1]]), () => URL.createObjectURL(1), () => URL.revokeObjectURL(),
        () => atob('%'), () => structuredClone(() => 1), () => crypto.getRandomValues(new Uint8Array(70000)),
        () => new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xff])),
        () => new TextEncoder().encodeInto('x', Object.create(Uint8Array.prototype)), () => new TextEncoder().encodeInto('x', new Proxy(new Uint8Array(8), {})),
        () => new TextDecoder().decode(Object.create(ArrayBuffer.prototype)), () => crypto.getRandomValues(Object.create(Uint8Array.prototype))];
      const done = [];
      for (const f of throwers) {
        let e; try { f(); } catch (x) { e = x; }
        if (!e || typeof e !== 'object') continue;
        for (let p = Object.getPrototypeOf(e); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
          if (Object.isFrozen(p)) continue;
          const stash = p.__stash ?? [];
          try {
            Object.defineProperty(p, '__stash', { configurable: true, value: stash });
            Object.defineProperty(p, 'toString', { configurable: true, writable: true, value: function () { stash.push(String(this.message)); return 'Error: nothing to see'; } });
            Object.defineProperty(p, 'message', { configurable: true, get() { return 'hijacked'; }, set(v) {} });
            Object.defineProperty(p, 'name', { configurable: true, get() { stash.push('name read'); return 'RangeError'; } });
            Object.defineProperty(p, 'constructor', { configurable: true, writable: true, value: function Hijacked() {} });
            done.push(p.constructor.name);
          } catch {}
        }
      }
      return done;`;
    const collect = `
      const found = [];
      for (const f of [() => new URL('::'), () => new URLSearchParams([[1]]), () => URL.createObjectURL(1), () => URL.revokeObjectURL(),
        () => new TextEncoder().encodeInto('x', Object.create(Uint8Array.prototype)), () => new TextDecoder().decode(Object.create(ArrayBuffer.prototype))]) {
        try { f(); } catch (e) { for (let p = Object.getPrototypeOf(e); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) if (Object.prototype.hasOwnProperty.call(p, '__stash')) found.push(...p.__stash); }
      }
      write_file('loot.txt', JSON.stringify(found));
      return found;`;
    await attackRounds(plant, collect);
  }, 60_000);

  it("Node's util.inspect, reached through a facade's error message (URL.createObjectURL, encodeInto, decode, getRandomValues, structuredClone), does not carry one agent's settings into another's call", async () => {
    const plant = `
      ${INSPECT_BAIT}
      if (typeof inspect !== 'function') return 'no inspect';
      const stash = inspect.__stash ?? [];
      try { inspect.__stash = stash; } catch {}
      const changed = [];
      try { inspect.defaultOptions.maxStringLength = 3; changed.push('maxStringLength'); } catch {}
      try { inspect.defaultOptions = { maxStringLength: 3, depth: 0, breakLength: 1 }; changed.push('defaultOptions'); } catch {}
      try { Object.defineProperty(inspect.defaultOptions, 'colors', { configurable: true, get() { stash.push('options read'); return true; } }); changed.push('colors getter'); } catch {}
      try { inspect.styles.string = 'red'; inspect.styles.special = 'red'; } catch {}
      try { Object.defineProperty(inspect.colors, 'red', { configurable: true, get() { stash.push('colour read'); return [31, 39]; } }); } catch {}
      try { inspect.custom = Symbol('taken'); } catch {}
      return changed;`;
    const collect = `
      ${INSPECT_BAIT}
      const stash = inspect?.__stash ?? [];
      write_file('loot.txt', JSON.stringify(stash));
      return { stash, defaults: inspect ? JSON.stringify(inspect.defaultOptions) : null };`;
    await attackRounds(plant, collect);
  }, 60_000);

  it('writes to endowed globals, their prototypes and host results are refused or stay in the call', async () => {
    const plant = `
      const tries = {
        'Math.random': () => { Math.random = () => 0.5; },
        'Math.max': () => { Math.max = () => -1; },
        'Date.now': () => { Date.now = () => 0; },
        'Date.prototype.toISOString': () => { Date.prototype.toISOString = () => 'hijacked'; },
        'crypto.randomUUID': () => { crypto.randomUUID = () => 'x'; },
        'URL.prototype.href': () => { Object.defineProperty(URL.prototype, 'href', { get() { return 'https://evil.example/'; } }); },
        'URLSearchParams.prototype.get': () => { URLSearchParams.prototype.get = () => '999999'; },
        'JSON.stringify': () => { JSON.stringify = () => '{}'; },
        'Array.prototype.map': () => { Array.prototype.map = function () { return []; }; },
        'Object.prototype.amount': () => { Object.prototype.amount = '999999'; },
        'console.log': () => { console.log = () => {}; },
        'list_files().__proto__': () => { Object.getPrototypeOf(list_files()).push = () => 0; },
        'sleep().__proto__.then': () => { Object.getPrototypeOf(sleep(0)).then = () => {}; },
        'filter_by_field.x': () => { filter_by_field.x = 1; },
      };
      const accepted = [];
      for (const [name, f] of Object.entries(tries)) { try { f(); accepted.push(name); } catch {} }
      return accepted;`;
    const collect = 'return [typeof Math.random(), Math.max(1, 2), new Date(0).toISOString()]';
    await attackRounds(plant, collect);
  }, 60_000);
});

describe('what a call leaves behind', () => {
  // Without any shared object: what a call leaves on the worker's own queues.
  it("a rejection, timer, microtask or finalizer an attacker leaves behind never writes into another agent's output", async () => {
    const plant = `
      const registry = new FinalizationRegistry((i) => { Promise.reject(new Error('planted finalizer ' + i)); });
      for (let i = 0; i < 5000; i++) registry.register({ pad: new Array(32).fill(i) }, i);
      setTimeout(() => { throw new Error('planted timer'); }, 30);
      setInterval(() => console.log('planted interval'), 5);
      Promise.reject(new Error('planted at the end'));
      queueMicrotask(() => Promise.reject(new Error('planted microtask')));
      (async () => { await null; for (let i = 0; i < 1000; i++) await null; throw new Error('planted async chain'); })();
      return 'planted';`;
    await rounds(plant);
  }, 60_000);

  it("a rejection raised by planted code inside another agent's call is not written into its output", async () => {
    const plant = `
      const proto = Object.getPrototypeOf(new URLSearchParams('a=1')[Symbol.iterator]());
      const next = proto.next;
      try { proto.next = function () { Promise.reject(new Error('planted rejection')); return next.call(this); }; } catch {}
      return 'planted';`;
    await rounds(plant);
  }, 60_000);
});

/** Plant, then a victim that churns memory and waits (finalizers and timers get their chance). */
async function rounds(plant: string): Promise<void> {
  const churn = 'let junk = []; for (let i = 0; i < 200; i++) { junk.push(new Array(5000).fill(i)); if (i % 50 === 0) await sleep(10); } junk = null; await sleep(50); return "done"';
  for (let round = 0; round < 2; round++) {
    await run(attacker, plant);
    const r = await run(victim, churn);
    expect(r).toMatchObject({ success: true, result: 'done', output: [] });
    await expectVictimUntouched();
  }
}

describe('two agents on one namespace', () => {
  it("an agent that may only read a namespace cannot change what its co-tenant writes there", async () => {
    const refused = await run(auditor, 'write_file("receipt.txt", "forged")');
    expect(refused).toMatchObject({ success: false, error_type: 'PermissionError' });
    const plant = `
      const proto = Object.getPrototypeOf(new URLSearchParams('a=1')[Symbol.iterator]());
      const next = proto.next;
      try { proto.next = function () { const r = next.call(this); if (!r.done && r.value[0] === 'amount') r.value[1] = '999999'; return r; }; } catch {}
      return 'planted';`;
    for (let round = 0; round < 2; round++) {
      await run(auditor, plant);
      await expectVictimUntouched();
      expect((await run(auditor, 'return read_file("receipt.txt")')).result).toBe(`${SECRET} amount=10`);
    }
  }, 60_000);
});
