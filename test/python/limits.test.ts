// Limits on Python calls: runaway loops, sleeps and hung awaits end as TimeoutError; memory bombs
// end as MemoryLimitError; and after each, the next call succeeds and the daemon serves on.

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

/** The next call works; a replaced worker may first have to load Pyodide again. */
async function expectNextCallWorks(): Promise<void> {
  const r = await h.run('result = sum(x * x for x in range(100))', { timeoutSeconds: PYTHON_START_MS / 1000 - 10 });
  expect(r.success, `${r.error_type}: ${r.error}`).toBe(true);
  expect(r.result).toBe(328350);
}

function pythonPids(): (number | undefined)[] {
  return h.executor.processes().filter((p) => p.kind === 'python').map((p) => p.pid);
}

describe('timeouts', () => {
  it('stops a CPU loop with TimeoutError and keeps the sandbox process', async () => {
    const before = pythonPids();
    const r = await h.run('while True:\n    pass', { timeoutSeconds: 1 });
    expect(r.success).toBe(false);
    expect(r.error_type).toBe('TimeoutError');
    await expectNextCallWorks();
    // The interrupted process is still there (on a loaded machine the on-demand pool may also have
    // started a second one for the next call while the first finished its clean-up).
    expect(pythonPids()).toEqual(expect.arrayContaining(before));
  }, PYTHON_START_MS);

  it('stops time.sleep and a hung await', async () => {
    const slept = await h.run('import time\ntime.sleep(60)', { timeoutSeconds: 1 });
    expect(slept.error_type).toBe('TimeoutError');
    const hung = await h.run('result = await tools.demo.slow()', { timeoutSeconds: 1 });
    expect(hung.error_type).toBe('TimeoutError');
    await expectNextCallWorks();
  }, PYTHON_START_MS);

  it('stops code that swallows the interrupt', async () => {
    const r = await h.run('while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass', { timeoutSeconds: 1 });
    expect(r.success).toBe(false);
    expect(r.error_type).toBe('TimeoutError');
    await expectNextCallWorks();
  }, PYTHON_START_MS);
});

describe('memory', () => {
  it('fails allocations past memory_mb (or past 32-bit WebAssembly) with MemoryLimitError', async () => {
    for (const bomb of ["x = 'a' * 10**10", "x = 'a' * 2**30", 'x = [0] * 10**10', 'x = bytearray(1500 * 1024 * 1024)']) {
      const r = await h.run(bomb, { memoryMb: 256 });
      expect(r.success, bomb).toBe(false);
      expect(r.error_type, bomb).toBe('MemoryLimitError');
    }
    await expectNextCallWorks();
  }, PYTHON_START_MS);

  it('fails a growing list past memory_mb with MemoryLimitError', async () => {
    const r = await h.run('chunks = []\nwhile True:\n    chunks.append(bytearray(4 * 1024 * 1024))', { memoryMb: 128, timeoutSeconds: 60 });
    expect(r.success).toBe(false);
    expect(r.error_type).toBe('MemoryLimitError');
    await expectNextCallWorks();
  }, PYTHON_START_MS);

  it('fails a big list of small objects past memory_mb with MemoryLimitError', async () => {
    const r = await h.run('x = [str(i) for i in range(10**9)]', { memoryMb: 96, timeoutSeconds: 120 });
    expect(r.success).toBe(false);
    expect(r.error_type).toBe('MemoryLimitError');
    await expectNextCallWorks();
  }, PYTHON_START_MS);
});

describe('other runaway shapes', () => {
  it('reports deep recursion as RecursionError', async () => {
    const r = await h.run('def f(n):\n    return f(n + 1)\nf(0)');
    expect(r.error_type).toBe('RecursionError');
    await expectNextCallWorks();
  });

  it('survives a very deep native recursion: it completes on the 64 MB worker stack or fails cleanly', async () => {
    const r = await h.run('l = []\nfor _ in range(200000):\n    l = [l]\nresult = len(repr(l))');
    if (r.success) expect(r.result).toBe(400002); // 200,001 nested lists, two brackets each
    else expect(['RecursionError', 'SandboxCrashError', 'MemoryLimitError']).toContain(r.error_type);
    await expectNextCallWorks();
  }, PYTHON_START_MS);

  it('cuts a flood of output to the budget', async () => {
    const r = await h.run('for i in range(100000):\n    print(i)\nresult = "done"');
    expect(r.success).toBe(true);
    expect(r.truncated).toBe(true);
    await expectNextCallWorks();
  });

  it('leaves the daemon serving JavaScript too', async () => {
    const js = await h.run('return 6 * 7', { language: 'javascript' });
    expect(js.result).toBe(42);
  });
});
