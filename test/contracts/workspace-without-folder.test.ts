// A workspace with no folder behind it serves execute_code: the coordinator grants the worker no
// read of its own (there is no local folder to grant), so every read_file, write_file and
// list_files goes through the WorkspaceStore interface, and the results are the same.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExecutor, createHostApi } from '../../src/executor/index.js';
import type { CallIdentity, HostApi, PooledExecutor } from '../../src/executor/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { FULL_PERMISSIONS, testConfig } from '../fixtures/config.js';
import { MemoryWorkspace } from './memory-workspace.js';

const identity = (agent: string): CallIdentity => ({ agent, sessionId: `s-${agent}`, workspaceNamespace: agent, permissions: FULL_PERMISSIONS });

describe('execute_code on a workspace without a folder', () => {
  const config = testConfig();
  const workspace = new MemoryWorkspace({ maxFileBytes: config.limits.maxFileBytes });
  const reached: string[] = [];
  let host: HostApi;
  let executor: PooledExecutor;

  beforeAll(async () => {
    const inner = createHostApi({ config, workspace, logger: silentLogger() });
    host = { ...inner, call: (method, args, ctx) => (reached.push(method), inner.call(method, args, ctx)) };
    executor = await createExecutor({ config: { ...config, sandbox: { ...config.sandbox, processes: 1, threadsPerProcess: 1 } }, hostApi: host, logger: silentLogger(), workspace });
  }, 60_000);

  afterAll(async () => {
    await executor?.close();
  });

  const run = (agent: string, code: string) => executor.execute({ code, language: 'javascript', timeoutSeconds: 10, memoryMb: 200 }, identity(agent));

  it('grants the worker no read of its own', async () => {
    expect(workspace.namespace('alice').localFolder).toBeUndefined();
    expect(await host.readGrant?.(identity('alice'))).toBeUndefined();
  });

  it('writes, reads and lists through the interface, each agent in its own namespace', async () => {
    const wrote = await run('alice', "write_file('notes/a.json', JSON.stringify({n: 1})); return [JSON.parse(read_file('notes/a.json')), list_files()]");
    expect(wrote.success, wrote.error).toBe(true);
    expect(wrote.result).toEqual([{ n: 1 }, ['notes/a.json']]);
    expect(reached.filter((m) => m === 'read_file')).toHaveLength(1);
    expect((await workspace.namespace('alice').readFile('notes/a.json')).content).toBe('{"n":1}');
    const other = await run('bob', "return [list_files(), (() => { try { return read_file('../alice/notes/a.json') } catch (e) { return e.message } })()]");
    expect(other.result).toEqual([[], expect.stringMatching(/leads outside the workspace/)]);
  });
});
