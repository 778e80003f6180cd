// Nothing a guest wrote runs outside its call's limits (issue 33, item 4). A Python call's clean-up
// runs guest finalizers after its answer: it keeps the call's memory limit, the process is not free
// for the same agent until it is clean, and another agent never waits for it: its interpreter is
// replaced instead of cleaned. Two agents on one real Python sandbox process.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PYTHON_START_MS, startPython } from './helpers.js';
import type { PythonHarness } from './helpers.js';

/** An object whose finalizer runs in the clean-up after the answer (a cycle: only the collector frees it). */
function finalizer(body: string[]): string {
  return ['import json', 'class Late:', '    def __del__(self, _json=json):', ...body.map((l) => `        ${l}`), 'late = Late()', 'late.me = late', 'del late'].join('\n');
}

describe('a Python clean-up stays inside its call', () => {
  let py: PythonHarness;
  /** How long alpha's first call took (it waited for an interpreter to start or be swapped in), ms. */
  let startMs = 0;
  beforeAll(async () => {
    // One process, its standby kept warm from the start (as sandbox.pythonWarm does).
    py = await startPython({ sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 1, pythonWarm: true } });
    const started = performance.now();
    const first = await py.run('result = 1', { namespace: 'alpha' });
    expect(first.result).toBe(1);
    startMs = performance.now() - started;
  }, PYTHON_START_MS);
  afterAll(async () => {
    await py?.close();
  });

  it("alpha's slow finalizers do not make beta's trivial call wait: the interpreter is replaced, not cleaned", async () => {
    // Alpha's call first waits until the next standby is surely warm (three times what alpha's
    // first call took here, at least 10 s), then leaves a finalizer that spins for 4 s in the
    // clean-up, after the answer.
    const slow = [`sleep(${Math.round(Math.max(10_000, 3 * startMs))})`, finalizer(['import time', 'end = time.monotonic() + 4', 'while time.monotonic() < end:', '    pass']), "result = 'answered'"].join('\n');
    const a = await py.run(slow, { namespace: 'alpha' });
    expect(a.result).toBe('answered');
    const started = performance.now();
    const b = await py.run('result = 2', { namespace: 'beta' });
    const waited = performance.now() - started;
    expect(b.result).toBe(2);
    // Before, beta's recycle waited for alpha's clean-up (4 s); a swap to the standby takes milliseconds.
    expect(waited).toBeLessThan(2_500);
  }, PYTHON_START_MS);

  it("a finalizer's allocation is held to its call's memory_mb", async () => {
    const big = finalizer(['try:', '    b = bytearray(200 * 1024 * 1024)', '    b[-1] = 1', "    _json.dumps.big = 'allocated'", 'except MemoryError:', "    _json.dumps.big = 'refused'"]);
    expect((await py.run(`${big}\nresult = 'answered'`, { namespace: 'gamma', memoryMb: 64 })).result).toBe('answered');
    // The same agent's next call runs on the same interpreter, once it is clean: the mark is there.
    const seen = await py.run("import json\nresult = getattr(json.dumps, 'big', None)", { namespace: 'gamma', memoryMb: 64 });
    expect(seen.result).toBe('refused');
  }, PYTHON_START_MS);
});
