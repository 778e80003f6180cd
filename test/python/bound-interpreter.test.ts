// Attacks on the one path of Python calls (every call over its thread's link, issue 31): a call of
// another agent that reaches an interpreter bound to an agent (a coordinator bug, or a forged
// frame) is refused by the interpreter itself, which is then replaced; a frame for another call
// gets no answer in its name; and the process keeps serving both agents afterwards.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PYTHON_START_MS } from './helpers.js';
import { errorOf, PythonProcess, valueOf } from './process-driver.js';

describe("one interpreter, one agent, enforced on the interpreter's side too", () => {
  let proc: PythonProcess;
  beforeAll(async () => {
    proc = new PythonProcess();
    await proc.ready;
  }, PYTHON_START_MS);
  afterAll(() => proc?.close());

  it("refuses another agent's call sent to an interpreter bound to alpha, and retires that interpreter", async () => {
    expect(valueOf(await proc.run("import json\njson.dumps.mark = 'alpha'\nresult = 'planted'", { agent: 'alpha' }))).toBe('planted');
    // Beta's call reaches alpha's interpreter with no recycle first.
    const stolen = await proc.run("import json\nresult = getattr(json.dumps, 'mark', None)", { agent: 'beta', asIs: true });
    expect(errorOf(stolen)).toMatchObject({ type: 'SandboxCrashError', message: expect.stringMatching(/served another agent/) });
    // The interpreter was replaced: whoever comes next, alpha included, finds nothing of it.
    expect(valueOf(await proc.run("import json\nresult = getattr(json.dumps, 'mark', None)", { agent: 'alpha', asIs: true }))).toBeNull();
    expect(proc.alive).toBe(true);
  }, PYTHON_START_MS);

  it('serves both agents in turn afterwards, each on a pristine interpreter', async () => {
    expect(valueOf(await proc.run('result = 6 * 7', { agent: 'beta' }))).toBe(42);
    expect(valueOf(await proc.run("import json\nresult = getattr(json.dumps, 'mark', None)", { agent: 'alpha' }))).toBeNull();
  }, PYTHON_START_MS);
});
