// The prelude's Python, checked as Python by the interpreter the sandbox runs (Pyodide, so no
// system Python and exactly its version): every .py file compiles, the prelude defines every name
// the sandbox API table gives Python, and the plain `def test_*()` functions of
// workers/python/py/tests/test_*.py pass, each reported here by name. A test file runs in a copy
// of the prelude's namespace (its helpers.py first), without install() or boot(): nothing sealed.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPyodide } from 'pyodide';
import type { PyodideAPI } from 'pyodide';
import type { PyCallable, PyProxy } from 'pyodide/ffi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRELUDE_FILES, PYTHON_FILES, PYTHON_HAND_WRITTEN, forwardersSource, preludeSource, readPython } from '../../workers/python/prelude.js';
import type { ApiEntry } from '../../workers/kit/api-contract.js';
import { PRELUDE_PY, loadOptions } from '../../workers/python/snapshot.js';
import { SANDBOX_API } from '../../workers/kit/api-contract.js';
import { PYTHON_START_MS } from './helpers.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const pyDir = path.join(root, 'workers', 'python', 'py');
const testsDir = path.join(pyDir, 'tests');
const shipped = fs.readdirSync(pyDir).filter((f) => f.endsWith('.py')).sort();
const testFiles = fs.readdirSync(testsDir).filter((f) => /^test_.*\.py$/.test(f)).sort();
/** The test functions of a file, as vitest must know them before Python runs. */
const testNames = (file: string): string[] => [...fs.readFileSync(path.join(testsDir, file), 'utf8').matchAll(/^def (test_\w+)\(\):/gm)].map((m) => m[1] as string);

/** Python helpers of this harness: compile a file, load a test file, run one test. */
const HARNESS = `
import builtins, traceback

def compile_error(source, filename):
    try:
        compile(source, filename, 'exec', dont_inherit=True)
        return ''
    except SyntaxError as e:
        return f"{e.filename}:{e.lineno}: {e.msg}"

def prelude_namespace(prelude):
    ns = {'__name__': '_sandbox', '__builtins__': dict(builtins.__dict__)}
    exec(compile(prelude, '<sandbox>', 'exec'), ns)
    return ns

def load_tests(prelude_ns, helpers, source, filename):
    ns = dict(prelude_ns)
    exec(compile(helpers, 'workers/python/py/tests/helpers.py', 'exec'), ns)
    exec(compile(source, filename, 'exec'), ns)
    ns['__name__'] = filename
    return ns

def test_names(ns):
    return sorted(k for k, v in ns.items() if k.startswith('test_') and callable(v) and getattr(v, '__code__', None) is not None and v.__code__.co_filename == ns['__name__'])

def run_test(ns, name):
    try:
        ns[name]()
        return ''
    except BaseException as e:
        return ''.join(traceback.format_exception(e))
`;

let pyodide: PyodideAPI;
let harness: PyProxy & { get(name: string): PyCallable };
let preludeNs: PyProxy & { has(name: string): boolean };

beforeAll(async () => {
  pyodide = await loadPyodide(loadOptions(Object.freeze(Object.create(null) as object), () => {}));
  harness = pyodide.runPython(`${HARNESS}\nglobals()`) as typeof harness;
  preludeNs = harness.get('prelude_namespace')(PRELUDE_PY) as typeof preludeNs;
}, PYTHON_START_MS);

afterAll(() => {
  preludeNs?.destroy();
  harness?.destroy();
});

describe('every .py file compiles with the Python the sandbox runs', () => {
  const files = [...shipped.map((f) => path.join(pyDir, f)), ...fs.readdirSync(testsDir).filter((f) => f.endsWith('.py')).map((f) => path.join(testsDir, f))];
  it.each(files.map((f) => path.relative(root, f)))('%s', (file) => {
    expect(harness.get('compile_error')(fs.readFileSync(path.join(root, file), 'utf8'), file)).toBe('');
  });

  it('compiles the prelude as it is run, and lists every shipped file', () => {
    expect(harness.get('compile_error')(PRELUDE_PY, '<sandbox>')).toBe('');
    expect([...PYTHON_FILES].sort()).toEqual(shipped);
    expect(preludeSource()).toBe(PRELUDE_PY);
    expect(PRELUDE_FILES.at(-1)).toBe('boot.py');
  });

  it('is copied into dist/ by the build, unchanged (the package ships dist/workers)', () => {
    const dist = path.join(root, 'dist', 'workers', 'python', 'py');
    expect(fs.readdirSync(dist).sort()).toEqual(shipped);
    for (const f of shipped) expect(fs.readFileSync(path.join(dist, f), 'utf8'), f).toBe(fs.readFileSync(path.join(pyDir, f), 'utf8'));
  });

  it('says how to fix a .py file missing next to the compiled worker', () => {
    expect(() => readPython('missing.py')).toThrow(/the Python file .*missing\.py is missing .*run `npm run build`, which copies workers\/python\/py\/\*\.py/);
  });

  it('reports a syntax error with its file and line', () => {
    expect(harness.get('compile_error')('x = 1\ndef (:\n', 'broken.py')).toBe('broken.py:2: invalid syntax');
  });
});

it("defines every name the sandbox API table gives Python (the table's plain host calls among them)", () => {
  const given = SANDBOX_API.filter((x) => x.python !== null && x.kind !== 'value' && x.name !== 'print' && x.name !== 'import_skill' && x.name !== 'tools');
  expect(given.length).toBeGreaterThan(10);
  for (const x of given) expect(preludeNs.has(x.name), x.name).toBe(true);
  expect(preludeNs.has('make_import_skill') && preludeNs.has('Tools')).toBe(true);
});

describe("the plain host calls made from the table's rows", () => {
  const row = (python: string, extra: Partial<ApiEntry> = {}): ApiEntry => ({ name: 'f', kind: 'host-sync', js: 'f()', python, catalog: false, hostMethod: 'host_f', ...extra });

  it('forward every parameter, in order, to the row\'s host method, and compile', () => {
    const source = forwardersSource([row("f(a, b='x', c=None)"), row('g()', { name: 'g', hostMethod: 'host_g' })]);
    expect(source).toContain("def f(a, b='x', c=None):\n    return host_sync('host_f', a, b, c)\n");
    expect(source).toContain("def g():\n    return host_sync('host_g')\n");
    expect(harness.get('compile_error')(source, '<sandbox>')).toBe('');
  });

  it('skip the hand-written functions and the rows that are not blocking host calls', () => {
    const hand = PYTHON_HAND_WRITTEN.map((name) => row(`${name}(x)`, { name }));
    expect(forwardersSource([...hand, row('f(url)', { kind: 'host-async' }), row('f(ms)', { kind: 'guest' })])).not.toMatch(/def /);
  });

  it.each(['f(*args)', 'f(**kw)', 'f(a, *, b)', 'f(a, /)', 'g(a)', 'f(a) -> (b, c)', 'f(a', 'f(a=(1, 2))', "f(a='x'):\n    pass\ndef h(b)"])('refuse the signature %s, saying to write it by hand', (python) => {
    expect(() => forwardersSource([row(python)])).toThrow(/is not a plain call .*write f by hand in workers\/python\/py\/api\.py and add it to PYTHON_HAND_WRITTEN/);
  });

  it('refuse a row without a usable host method', () => {
    expect(() => forwardersSource([row('f(a)', { hostMethod: undefined })])).toThrow(/gives f no host method to forward to/);
    expect(() => forwardersSource([row('f(a)', { hostMethod: "x'); import os; ('" })])).toThrow(/no host method/);
  });
});

const helpers = fs.readFileSync(path.join(testsDir, 'helpers.py'), 'utf8');
for (const file of testFiles) {
  describe(`workers/python/py/tests/${file}`, () => {
    const filename = `workers/python/py/tests/${file}`;
    let ns: PyProxy;
    beforeAll(() => {
      ns = harness.get('load_tests')(preludeNs, helpers, fs.readFileSync(path.join(testsDir, file), 'utf8'), filename) as PyProxy;
    });
    afterAll(() => ns?.destroy());

    it('has its test functions found by this runner', () => {
      const found = harness.get('test_names')(ns) as PyProxy;
      expect(found.toJs()).toEqual([...testNames(file)].sort());
      found.destroy();
    });
    for (const name of testNames(file)) {
      it(name, () => {
        expect(harness.get('run_test')(ns, name)).toBe('');
      });
    }
  });
}
