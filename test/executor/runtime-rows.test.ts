// A third language is one new row (src/executor/runtimes.ts) and its worker: this test build
// registers a fake "echo" runtime, whose worker thread answers with its input, beside the real
// JavaScript row, and runs calls through the real executor, pool, sandbox process and piscina
// thread, with no other file knowing of it.

import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createExecutor, createHostApi } from '../../src/executor/index.js';
import type { CallIdentity, Language, PooledExecutor } from '../../src/executor/index.js';
import { RUNTIMES, runtimeFor } from '../../src/executor/runtimes.js';
import type { RuntimeRow } from '../../src/executor/runtimes.js';
import { silentLogger } from '../../src/util/logger.js';
import { Workspace } from '../../src/workspace/index.js';
import { FULL_PERMISSIONS, testConfig } from '../fixtures/config.js';

const ECHO_WORKER = fileURLToPath(new URL('../fixtures/executor/echo-worker.mjs', import.meta.url));

/** The whole of the third runtime: one row. On demand, like Python, so its start is the row's too. */
const ECHO_RUNTIME: RuntimeRow = {
  languages: ['echo'],
  label: 'Echo',
  worker: ECHO_WORKER,
  // A runtime's supervision is its own too; a fresh realm per call, like JavaScript's.
  strategy: 'js/strategy',
  process: { kind: 'echo', stackSizeMb: 4, dispatch: 'hardened', startupTimeoutMs: 30_000 },
  start: 'background',
  toolNamesUpFront: false,
  // A runtime's pool failure is logged under a code of the closed LOG_CODES (src/util/errors.ts); the test build borrows one.
  poolFailedCode: 'JS_POOL_FAILED',
  pool: (config) => ({ process: { threads: 1, maxMemoryMb: config.limits.maxMemoryMb, memoryPollMs: 20 }, count: 1, slots: 1, lazy: true }),
  singleCall: () => ({ sandbox: {}, tuning: {} }),
  aliases: {},
  extensions: { '.echo': 'echo' },
  skills: { codeFiles: { echo: 'index.echo' }, format: 'python-source', usage: (name) => [`echo ${name}`], importsOnly: 'echo skills import nothing' },
};

const config = testConfig({ sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 0 } });
const workspace = new Workspace({ root: config.workspaceDir, maxFileBytes: config.limits.maxFileBytes });
const agent: CallIdentity = { agent: 'a', sessionId: 's-a', workspaceNamespace: 'agent-a', permissions: FULL_PERMISSIONS };
let executor: PooledExecutor;

beforeAll(async () => {
  executor = await createExecutor({
    config,
    hostApi: createHostApi({ config, workspace, logger: silentLogger() }),
    logger: silentLogger(),
    workspace,
    runtimes: [...RUNTIMES, ECHO_RUNTIME],
  });
});

afterAll(async () => {
  await executor.close();
});

it('runs a call in the third language through the real pool and executor, beside JavaScript', async () => {
  // On demand: no echo process until a call needs one.
  expect(executor.processes().map((p) => p.kind)).toEqual(['js']);
  const code = 'print("this is not JavaScript") {';
  const r = await executor.execute({ code, language: 'echo' as Language, timeoutSeconds: 10, memoryMb: 64 }, agent);
  expect(r).toMatchObject({ success: true, result: { echo: code, language: 'echo', agent: 'a' }, output: [`echo: ${code.length} characters`] });
  expect((r.result as { threadId: number }).threadId).toBeGreaterThan(0);
  expect(executor.processes().map((p) => p.kind).sort()).toEqual(['echo', 'js']);
  // JavaScript still runs in its own pool, with its own preprocessing.
  const js = await executor.execute({ code: 'const n: number = 6; return n * 7', language: 'typescript', timeoutSeconds: 10, memoryMb: 64 }, agent);
  expect(js).toMatchObject({ success: true, result: 42 });
  const health = executor.health() as unknown as Record<string, { processes?: number; ready?: number }>;
  expect(health.echo).toMatchObject({ processes: 1, ready: 1 });
  expect(executor.stats().processes).toBe(2);
});

it('names the third language among the valid ones, and disables it when its row plans no process', async () => {
  const r = await executor.execute({ code: 'x', language: 'cobol' as Language, timeoutSeconds: 10, memoryMb: 64 }, agent);
  expect(r).toMatchObject({ success: false, error_type: 'ValidationError' });
  expect(r.error).toBe('language must be "javascript", "typescript", "python" or "echo", got "cobol"');
  const off = await executor.execute({ code: 'x', language: 'python', timeoutSeconds: 10, memoryMb: 64 }, agent);
  expect(off.error).toBe('python is not enabled on this daemon (sandbox.pythonProcesses is 0); use javascript, typescript or echo');
  expect(runtimeFor('echo')).toBeUndefined();
});

it("takes its dispatch policy from the row: a 'bound' runtime's thread never serves a second agent unless replaced", async () => {
  const bound: RuntimeRow = { ...ECHO_RUNTIME, languages: ['echo-bound'], start: 'awaited', strategy: 'python/strategy', process: { ...ECHO_RUNTIME.process, kind: 'echo-bound', dispatch: 'bound' } };
  const boundConfig = testConfig({ sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 0 } });
  const own = await createExecutor({ config: boundConfig, hostApi: createHostApi({ config: boundConfig, workspace, logger: silentLogger() }), logger: silentLogger(), runtimes: [RUNTIMES[0] as RuntimeRow, bound] });
  try {
    const threadOf = async (who: string): Promise<number> => {
      const r = await own.execute({ code: who, language: 'echo-bound' as Language, timeoutSeconds: 20, memoryMb: 64 }, { ...agent, agent: who, sessionId: `s-${who}` });
      expect(r).toMatchObject({ success: true, result: { echo: who, agent: who } });
      return (r.result as { threadId: number }).threadId;
    };
    const first = await threadOf('a');
    expect(await threadOf('a')).toBe(first);
    // One process: agent b's call waits for it to be recycled (a fresh thread), never runs on a's.
    const second = await threadOf('b');
    expect(second).not.toBe(first);
    expect(await threadOf('a')).not.toBe(second);
  } finally {
    await own.close();
  }
});

it("reuses a 'hardened' runtime's thread across agents (a fresh realm per call is the worker's own)", async () => {
  const first = await executor.execute({ code: 'a', language: 'echo' as Language, timeoutSeconds: 10, memoryMb: 64 }, agent);
  const other = await executor.execute({ code: 'b', language: 'echo' as Language, timeoutSeconds: 10, memoryMb: 64 }, { ...agent, agent: 'b', sessionId: 's-b' });
  expect(other).toMatchObject({ success: true, result: { agent: 'b' } });
  expect((other.result as { threadId: number }).threadId).toBe((first.result as { threadId: number }).threadId);
});
