// One call must not break its own worker for the calls after it: changes to the prelude's
// functions are refused (deletions too), the routes to the runtime's modules through sys are
// closed, a worker whose hygiene cannot converge is replaced rather than reused, and memory_mb
// holds whatever an earlier call grew the WebAssembly memory to.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PYTHON_START_MS } from './helpers.js';
import { errorOf, PythonProcess, valueOf } from './process-driver.js';

const WORKS = "write_file('ok.txt', 'fine')\nresult = [read_file('ok.txt'), json.dumps({'a': 1})]";

describe('a call cannot break its own Python worker', () => {
  let proc: PythonProcess;

  beforeAll(async () => {
    proc = new PythonProcess();
    await proc.ready;
  }, PYTHON_START_MS);

  afterAll(() => proc?.close());

  const damage: [string, string][] = [
    ['del f.__defaults__', 'del read_file.__defaults__'],
    ['f.__defaults__ = None', 'read_file.__defaults__ = None'],
    ['del f.__kwdefaults__', "del read_file.__globals__['CallLoop'].call_later.__kwdefaults__"],
    ['f.__kwdefaults__ = None', "read_file.__globals__['CallLoop'].call_later.__kwdefaults__ = None"],
    ['f.__code__ = other', 'read_file.__code__ = (lambda *a: None).__code__'],
    ['del a prelude helper\'s defaults', "del read_file.__globals__['to_json_data'].__defaults__"],
    ['the sys view', "import sys\nobject.__setattr__(sys, '__class__', type(json))"],
  ];
  for (const [name, code] of damage) {
    it(`refuses ${name}, and the next call works`, async () => {
      expect(errorOf(await proc.run(code)).type).toBe('PermissionError');
      expect(valueOf(await proc.run(WORKS))).toEqual(['fine', '{"a": 1}']);
    }, PYTHON_START_MS);
  }

  it('keeps the runtime modules out of reach through sys.modules and __import__', async () => {
    const seen = valueOf(
      await proc.run(
        [
          'import sys',
          "hidden = [n for n in ('_pyodide_core', 'pyodide', '_pyodide', 'importlib', 'gc', '_frozen_importlib', 'js', 'pyodide_js') if n in sys.modules]",
          'refused = []',
          "for n in ('importlib', 'gc', '_pyodide_core', 'pyodide'):",
          '    try:',
          '        __import__(n)',
          '    except ImportError:',
          '        refused.append(n)',
          'attrs = []',
          "for n in ('_getframe', 'settrace', 'setprofile', 'meta_path', 'addaudithook'):",
          '    try:',
          '        getattr(sys, n)',
          '    except AttributeError:',
          '        attrs.append(n)',
          'try:',
          '    sys.modules = {}',
          '    assigned = True',
          'except AttributeError:',
          '    assigned = False',
          "from sys import modules",
          "result = {'hidden': hidden, 'refused': refused, 'attrs': attrs, 'assigned': assigned, 'json_there': 'json' in modules, 'path': sys.path[:1] != []}",
        ].join('\n'),
      ),
    );
    expect(seen).toEqual({ hidden: [], refused: ['importlib', 'gc', '_pyodide_core', 'pyodide'], attrs: ['_getframe', 'settrace', 'setprofile', 'meta_path', 'addaudithook'], assigned: false, json_there: true, path: true });
    // What user code writes to sys still reaches the real one (print goes where it says).
    const printed = await proc.run('import sys, io\nbuf = io.StringIO()\nold = sys.stdout\nsys.stdout = buf\nprint("captured")\nsys.stdout = old\nresult = buf.getvalue()');
    expect(valueOf(printed)).toBe('captured\n');
  }, PYTHON_START_MS);

  it('replaces a worker whose clean-up never converges, and the next call runs on a pristine one', async () => {
    const poisoned = [
      'import json, decimal',
      'decimal.DefaultContext.prec = 3',
      'class Again:',
      '    def __del__(self, _json=json, _type=type):',
      '        _json.planted = object()',
      '        a = _type(self)()',
      '        a.me = a',
      'a = Again()',
      'a.me = a',
      'del a',
      "result = 'poisoned'",
    ].join('\n');
    // The call itself keeps its outcome; the interpreter is retired behind it.
    expect(valueOf(await proc.run(poisoned))).toBe('poisoned');
    const after = valueOf(await proc.run("import decimal\nresult = [decimal.DefaultContext.prec, hasattr(json, 'planted')]"));
    expect(after).toEqual([28, false]);
    expect(valueOf(await proc.run(WORKS))).toEqual(['fine', '{"a": 1}']);
  }, PYTHON_START_MS);

  it('answers a call whose clean-up never ends, and the next call runs on a replaced interpreter', async () => {
    // The finalizer runs in the clean-up after the answer went out (python-worker.ts answerFirst):
    // the pool host stops a clean-up past its limit and replaces the interpreter.
    const hang = ['import json', 'class Hang:', '    def __del__(self):', '        json.hung = True', '        while True:', '            pass', 'h = Hang()', 'h.me = h', 'del h', "result = 'answered'"].join('\n');
    const started = performance.now();
    expect(valueOf(await proc.run(hang, { timeoutMs: 60_000 }))).toBe('answered');
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(valueOf(await proc.run("result = hasattr(json, 'hung')"))).toBe(false);
    expect(valueOf(await proc.run(WORKS))).toEqual(['fine', '{"a": 1}']);
  }, PYTHON_START_MS);

  it('holds memory_mb for a call after an earlier call grew the WebAssembly memory', async () => {
    const grow = 'x = bytearray(300 * 1024 * 1024)\nx[-1] = 1\ndel x\nresult = "grown"';
    expect(valueOf(await proc.run(grow, { memoryMb: 600 }))).toBe('grown');
    // 200 MB fits in what the memory already has: without the check it would be allowed at 100 MB.
    const small = await proc.run('y = bytearray(200 * 1024 * 1024)\ny[-1] = 1\nresult = "allocated"', { memoryMb: 100 });
    expect(errorOf(small).type).toBe('MemoryLimitError');
    expect(valueOf(await proc.run('y = bytearray(200 * 1024 * 1024)\ny[-1] = 1\nresult = "allocated"', { memoryMb: 600 }))).toBe('allocated');
  }, PYTHON_START_MS);
});
