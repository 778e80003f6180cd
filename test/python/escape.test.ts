// Escape attempts from Python: each must fail WITHOUT effect. Effects are checked where they would
// land: marker files outside the workspace (written by a shell, by Python's file API, or by
// JavaScript reached through Pyodide's bridge), a TCP server that must see no connection, host
// files whose content must not come back. The daemon serves normally afterwards.

import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PYTHON_START_MS, startPython } from './helpers.js';
import type { PythonHarness } from './helpers.js';

let h: PythonHarness;
let server: Server;
let port = 0;
let connections = 0;

beforeAll(async () => {
  h = await startPython();
  server = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
}, PYTHON_START_MS);
afterAll(async () => {
  await h?.close();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

let probe = 0;
/** Runs an attempt that should create `marker`; returns the marker's path and the result. */
async function attempt(code: (marker: string) => string) {
  const marker = path.join(h.outside, `marker-${++probe}`);
  const result = await h.run(code(marker));
  return { marker, result, created: existsSync(marker) };
}

/** JavaScript that would prove an escape: writes the marker through Node's fs. */
const jsPayload = (marker: string): string => `process.getBuiltinModule('fs').writeFileSync(${JSON.stringify(marker)}, 'escaped')`;

describe('the host file system', () => {
  it('cannot be read with open(), io, os or pathlib', async () => {
    const secretFile = path.join(h.outside, 'secret.txt');
    writeFileSync(secretFile, 'TOP-SECRET-CONTENT');
    for (const code of [
      `result = open(${JSON.stringify(secretFile)}).read()`,
      "result = open('/etc/passwd').read()",
      `import io\nresult = io.FileIO(${JSON.stringify(secretFile)}).read()`,
      `import os\nfd = os.open(${JSON.stringify(secretFile)}, os.O_RDONLY)\nresult = os.read(fd, 100)`,
      `import pathlib\nresult = pathlib.Path(${JSON.stringify(secretFile)}).read_text()`,
      `import sys\nresult = sys.modules['io'].open(${JSON.stringify(secretFile)}).read()`,
    ]) {
      const r = await h.run(code);
      expect(r.success, code).toBe(false);
      expect(JSON.stringify(r), code).not.toContain('TOP-SECRET');
      expect(JSON.stringify(r), code).not.toContain('root:x:0');
    }
  });

  it('read_file, served in the worker for plain paths, reads inside the namespace only', async () => {
    const ns = path.join(h.workspace.root, 'py-agent');
    mkdirSync(ns, { recursive: true });
    writeFileSync(path.join(h.outside, 'secret.txt'), 'TOP-SECRET-CONTENT');
    writeFileSync(path.join(ns, 'data.json'), JSON.stringify([{ s: 'active' }, { s: 'idle' }, { s: 'active' }]));
    rmSync(path.join(ns, 'out-link'), { force: true });
    rmSync(path.join(ns, 'out-dir'), { force: true });
    symlinkSync(path.join(h.outside, 'secret.txt'), path.join(ns, 'out-link'));
    symlinkSync(h.outside, path.join(ns, 'out-dir'));
    const ok = await h.run("data = json.loads(read_file('data.json'))\nresult = len([d for d in data if d['s'] == 'active'])", { namespace: 'py-agent' });
    expect(ok.result).toBe(2);
    for (const file of ['out-link', 'out-dir/secret.txt', '../secret.txt', '../../secret.txt']) {
      const r = await h.run(`result = read_file(${JSON.stringify(file)})`, { namespace: 'py-agent' });
      expect(r.success, file).toBe(false);
      expect(r.error_type, file).toBe('PermissionError');
      expect(JSON.stringify(r), file).not.toContain('TOP-SECRET');
    }
  });

  it('two agents alternating on the Python processes each read only their own namespace, whatever the other planted', async () => {
    for (const [ns, text] of [['py-alice', 'alice-data'], ['py-bob', 'bob-data']] as const) {
      mkdirSync(path.join(h.workspace.root, ns), { recursive: true });
      writeFileSync(path.join(h.workspace.root, ns, 'mine.txt'), text);
    }
    for (let round = 0; round < 2; round++) {
      // Bob plants what he can reach: the sandbox function, the module it came from, a builtin.
      const planted = await h.run(
        "import builtins\nread_file.__globals__['host_sync'] = lambda *a: 'planted'\nbuiltins.read_file = lambda p: 'planted'\nresult = read_file('mine.txt')",
        { namespace: 'py-bob' },
      );
      // Whatever it did within Bob's own call (his namespace is fresh each call), it never shows Alice's data.
      expect(JSON.stringify(planted)).not.toContain('alice-data');
      const alice = await h.run("result = [read_file('mine.txt'), read_file('./mine.txt')]", { namespace: 'py-alice' });
      expect(alice.result).toEqual(['alice-data', 'alice-data']);
      const bob = await h.run("result = read_file('mine.txt')", { namespace: 'py-bob' });
      expect(bob.result).toBe('bob-data');
      const climb = await h.run("result = read_file('../py-alice/mine.txt')", { namespace: 'py-bob' });
      expect(climb.error_type).toBe('PermissionError');
      expect(JSON.stringify(climb)).not.toContain('alice-data');
    }
  });

  it('two agents alternating on the Python process with same-named large files each get their own, cached or not', { timeout: 60_000 }, async () => {
    // Large enough for the worker's cache of decoded files (read-cache.ts), which keeps a version
    // only once it is over 3 s old: written first, then read after that.
    const big = (fill: string): string => fill.repeat(100 * 1024);
    for (const [ns, fill] of [['py-alice', 'A'], ['py-bob', 'B']] as const) {
      mkdirSync(path.join(h.workspace.root, ns), { recursive: true });
      writeFileSync(path.join(h.workspace.root, ns, 'large.txt'), big(fill));
    }
    await new Promise((resolve) => setTimeout(resolve, 3_200));
    for (let round = 0; round < 2; round++) {
      const alice = await h.run("t = read_file('large.txt')\nresult = [len(t), t[:3]]", { namespace: 'py-alice' });
      expect(alice.result).toEqual([100 * 1024, 'AAA']);
      const bob = await h.run("t = read_file('large.txt')\nresult = [len(t), t[:3]]", { namespace: 'py-bob' });
      expect(bob.result).toEqual([100 * 1024, 'BBB']);
    }
    const climb = await h.run("result = read_file('../py-alice/large.txt')[:3]", { namespace: 'py-bob' });
    expect(climb.error_type).toBe('PermissionError');
    // Alice's file rewritten in place to the same size: she reads the new version, never a stale one.
    writeFileSync(path.join(h.workspace.root, 'py-alice', 'large.txt'), big('C'));
    const fresh = await h.run("result = read_file('large.txt')[:3]", { namespace: 'py-alice' });
    expect(fresh.result).toBe('CCC');
  });

  it('cannot be written', async () => {
    for (const code of [
      (m: string) => `open(${JSON.stringify(m)}, 'w').write('x')`,
      (m: string) => `import pathlib\npathlib.Path(${JSON.stringify(m)}).write_text('x')`,
      (m: string) => `import os\nos.close(os.open(${JSON.stringify(m)}, os.O_CREAT | os.O_WRONLY))`,
      (m: string) => `write_file(${JSON.stringify(m)}, 'x')`,
      (m: string) => `write_file('../../../../../../../..' + ${JSON.stringify(m)}, 'x')`,
    ]) {
      const { result, created } = await attempt(code);
      expect(result.success).toBe(false);
      expect(created).toBe(false);
    }
  });

  it("cannot create or truncate files of its own interpreter's standard library through os.open", async () => {
    // The audit hook let os.open of a path under /lib through whenever the flags were not
    // O_WRONLY or O_RDWR: O_CREAT planted a module, O_TRUNC emptied one.
    const code = [
      'import os',
      "target = next('/lib/' + n for n in sorted(os.listdir('/lib/')) if os.path.isfile('/lib/' + n))",
      'before = os.stat(target).st_size',
      'opened = []',
      'for flags in (os.O_CREAT, os.O_TRUNC, os.O_RDONLY | os.O_CREAT | os.O_TRUNC, os.O_CREAT | os.O_EXCL):',
      "    for path in (target, '/lib/cem_planted.py'):",
      '        try:',
      '            os.close(os.open(path, flags))',
      '            opened.append([path, flags])',
      '        except PermissionError:',
      '            pass',
      '        except OSError as e:',
      '            opened.append([path, flags, type(e).__name__])',
      "result = [opened, os.stat(target).st_size == before, os.path.exists('/lib/cem_planted.py')]",
    ].join('\n');
    const r = await h.run(code);
    expect(r.result, JSON.stringify(r)).toEqual([[], true, false]);
  });

  it('is not reached through the loader of compiled extension modules', async () => {
    const secretFile = path.join(h.outside, 'lib.so');
    writeFileSync(secretFile, 'NOT-WASM-SECRET');
    const r = await h.run(
      `import sys\nm = sys.modules['importlib.machinery']\nspec = m.ModuleSpec('x', None, origin=${JSON.stringify(secretFile)})\nresult = str(m.ExtensionFileLoader('x', ${JSON.stringify(secretFile)}).create_module(spec))`,
    );
    expect(r.success).toBe(false);
    expect(JSON.stringify(r)).not.toMatch(/NOT-WASM|4e 4f 54|expected magic/);
  });
});

describe('processes', () => {
  it('cannot be started through os, subprocess or a __subclasses__ walk', async () => {
    for (const code of [
      (m: string) => `import os\nos.system('touch ${m}')`,
      (m: string) => `import sys\nsys.modules['os'].system('touch ${m}')`,
      (m: string) => `import sys\nsys.modules['subprocess'].run(['touch', '${m}'])`,
      (m: string) => `import os\nos.posix_spawn('/usr/bin/touch', ['touch', '${m}'], {})`,
      (m: string) =>
        `for c in ().__class__.__base__.__subclasses__():\n    if c.__name__ == '_wrap_close':\n        c.__init__.__globals__['system']('touch ${m}')`,
      (m: string) => `import subprocess\nsubprocess.run(['touch', '${m}'])`,
    ]) {
      const { result, created } = await attempt(code);
      expect(result.success, code('m')).toBe(false);
      expect(created, code('m')).toBe(false);
    }
  });
});

describe("Pyodide's JavaScript bridge", () => {
  it('cannot be imported', async () => {
    for (const code of ['import js', 'import pyodide_js', 'import pyodide', 'from pyodide.ffi import to_js', 'import _pyodide_core', 'from pyodide.code import run_js', 'import micropip']) {
      const r = await h.run(code);
      expect(r.success, code).toBe(false);
      expect(r.error_type, code).toBe('ImportError');
    }
  });

  it('gives no way to run JavaScript even with JavaScript objects in hand', async () => {
    for (const code of [
      (m: string) => `import sys\no = sys.modules['pyodide.ffi'].to_js({})\no.constructor.constructor(${JSON.stringify(jsPayload(m))})()`,
      (m: string) => `import sys\nf = sys.modules['pyodide.webloop'].scheduleCallback\nf.constructor(${JSON.stringify(jsPayload(m))})()`,
      (m: string) => `import sys\nsys.modules['pyodide.code'].run_js(${JSON.stringify(jsPayload(m))})`,
      (m: string) => `import sys\nf = sys.modules['pyodide.webloop'].scheduleCallback\nf.call.constructor.constructor(${JSON.stringify(jsPayload(m))})()`,
      (m: string) => `b = read_file.__globals__['Bridge']\nb.sync.constructor(${JSON.stringify(jsPayload(m))})()`,
      (m: string) => `import sys\np = sys.modules['pyodide.ffi'].to_js([1])\ntype(p).__init__\np.constructor.from_([1]).constructor.constructor(${JSON.stringify(jsPayload(m))})()`,
    ]) {
      const { result, created } = await attempt(code);
      expect(result.success, code('m')).toBe(false);
      expect(created, code('m')).toBe(false);
    }
  });

  it('exposes no JavaScript object a call could leave data in', async () => {
    const r = await h.run("import sys\nsys.modules['pyodide.webloop'].scheduleCallback.stash = 'x'");
    expect(r.success).toBe(false);
    const bridge = await h.run("read_file.__globals__['Bridge'].sync.stash = 'x'");
    expect(bridge.success).toBe(false);
  });

  it('only lets the sandbox API reach the host', async () => {
    const r = await h.run("b = read_file.__globals__['Bridge']\nresult = b.sync('shutdown', '[]')");
    expect(r.success, r.error).toBe(true);
    expect(String(r.result)).toContain('unknown host call');
  });
});

describe('native code and interpreter internals', () => {
  it('cannot load ctypes or the C test modules, by import or through the import machinery', async () => {
    for (const code of [
      'import ctypes',
      "import sys\nbi = [c for c in object.__subclasses__() if c.__name__ == 'BuiltinImporter'][0]\nm = bi.load_module('_ctypes')\nresult = m.dlopen",
      "import sys\nbi = [c for c in object.__subclasses__() if c.__name__ == 'BuiltinImporter'][0]\nm = bi.load_module('_testcapi')\nresult = m.set_nomemory",
      "import sys\nimp = sys.modules['_imp']\nspec = sys.modules['importlib.machinery'].ModuleSpec('_testinternalcapi', None, origin='built-in')\nresult = imp.create_builtin(spec).get_recursion_depth()",
    ]) {
      const r = await h.run(code);
      expect(r.success, code).toBe(false);
    }
  });

  it('refuses code-object forgery, tracing, gc walks and new audit hooks', async () => {
    for (const code of [
      'def f(): pass\nresult = f.__code__.replace(co_consts=(1,))',
      "import sys\nsys.settrace(lambda *a: None)",
      "import sys\nresult = len(sys.modules['gc'].get_objects())",
      'import gc',
      'import json\njson.dumps.__kwdefaults__ = {}',
      'import json\njson.dumps.__code__ = (lambda: 1).__code__',
    ]) {
      const r = await h.run(code);
      expect(r.success, code).toBe(false);
    }
    // User code's sys has no addaudithook; the real one (reachable through a stdlib module)
    // is refused by the audit hook: a hook that would fail every later exec is never installed.
    const hidden = await h.run("import sys\nsys.addaudithook(lambda event, args: None)");
    expect(hidden.error_type).toBe('AttributeError');
    await h.run("import collections\ncollections._sys.addaudithook(lambda event, args: 1 / 0 if event == 'exec' else None)");
    expect((await h.run('result = exec("x = 1") or 1')).result).toBe(1);
  });
});

describe('the network', () => {
  it('cannot be reached with sockets, even through sys.modules', async () => {
    for (const code of [
      `import socket\nsocket.create_connection(('127.0.0.1', ${port}))`,
      `import sys\nsys.modules['socket'].create_connection(('127.0.0.1', ${port}))`,
      `import sys\ns = sys.modules['_socket'].socket()\ns.connect(('127.0.0.1', ${port}))`,
      `import urllib.request\nurllib.request.urlopen('http://127.0.0.1:${port}/')`,
      `result = fetch('http://127.0.0.1:${port}/')`,
    ]) {
      const r = await h.run(code);
      expect(r.success, code).toBe(false);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(connections).toBe(0);
  });
});

describe('after every attempt', () => {
  it('the daemon and both languages still serve calls', async () => {
    const py = await h.run('result = sum(range(10))');
    expect(py.result).toBe(45);
    const js = await h.run('return [1, 2].map((x) => x * 2)', { language: 'javascript' });
    expect(js.result).toEqual([2, 4]);
    expect(readFileSync(path.join(h.outside, 'secret.txt'), 'utf8')).toBe('TOP-SECRET-CONTENT');
  });
});
