// The web facades (workers/js/web-facades.ts, web-encoding.ts) against Node's own classes:
// one table of cases, each run on both; the outcomes (the value, or the name of the error thrown)
// must be equal. The same table then runs as guest code in a real sandbox (locked down, through
// the pool), where the facades are what `URL`, `atob`, `crypto`... are. Look-alike arguments (fakes, Proxies, subclass instances) are in the table too:
// Node refuses them, and so must the facades, before anything reaches Node.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExecutor, createHostApi } from '../../src/executor/index.js';
import type { PooledExecutor } from '../../src/executor/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { Workspace } from '../../src/workspace/index.js';
import { FULL_PERMISSIONS, testConfig } from '../fixtures/config.js';
import { TextDecoder, TextEncoder, URL, URLSearchParams } from '../../workers/js/web-facades.js';
import { atob, btoa, crypto, structuredClone } from '../../workers/js/web-encoding.js';

interface Env {
  URL: typeof globalThis.URL;
  URLSearchParams: typeof globalThis.URLSearchParams;
  TextEncoder: typeof globalThis.TextEncoder;
  TextDecoder: typeof globalThis.TextDecoder;
  atob: typeof globalThis.atob;
  btoa: typeof globalThis.btoa;
  structuredClone: typeof globalThis.structuredClone;
  crypto: { getRandomValues: <T extends ArrayBufferView | null>(a: T) => T; randomUUID: () => string };
}

const NODE: Env = {
  URL: globalThis.URL,
  URLSearchParams: globalThis.URLSearchParams,
  TextEncoder: globalThis.TextEncoder,
  TextDecoder: globalThis.TextDecoder,
  atob: globalThis.atob,
  btoa: globalThis.btoa,
  structuredClone: globalThis.structuredClone,
  crypto: globalThis.crypto as unknown as Env['crypto'],
};

const FACADES = { URL, URLSearchParams, TextEncoder, TextDecoder, atob, btoa, structuredClone, crypto } as unknown as Env;

// Casts for calls the types forbid (missing or wrong arguments): the point of those cases.
/* eslint-disable @typescript-eslint/no-explicit-any */
const CASES: Record<string, (g: Env) => unknown> = {
  'URLSearchParams.get() without a name': (g) => (new g.URLSearchParams('q=1') as any).get(),
  'URLSearchParams.get(name)': (g) => new g.URLSearchParams('q=1').get('q'),
  'URLSearchParams.get(missing)': (g) => new g.URLSearchParams('q=1').get('x'),
  'URLSearchParams.append(name) without a value': (g) => (new g.URLSearchParams() as any).append('a'),
  'URLSearchParams.set(name) without a value': (g) => (new g.URLSearchParams() as any).set('a'),
  'URLSearchParams.has()': (g) => (new g.URLSearchParams() as any).has(),
  'URLSearchParams.delete()': (g) => (new g.URLSearchParams() as any).delete(),
  'URLSearchParams.getAll()': (g) => (new g.URLSearchParams() as any).getAll(),
  'URLSearchParams.forEach()': (g) => (new g.URLSearchParams() as any).forEach(),
  'URLSearchParams.forEach(not a function)': (g) => (new g.URLSearchParams('a=1') as any).forEach(1),
  'URLSearchParams.get(Symbol)': (g) => new g.URLSearchParams('a=1').get(Symbol('s') as any),
  'URLSearchParams.get on a non-instance': (g) => g.URLSearchParams.prototype.get.call({}, 'a'),
  'URLSearchParams without new': (g) => (g.URLSearchParams as any)('a=1'),
  'append, set, delete, has with a value': (g) => {
    const p = new g.URLSearchParams('a=1&a=2&b=3');
    p.append('c', 'x y');
    p.set('b', '4');
    p.delete('a', '1');
    return [p.toString(), p.has('a', '2'), p.has('a', '1'), p.size, p.getAll('a')];
  },
  'a pair that is not a pair': (g) => new g.URLSearchParams([['a']] as any),
  'a pair that is a string': (g) => new g.URLSearchParams(['ab'] as any),
  'a pair of three': (g) => new g.URLSearchParams([['a', 'b', 'c']] as any),
  'pairs of non-strings': (g) => new g.URLSearchParams([[1, true]] as any).toString(),
  'a record': (g) => new g.URLSearchParams({ a: 1, b: 'x', c: null } as any).toString(),
  'a record with a Symbol key': (g) => new g.URLSearchParams({ [Symbol('s')]: 1 } as any).toString(),
  'a record with a non-enumerable key': (g) => new g.URLSearchParams(Object.defineProperty({ a: '1' }, 'b', { value: '2' })).toString(),
  'a leading ?': (g) => new g.URLSearchParams('?a=1&a=2').getAll('a'),
  'another instance': (g) => new g.URLSearchParams(new g.URLSearchParams('a=1&b=2')).toString(),
  'a subclass instance': (g) => {
    class Sub extends g.URLSearchParams {}
    return [new g.URLSearchParams(new Sub('x=1')).toString(), new Sub('y=2').get('y'), new Sub('z=3') instanceof g.URLSearchParams];
  },
  'a Proxy of an instance': (g) => new g.URLSearchParams(new Proxy(new g.URLSearchParams('p=1'), {})).toString(),
  'iteration and spread': (g) => {
    const p = new g.URLSearchParams('a=1&b=2');
    return [[...p], [...p.keys()], [...p.values()], [...p.entries()], Object.fromEntries(p)];
  },
  'the iterator is entries': (g) => g.URLSearchParams.prototype[Symbol.iterator] === g.URLSearchParams.prototype.entries,
  'forEach arguments': (g) => {
    const seen: unknown[] = [];
    const p = new g.URLSearchParams('a=1');
    p.forEach(function (this: unknown, v, k, self) {
      seen.push(v, k, self === p, this);
    }, 'that');
    return seen.map(String);
  },
  'URLSearchParams toStringTag': (g) => Object.prototype.toString.call(new g.URLSearchParams()),
  'URLSearchParams members are enumerable': (g) => Object.keys(g.URLSearchParams.prototype).sort(),
  'encoding of spaces and symbols': (g) => [String(new g.URLSearchParams('a=b c&d=%20+')), new g.URLSearchParams({ 'é': '&=' }).toString()],
  'sort': (g) => {
    const p = new g.URLSearchParams('b=1&a=2&b=0');
    p.sort();
    return p.toString();
  },
  'new URL()': (g) => new (g.URL as any)(),
  'an invalid URL': (g) => new g.URL('::'),
  'a Symbol URL': (g) => new g.URL(Symbol('s') as any),
  'a relative URL and a base': (g) => new g.URL('/p?q=1#h', 'https://e.example/a/b').href,
  'an invalid base': (g) => new g.URL('/p', 'nope'),
  'URL.canParse()': (g) => (g.URL as any).canParse(),
  'URL.canParse': (g) => [g.URL.canParse('https://x.example'), g.URL.canParse('nope'), g.URL.canParse('/p', 'https://x.example')],
  'URL parts': (g) => {
    const u = new g.URL('https://user:pw@Example.COM:8080/p/a?x=1#h');
    return [u.href, u.origin, u.protocol, u.username, u.password, u.host, u.hostname, u.port, u.pathname, u.search, u.hash, String(u), u.toJSON()];
  },
  'URL setters': (g) => {
    const u = new g.URL('https://e.example/p');
    u.protocol = 'http';
    u.port = '99';
    u.hash = 'h';
    u.search = '?a=1';
    u.pathname = '/q r';
    u.username = 'me';
    return u.href;
  },
  'a Symbol given to a URL setter': (g) => {
    const u = new g.URL('https://e.example/');
    u.search = Symbol('s') as any;
  },
  'an invalid href': (g) => {
    new g.URL('https://e.example/').href = '::';
  },
  'searchParams is live': (g) => {
    const u = new g.URL('https://e.example/?a=1');
    u.searchParams.append('b', '2');
    const same = u.searchParams === u.searchParams;
    u.search = '?c=3';
    return [u.href, same, u.searchParams.get('c'), u.searchParams.get('a')];
  },
  'URL toStringTag and JSON': (g) => [Object.prototype.toString.call(new g.URL('https://e.example')), JSON.stringify({ u: new g.URL('https://e.example/a') })],
  'URL members are enumerable': (g) => Object.keys(g.URL.prototype).sort(),
  'TextEncoder.encode': (g) => {
    const e = new g.TextEncoder();
    return [e.encoding, [...e.encode('hé')], [...e.encode()], [...e.encode(null as any)], [...e.encode('\ud800')]];
  },
  'TextEncoder.encode on a non-instance': (g) => g.TextEncoder.prototype.encode.call({}, 'a'),
  'TextEncoder.encodeInto': (g) => {
    const buf = new ArrayBuffer(8);
    const r = new g.TextEncoder().encodeInto('héllo', new Uint8Array(buf, 2, 4));
    return [r, [...new Uint8Array(buf)]];
  },
  'TextEncoder.encodeInto a subclass instance': (g) => {
    class Bytes extends Uint8Array {}
    const b = new Bytes(3);
    return [new g.TextEncoder().encodeInto('abcd', b), [...b]];
  },
  'TextEncoder.encodeInto without a destination': (g) => (new g.TextEncoder() as any).encodeInto('abc'),
  'TextEncoder.encodeInto a fake Uint8Array': (g) => new g.TextEncoder().encodeInto('abc', Object.create(Uint8Array.prototype)),
  'TextEncoder.encodeInto a Proxy of a Uint8Array': (g) => new g.TextEncoder().encodeInto('abc', new Proxy(new Uint8Array(4), {})),
  'TextEncoder.encodeInto a Uint16Array': (g) => new g.TextEncoder().encodeInto('abc', new Uint16Array(4) as any),
  'TextEncoder.encodeInto a plain object': (g) => new g.TextEncoder().encodeInto('abc', { length: 4 } as any),
  'TextDecoder.decode of views and buffers': (g) => {
    const d = new g.TextDecoder();
    const bytes = new g.TextEncoder().encode('héllo');
    return [d.decode(bytes), d.decode(), d.decode(bytes.buffer), d.decode(new DataView(bytes.buffer, 1)), d.decode(new Uint16Array([0x6968])), d.decode(bytes.subarray(3))];
  },
  'TextDecoder.decode of a fake ArrayBuffer': (g) => new g.TextDecoder().decode(Object.create(ArrayBuffer.prototype)),
  'TextDecoder.decode of a fake Uint8Array': (g) => new g.TextDecoder().decode(Object.create(Uint8Array.prototype)),
  'TextDecoder.decode of a Proxy of a Uint8Array': (g) => new g.TextDecoder().decode(new Proxy(new Uint8Array([0x61]), {})),
  'TextDecoder.decode of a string': (g) => new g.TextDecoder().decode('abc' as any),
  'TextDecoder.decode with options that are not an object': (g) => new g.TextDecoder().decode(new Uint8Array([0x61]), 5 as any),
  'TextDecoder.decode on a non-instance': (g) => g.TextDecoder.prototype.decode.call({}, new Uint8Array(1)),
  'an unknown encoding': (g) => new g.TextDecoder('nope'),
  'options that are not an object': (g) => new g.TextDecoder('utf-8', 5 as any),
  'TextDecoder settings': (g) => {
    const d = new g.TextDecoder('UTF-16LE', { fatal: true, ignoreBOM: true });
    return [d.encoding, d.fatal, d.ignoreBOM, new g.TextDecoder(undefined).encoding, new g.TextDecoder('latin1').encoding];
  },
  'a fatal decoder and invalid bytes': (g) => new g.TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xff])),
  'a lenient decoder and invalid bytes': (g) => new g.TextDecoder().decode(new Uint8Array([0x61, 0xff])),
  'the BOM': (g) => [new g.TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])), new g.TextDecoder('utf-8', { ignoreBOM: true }).decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])).length],
  'streaming a split character': (g) => {
    const d = new g.TextDecoder();
    return d.decode(new Uint8Array([0xc3]), { stream: true }) + d.decode(new Uint8Array([0xa9]));
  },
  'atob()': (g) => (g.atob as any)(),
  'atob and btoa': (g) => [g.atob('aGk='), g.atob(' aGk '), g.btoa('hi'), g.atob(undefined as any) === undefined, g.btoa(null as any)],
  'atob of an invalid character': (g) => g.atob('%'),
  'btoa of a character over 255': (g) => g.btoa('\u0100'),
  'atob of a Symbol': (g) => g.atob(Symbol('s') as any),
  'btoa()': (g) => (g.btoa as any)(),

  'structuredClone()': (g) => (g.structuredClone as any)(),
  'structuredClone of data': (g) => {
    const v = { a: [1, { b: 'c' }], d: new Date(0), m: new Map([[1, 2]]), s: new Set(['x']), r: /x/g, n: null };
    const c = g.structuredClone(v);
    return [c !== v, JSON.stringify(c), c.m instanceof Map, [...c.m], [...c.s], String(c.r), c.d instanceof Date];
  },
  'structuredClone of a cycle': (g) => {
    const v: { self?: unknown } = {};
    v.self = v;
    const c = g.structuredClone(v);
    return c.self === c;
  },
  'structuredClone of a function': (g) => g.structuredClone(() => 1),
  'structuredClone of a Proxy': (g) => g.structuredClone(new Proxy({}, {})),
  'structuredClone with options that are not an object': (g) => g.structuredClone(1, 5 as any),
  'structuredClone with a transfer that is not a list': (g) => g.structuredClone(1, { transfer: 5 as any }),
  'structuredClone transferring a buffer': (g) => {
    const b = new ArrayBuffer(4);
    const c = g.structuredClone(b, { transfer: [b] });
    return [b.byteLength, c.byteLength];
  },
  'structuredClone rethrows what a getter throws': (g) => {
    try {
      g.structuredClone({
        get x() {
          throw new RangeError('from the getter');
        },
      });
    } catch (e) {
      return [(e as Error).name, (e as Error).message];
    }
    return 'no error';
  },
  'crypto.getRandomValues': (g) => {
    const a = new Uint32Array(4);
    return [g.crypto.getRandomValues(a) === a, g.crypto.getRandomValues(new BigInt64Array(1)).length, g.crypto.getRandomValues(new Uint8Array(0)).length];
  },
  'crypto.getRandomValues()': (g) => (g.crypto as any).getRandomValues(),
  'crypto.getRandomValues of floats': (g) => g.crypto.getRandomValues(new Float64Array(1) as any),
  'crypto.getRandomValues of a DataView': (g) => g.crypto.getRandomValues(new DataView(new ArrayBuffer(4))),
  'crypto.getRandomValues over 65536 bytes': (g) => g.crypto.getRandomValues(new Uint8Array(65_537)),
  'crypto.getRandomValues of a fake': (g) => g.crypto.getRandomValues(Object.create(Uint8Array.prototype)),
  'crypto.getRandomValues of a Proxy': (g) => g.crypto.getRandomValues(new Proxy(new Uint8Array(4), {})),
  'crypto.getRandomValues detached from crypto': (g) => {
    const { getRandomValues } = g.crypto;
    return getRandomValues(new Uint8Array(1));
  },
  'crypto.randomUUID': (g) => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(g.crypto.randomUUID()),
};
/* eslint-enable @typescript-eslint/no-explicit-any */

function outcome(run: (g: Env) => unknown, g: Env): unknown {
  try {
    return { value: JSON.parse(JSON.stringify(run(g) ?? null, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))) as unknown };
  } catch (e) {
    return { throws: (e as Error).name };
  }
}

describe('web facades behave as Node\'s own classes', () => {
  for (const [name, run] of Object.entries(CASES)) {
    it(name, () => {
      const expected = outcome(run, NODE);
      expect(outcome(run, FACADES)).toEqual(expected);
    });
  }

  it('atob, btoa, structuredClone and getRandomValues are not constructors, as on the web (Node\'s atob, btoa and structuredClone are)', () => {
    for (const f of [atob, btoa, structuredClone, crypto.getRandomValues]) {
      expect(() => new (f as unknown as new (x: string) => unknown)('aGk=')).toThrow(TypeError);
      expect(Object.hasOwn(f, 'prototype')).toBe(false);
    }
  });

  it('the table has cases that throw and cases that return, on Node itself', () => {
    const outcomes = Object.values(CASES).map((run) => outcome(run, NODE) as { throws?: string });
    expect(outcomes.filter((o) => o.throws).length).toBeGreaterThan(30);
    expect(outcomes.filter((o) => !o.throws).length).toBeGreaterThan(30);
  });
});

describe('the same table as guest code in a sandbox', () => {
  const config = testConfig({ sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 0 } });
  const workspace = new Workspace({ root: config.workspaceDir, maxFileBytes: config.limits.maxFileBytes });
  let executor: PooledExecutor;

  beforeAll(async () => {
    executor = await createExecutor({ config, hostApi: createHostApi({ config, workspace, logger: silentLogger() }), logger: silentLogger(), workspace });
  }, 120_000);

  afterAll(async () => {
    await executor.close();
  });

  it('every case has the outcome it has on Node', { timeout: 120_000 }, async () => {
    const cases = Object.entries(CASES).map(([name, run]) => `[${JSON.stringify(name)}, ${run.toString()}]`);
    const code = `
      const outcome = ${outcome.toString()};
      const out = {};
      for (const [name, run] of [${cases.join(',\n')}]) out[name] = outcome(run, globalThis);
      return out;`;
    const r = await executor.execute({ code, language: 'javascript', timeoutSeconds: 60, memoryMb: 256 }, { agent: 'a', sessionId: 's', workspaceNamespace: 'a', permissions: FULL_PERMISSIONS });
    expect(r.success, r.error).toBe(true);
    const expected = Object.fromEntries(Object.entries(CASES).map(([name, run]) => [name, outcome(run, NODE)]));
    expect(r.result).toEqual(expected);
  });
});
