// What one Python call leaves behind never reaches the next: variables, module attributes,
// imports, builtins, class attributes, interpreter settings, random state, decimal contexts,
// pending tasks and callbacks, finalizers: the same agent's hygiene. Another agent gets a pristine
// interpreter instead (recycle.test.ts).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PYTHON_START_MS, startPython } from './helpers.js';
import type { PythonHarness } from './helpers.js';

let h: PythonHarness;
beforeAll(async () => {
  h = await startPython();
}, PYTHON_START_MS);
afterAll(async () => {
  await h?.close();
});

async function value(code: string, namespace = ''): Promise<unknown> {
  const r = await h.run(code, { namespace });
  expect(r.success, `${r.error_type}: ${r.error}\n${r.traceback ?? ''}`).toBe(true);
  return r.result;
}

describe('a fresh namespace per call', () => {
  it('does not keep variables, functions or imports bound by a call', async () => {
    await value('secret = 42\ndef helper(): return 1\nimport fnmatch as fm');
    expect(await value("[name in globals() for name in ('secret', 'helper', 'fm')]")).toEqual([false, false, false]);
  });

  it('gives every call its own builtins', async () => {
    await value("__builtins__['len'] = lambda x: -1\nimport builtins\nbuiltins.sorted = None\nbuiltins.extra = 1");
    expect(await value("import builtins\n[len([1, 2]), sorted([2, 1]), hasattr(builtins, 'extra')]")).toEqual([2, [1, 2], false]);
  });
});

describe('shared modules', () => {
  it('undoes attribute assignments and deletions on modules', async () => {
    await value('import json, math\njson.x = 1\njson.dumps = None\ndel math.pi\nvars(re)["added"] = True');
    expect(await value("import json, math\n[hasattr(json, 'x'), json.dumps([1]), math.pi > 3, hasattr(re, 'added')]")).toEqual([false, '[1]', true, false]);
  });

  it('undoes changes to the classes of the preloaded modules', async () => {
    await value("json.JSONDecoder.decode = lambda self, s: 'hacked'\ncollections.UserDict.extra = 1");
    expect(await value("[json.loads('[1]'), hasattr(collections.UserDict, 'extra')]")).toEqual([[1], false]);
  });

  it('drops modules a call imported, so the next import runs afresh', async () => {
    await value('import colorsys\ncolorsys.marker = True');
    expect(await value("import sys\nbefore = 'colorsys' in sys.modules\nimport colorsys\n[before, hasattr(colorsys, 'marker')]")).toEqual([false, false]);
  });

  it('puts back sys.modules entries a call replaced or removed', async () => {
    await value("import sys\nsys.modules['json'] = None\ndel sys.modules['re']");
    expect(await value("import sys, json, re\n[json.dumps({'a': 1}), re.match('a', 'a') is not None]")).toEqual(['{"a": 1}', true]);
  });
});

describe('interpreter state', () => {
  it('resets recursion limit, decimal context and random state', async () => {
    await value("import sys, decimal, random\nsys.setrecursionlimit(60)\ndecimal.getcontext().prec = 3\nrandom.seed(1)");
    const r = (await value(
      "import sys, decimal, random\nfirst = random.Random(1).random()\n[sys.getrecursionlimit() > 60, decimal.getcontext().prec, random.random() != first]",
    )) as unknown[];
    expect(r).toEqual([true, 28, true]);
  });

  it('never runs callbacks or tasks a call left pending', async () => {
    await value(
      [
        'import asyncio',
        'loop = asyncio.get_event_loop()',
        "loop.call_later(0.05, lambda: print('late callback'))",
        'async def forever():',
        '    while True:',
        "        print('leftover task')",
        '        await asyncio.sleep(0.01)',
        'asyncio.ensure_future(forever())',
        'await asyncio.sleep(0)',
      ].join('\n'),
    );
    const r = await h.run('import asyncio\nawait asyncio.sleep(0.3)\nresult = "waited"');
    expect(r.result).toBe('waited');
    expect(r.output).toEqual([]);
  });

  it('runs finalizers of a call before the next call, and undoes what they change', async () => {
    await value('class Late:\n    def __del__(self):\n        json.from_finalizer = True\nx = Late()\nx.cycle = x');
    expect(await value("hasattr(json, 'from_finalizer')")).toBe(false);
  });
});

describe("the sandbox's own API", () => {
  it('is intact in the next call even when a call rewired it through introspection', async () => {
    await value("b = read_file.__globals__['Bridge']\nb.sync = lambda method, args: 'shijacked'\nread_file.__globals__['host_sync'] = None");
    expect(await value("write_file('api.txt', 'intact')\nread_file('api.txt')")).toBe('intact');
  });
});
