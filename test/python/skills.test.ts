// Python skills through the composition root: a skill that CPython cannot parse is refused with
// its line, and the seed's `exec(load_skill(name))` runs a saved one.

import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Coordinator } from '../../src/daemon.js';
import { startCoordinator } from '../../src/daemon.js';
import { silentLogger } from '../../src/util/logger.js';
import { testConfig } from '../fixtures/config.js';
import { PYTHON_START_MS } from './helpers.js';

let coordinator: Coordinator;
const identity = () => ({ agent: 'a', sessionId: 's', workspaceNamespace: '', permissions: coordinator.config.defaultPermissions });

beforeAll(async () => {
  coordinator = await startCoordinator(testConfig({ sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 1 } }), silentLogger(), { watch: false });
}, PYTHON_START_MS);

afterAll(async () => {
  await coordinator?.close();
});

it('refuses a Python skill that does not parse, with the line of the error', async () => {
  await expect(coordinator.skills.save({ name: 'broken_py', code: 'def f(x):\n    return x +\n', language: 'python' })).rejects.toMatchObject({
    code: 'SYNTAX_ERROR',
    message: expect.stringMatching(/line 2/),
  });
}, PYTHON_START_MS);

it("saves the seed's filter_high_risk in Python and runs it with exec(load_skill(name))", async () => {
  await coordinator.skills.save({
    name: 'filter_high_risk',
    code: 'def filter_high_risk(items, threshold=7):\n    return [i for i in items if i["risk_score"] >= threshold]\n',
    language: 'python',
    description: "The seed's example",
  });
  const r = await coordinator.executor.execute(
    { code: 'exec(load_skill("filter_high_risk"))\nresult = filter_high_risk([{"risk_score": 9}, {"risk_score": 3}])', language: 'python', timeoutSeconds: 60, memoryMb: 256 },
    identity(),
  );
  expect(r).toMatchObject({ success: true, result: [{ risk_score: 9 }] });
}, PYTHON_START_MS);

it('Python code saves a Python skill with one Python process: its own interpreter parses it, nothing waits for another', async () => {
  const run = (code: string) => coordinator.executor.execute({ code, language: 'python', timeoutSeconds: 30, memoryMb: 256 }, identity());
  const saved = await run('result = save_skill("triple", "def triple(x):\\n    return 3 * x\\n", "triples")');
  expect(saved).toMatchObject({ success: true, result: "Skill 'triple' saved successfully" });
  const used = await run('exec(load_skill("triple"))\nresult = triple(14)');
  expect(used).toMatchObject({ success: true, result: 42 });
  const broken = await run('save_skill("bad_py", "def f(:\\n    pass\\n")');
  expect(broken).toMatchObject({ success: false, error_type: 'SyntaxError', error: expect.stringMatching(/bad_py.*not saved.*line 1/) });
  await expect(coordinator.skills.load('bad_py')).rejects.toMatchObject({ code: 'SKILL_NOT_FOUND' });
}, PYTHON_START_MS);
