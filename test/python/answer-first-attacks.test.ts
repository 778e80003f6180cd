// Attacks on Python's answer-first clean-up (python-worker.ts answerFirst), the quick sweep's
// one-pass check (state.py make_unchanged) and the self-check's gc.get_referents (integrity.py),
// by two agents on one real sandbox process: alpha attacks, beta comes after a recycle. Each test
// passes when the attack is refused: what alpha plants does not reach alpha's next call nor beta,
// and the process keeps serving both.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PYTHON_START_MS } from './helpers.js';
import { errorOf, PythonProcess, valueOf } from './process-driver.js';
import type { Finished } from './process-driver.js';

const WORKS = "write_file('ok.txt', 'fine')\nresult = [read_file('ok.txt'), json.dumps({'a': 1})]";

/** Alpha's code to take the audit hook's frame from the traceback of an event it refused. */
const HOOK_FRAME = [
  "gc = read_file.__globals__['_gc']",
  'try:',
  '    gc.get_referents(1)',
  'except PermissionError as e:',
  '    tb = e.__traceback__',
  'while tb.tb_next is not None:',
  '    tb = tb.tb_next',
  'hook = tb.tb_frame',
  '# Whatever one-item flag the hook keeps: raised.',
  'flags = [v for v in hook.f_locals.values() if type(v) is list and len(v) == 1 and v[0] is False]',
  'for f in flags:',
  '    f[0] = True',
];

/** Alpha's code that tries to plant state where the quick sweep does not look: int's own dict. */
const PLANT_IN_INT = [
  'def plant(*objs):',
  '    try:',
  "        gc.get_referents(*objs)[-1]['planted'] = 'by alpha'",
  "        return 'opened'",
  '    except PermissionError:',
  "        return 'refused'",
];

/**
 * What runs in the clean-up, after the answer went out: output, a host call, planted state. The
 * call's namespace is gone by then, so it takes what it uses as defaults; it leaves a mark where
 * the sweep does not look (a function's __dict__), which shows the next call that it ran.
 */
const LATE_WORK = [
  'import json',
  'def late(*_, _print=print, _write=write_file, _json=json, _vars=vars, _Exception=Exception):',
  "    _json.dumps.late_ran = True",
  "    _print('late print')",
  '    try:',
  "        _write('late.txt', 'after the answer')",
  '    except _Exception:',
  '        pass',
  "    _json.planted = 'late'",
  "    _vars(_json)['planted_raw'] = 'late'",
];
/** The next call's view: [late code ran, json.planted, json.planted_raw, json.keep_ref, gc callbacks]. */
const LATE_CHECK =
  "import json\nresult = [getattr(json.dumps, 'late_ran', False), hasattr(json, 'planted'), hasattr(json, 'planted_raw'), hasattr(json, 'keep_ref'), len(read_file.__globals__['_gc'].callbacks)]\njson.dumps.late_ran = False";

describe('answer first: two agents attack the clean-up, the quick sweep and the self-check', () => {
  let proc: PythonProcess;

  beforeAll(async () => {
    proc = new PythonProcess();
    await proc.ready;
  }, PYTHON_START_MS);

  afterAll(() => proc?.close());

  const alpha = (code: string, timeoutMs?: number): Promise<Finished> => proc.run(code, { agent: 'alpha', timeoutMs });
  /** Beta's call, on the interpreter the process gives the next agent (recycled before and after). */
  const beta = async (code: string): Promise<Finished> => {
    await proc.recycle();
    const f = await proc.run(code, { agent: 'beta' });
    await proc.recycle();
    return f;
  };

  it("does not let the audit hook's frame, taken from a traceback, open gc.get_referents", async () => {
    const attack = [...HOOK_FRAME, ...PLANT_IN_INT, "result = [hook.f_code.co_name, plant(int.__dict__), plant(read_file, int.__dict__)]"].join('\n');
    expect(valueOf(await alpha(attack))).toEqual(['audit_hook', 'refused', 'refused']);
    // Not in this call, not in alpha's next call, not for beta.
    expect(valueOf(await alpha("result = getattr(int, 'planted', None)"))).toBeNull();
    expect(valueOf(await beta("result = getattr(int, 'planted', None)"))).toBeNull();
    expect(valueOf(await alpha(WORKS))).toEqual(['fine', '{"a": 1}']);
  }, PYTHON_START_MS);

  it("does not let alpha call the self-check's _referents_of on objects of its choice", async () => {
    const attack = [
      ...HOOK_FRAME,
      "ro = read_file.__globals__.get('_referents_of')",
      'out = []',
      'for args in (((int.__dict__,),), ((int.__dict__,), [False]), ((int.__dict__,), [True]), ((int.__dict__,), flags[0] if flags else [True])):',
      '    try:',
      '        ro(*args)',
      "        out.append('opened')",
      '    except PermissionError:',
      "        out.append('refused')",
      '    except TypeError:',
      "        out.append('no such signature')",
      "result = 'opened' in out",
    ].join('\n');
    expect(valueOf(await alpha(attack))).toBe(false);
  }, PYTHON_START_MS);

  it('gives, of functions, only what their attributes give (when gc.get_referents lets them through)', async () => {
    const probe = [
      ...HOOK_FRAME,
      'def mine(a: int = 1, *, b=[2]):',
      '    return a, b, gc',
      "fs = (read_file, hook.f_globals['make_audit_hook'], mine, lambda: None)",
      "ATTRS = ('__code__', '__globals__', '__builtins__', '__module__', '__defaults__', '__kwdefaults__', '__doc__',",
      "         '__name__', '__qualname__', '__dict__', '__closure__', '__annotations__', '__annotate__', '__type_params__')",
      'reachable = {id(getattr(f, a, None)) for f in fs for a in ATTRS}',
      'try:',
      '    refs = gc.get_referents(*fs)',
      "    result = [type(r).__name__ for r in refs if id(r) not in reachable]",
      'except PermissionError:',
      "    result = 'refused'",
    ].join('\n');
    const seen = valueOf(await alpha(probe));
    expect(seen === 'refused' || (Array.isArray(seen) && seen.length === 0), JSON.stringify(seen)).toBe(true);
  }, PYTHON_START_MS);

  const lateRoutes: [string, string[]][] = [
    ['a finalizer collected in the clean-up', ['class Late:', '    def __del__(self, _late=late):', '        _late()', 'x = Late()', 'x.me = x', 'del x']],
    ['a gc callback', ['gc = read_file.__globals__["_gc"]', 'gc.callbacks.append(late)']],
    ['a weakref callback', ['import weakref', 'class Box:', '    pass', 'b = Box()', 'b.me = b', 'json.keep_ref = weakref.ref(b, late)', 'del b']],
  ];
  for (const [route, code] of lateRoutes) {
    it(`keeps what ${route} does after the answer out of the next calls (output, files, state)`, async () => {
      const first = await alpha([...LATE_WORK, ...code, "result = 'answered'"].join('\n'));
      expect(valueOf(first)).toBe('answered');
      const next = await alpha(LATE_CHECK);
      // The late code did run (its mark is there), and nothing else it did is.
      expect(valueOf(next)).toEqual([true, false, false, false, 0]);
      expect([...first.outcome.output, ...next.outcome.output]).not.toContain('late print');
      expect(proc.files.get('alpha')?.has('late.txt') ?? false).toBe(false);
      const other = await beta(LATE_CHECK);
      expect(valueOf(other)).toEqual([false, false, false, false, 0]);
      expect(other.outcome.output).not.toContain('late print');
      expect(proc.files.get('beta')?.has('late.txt') ?? false).toBe(false);
    }, PYTHON_START_MS);
  }

  it('drops the gc callbacks a call registered: they would run in every later clean-up and call of alpha', async () => {
    const register = [
      'import json',
      "gc = read_file.__globals__['_gc']",
      'def count(*_, _d=json.dumps, _getattr=getattr):',
      "    _d.runs = _getattr(_d, 'runs', 0) + 1",
      'gc.callbacks.append(count)',
      "result = 'registered'",
    ].join('\n');
    expect(valueOf(await alpha(register))).toBe('registered');
    const check = "import json\nruns = getattr(json.dumps, 'runs', 0)\nread_file.__globals__['_gc'].collect()\nresult = [runs > 0, getattr(json.dumps, 'runs', 0) == runs, len(read_file.__globals__['_gc'].callbacks)]";
    // It ran in the clean-up (after the answer), and no more: not in this call's collection.
    expect(valueOf(await alpha(check))).toEqual([true, true, 0]);
  }, PYTHON_START_MS);

  it('sweeps what a gc callback plants as it is dropped with the callbacks', async () => {
    // Dropped after the last sweep (say, by a reset at the end of the clean-up), its finalizer would plant for good.
    const register = [
      'import json',
      "gc = read_file.__globals__['_gc']",
      'class Callback:',
      '    def __call__(self, *_):',
      '        pass',
      '    def __del__(self, _all=json.__all__, _d=json.dumps):',
      "        _all.append('planted')",
      '        _d.dropped = True',
      'gc.callbacks.append(Callback())',
      "result = 'registered'",
    ].join('\n');
    expect(valueOf(await alpha(register))).toBe('registered');
    const check = "import json\nresult = [getattr(json.dumps, 'dropped', False), 'planted' in json.__all__, len(read_file.__globals__['_gc'].callbacks)]";
    expect(valueOf(await alpha(check))).toEqual([true, false, 0]);
  }, PYTHON_START_MS);

  it('starts a call sent during the clean-up only once the interpreter is clean', async () => {
    // The finalizer runs after the answer for a while, then plants: a call started meanwhile would see it.
    const slow = [
      ...LATE_WORK,
      'import time',
      'class Slow:',
      '    def __del__(self, _now=time.monotonic, _late=late):',
      '        end = _now() + 1.5',
      '        while _now() < end:',
      '            pass',
      '        _late()',
      'x = Slow()',
      'x.me = x',
      'del x',
      "result = 'answered'",
    ].join('\n');
    const order: string[] = [];
    const first = alpha(slow).then((f) => (order.push('first'), f));
    const second = alpha(LATE_CHECK).then((f) => (order.push('second'), f));
    expect(valueOf(await first)).toBe('answered');
    expect(valueOf(await second)).toEqual([true, false, false, false, 0]);
    expect(order).toEqual(['first', 'second']);
    expect(valueOf(await beta(WORKS))).toEqual(['fine', '{"a": 1}']);
  }, PYTHON_START_MS);

  const hangs: [string, string[]][] = [
    ['a gc callback that never returns', ['gc = read_file.__globals__["_gc"]', 'def spin(*_):', '    while True:', '        pass', 'gc.callbacks.append(spin)']],
    ['a finalizer that overflows the stack', ['import sys', 'sys.setrecursionlimit(1000000)', 'class Deep:', '    def __del__(self):', '        def r(n):', '            return r(n + 1) + 1', '        r(0)', 'd = Deep()', 'd.me = d', 'del d']],
    ["a finalizer in the runtime's own long sleep", ['import time', 'real_sleep = time.sleep.__defaults__[0]', 'class Nap:', '    def __del__(self, _s=real_sleep):', '        _s(3600)', 'n = Nap()', 'n.me = n', 'del n']],
  ];
  for (const [route, code] of hangs) {
    it(`answers a call whose clean-up is held by ${route}, and serves alpha and beta after it`, async () => {
      expect(valueOf(await alpha([...code, "import json\njson.dumps.marker = 'hung'", "result = 'answered'"].join('\n'), 60_000))).toBe('answered');
      // The next call runs on a replaced interpreter: the hung one still holds its marker.
      expect(valueOf(await alpha("import json\nresult = getattr(json.dumps, 'marker', None)"))).toBeNull();
      expect(valueOf(await beta(WORKS))).toEqual(['fine', '{"a": 1}']);
      expect(proc.alive).toBe(true);
    }, PYTHON_START_MS);
  }

  it("holds a clean-up's allocation to the call's memory_mb, and serves alpha and beta after it", async () => {
    const big = [
      'import json',
      'class Big:',
      '    def __del__(self, _d=json.dumps, _bytearray=bytearray):',
      "        _d.marker = 'grown'",
      '        b = _bytearray(400 * 1024 * 1024)',
      '        b[-1] = 1',
      'x = Big()',
      'x.me = x',
      'del x',
      "result = 'answered'",
    ].join('\n');
    expect(valueOf(await proc.run(big, { agent: 'alpha', memoryMb: 100 }))).toBe('answered');
    // The 400 MB were refused inside the clean-up (its call's limit still held): the interpreter
    // never grew, and goes on serving alpha, whose own mark it keeps.
    const next = await proc.run("import json\nresult = getattr(json.dumps, 'marker', None)", { agent: 'alpha', memoryMb: 100 });
    expect(valueOf(next)).toBe('grown');
    expect(valueOf(await beta(WORKS))).toEqual(['fine', '{"a": 1}']);
  }, PYTHON_START_MS);

  it('puts back shared containers changed in place without a change of length (the one-pass check)', async () => {
    const change = [
      'import json, re, collections',
      'was = [list(json.__all__), json.dumps is vars(json)["dumps"]]',
      'json.__all__.reverse()',
      'd = vars(json)',
      "d['dumps'], d['loads'] = d['loads'], d['dumps']",
      'ns = read_file.__globals__',
      "ns['HOT_MODULES'], ns['DIRTY_MODULES'] = ns['DIRTY_MODULES'], ns['HOT_MODULES']",
      "result = was",
    ].join('\n');
    const [all] = valueOf(await alpha(change)) as [string[], boolean];
    const check = "import json\nns = read_file.__globals__\nresult = [json.__all__, json.dumps({'a': 1}), type(ns['HOT_MODULES']).__name__, type(ns['DIRTY_MODULES']).__name__]";
    expect(valueOf(await alpha(check))).toEqual([all, '{"a": 1}', 'frozenset', 'set']);
  }, PYTHON_START_MS);

  // KNOWN GAP, same agent only (state.py's header: the sweep is hygiene, not a boundary; beta gets
  // a fresh interpreter, as the last line shows), and older than answer-first: a finalizer that the
  // sweep's own repair runs finds the sweep's live frame (a traceback's tb_frame.f_back) and, since
  // Python 3.13 (PEP 667), writes its locals through frame.f_locals: the lists are skipped and the
  // sweep returns 0, so alpha's next call sees json.__all__ planted. The same route reaches the
  // sweep's defaults (its mutable by_module records). Fixing it needs the sweep's result checked
  // from JavaScript (no Python frame of the sweep live then), or frames kept from user code.
  // `it.fails`: this test reports when the gap closes.
  it.fails('KNOWN GAP: a finalizer run by the sweep rewrites the live sweep frame and alpha keeps planted state', async () => {
    const rewire = [
      'import json',
      'class Rewire:',
      '    def __del__(self, _RuntimeError=RuntimeError, _d=json.dumps):',
      '        try:',
      '            raise _RuntimeError',
      '        except _RuntimeError as e:',
      '            f = e.__traceback__.tb_frame.f_back',
      "        while f is not None and f.f_code.co_name != 'sweep':",
      '            f = f.f_back',
      '        if f is not None:',
      "            f.f_locals['lists'] = ()",
      "            f.f_locals['repaired'] = -1",
      '            _d.rewired = True',
      "json.__all__.append('planted')",
      'json.evil = Rewire()',
      "result = 'planted'",
    ].join('\n');
    expect(valueOf(await alpha(rewire))).toBe('planted');
    expect(valueOf(await beta("import json\nresult = 'planted' in json.__all__"))).toBe(false);
    expect(valueOf(await alpha(rewire))).toBe('planted');
    expect(valueOf(await alpha("import json\nresult = [getattr(json.dumps, 'rewired', False), 'planted' in json.__all__]"))).toEqual([true, false]);
  }, PYTHON_START_MS);

  it("never runs a planted object's __eq__, __hash__, __len__ or __iter__ in the sweep or the self-check", async () => {
    // Were the clean-up to call one of them, it would fail, the interpreter would be retired, and
    // the marker on json.dumps (which the sweep does not look at) would be gone in the next call.
    const plant = [
      'import json, collections',
      'class Trap:',
      '    def __eq__(self, other):',
      "        raise SystemExit('eq ran')",
      '    def __hash__(self):',
      "        raise SystemExit('hash ran')",
      '    def __len__(self):',
      "        raise SystemExit('len ran')",
      '    def __iter__(self):',
      "        raise SystemExit('iter ran')",
      't = Trap()',
      'json.__all__.append(t)',
      "vars(json)['trap'] = t",
      "vars(collections)['OrderedDict'] = t",
      "read_file.__globals__['json'] = t",
      "json.dumps.marker = 'kept'",
      "result = 'planted'",
    ].join('\n');
    expect(valueOf(await alpha(plant))).toBe('planted');
    const check = "import json, collections\nresult = [getattr(json.dumps, 'marker', None), hasattr(json, 'trap'), collections.OrderedDict.__name__, json.dumps([1])]";
    expect(valueOf(await alpha(check))).toEqual(['kept', false, 'OrderedDict', '[1]']);
    expect(errorOf(await alpha("raise SystemExit('the process still answers')")).type).toBe('SystemExit');
    expect(valueOf(await beta(WORKS))).toEqual(['fine', '{"a": 1}']);
  }, PYTHON_START_MS);
});
