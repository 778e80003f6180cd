// TypeScript large enough to grow the stripper's WebAssembly memory, stripped on a sandbox thread
// that ran SES lockdown. Node 20's ArrayBuffer has no `detached`; SES added one that said false for
// the buffer memory growth had detached, and amaro's glue then read through a dead DataView:
// "Cannot perform DataView.prototype.getInt32 on a detached ArrayBuffer" for every such call
// (workers/js/standard-detached.ts defines the getter before SES loads).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/index.js';
import type { Config } from '../../src/config/index.js';
import { createExecutor, createHostApi } from '../../src/executor/index.js';
import type { CallIdentity, PooledExecutor } from '../../src/executor/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { Workspace } from '../../src/workspace/index.js';

const root = mkdtempSync(path.join(tmpdir(), 'ts-memory-'));
const identity: CallIdentity = { agent: 'a', sessionId: 's', workspaceNamespace: 'a', permissions: { workspace: 'read-write', skills: 'read-write', tools: ['*'], net: [] } };
let executor: PooledExecutor;

beforeAll(async () => {
  const base = defaultConfig(root);
  const config: Config = { ...base, sandbox: { ...base.sandbox, processes: 1, threadsPerProcess: 1, pythonProcesses: 0 }, logLevel: 'silent' };
  const workspace = new Workspace({ root: config.workspaceDir, maxFileBytes: config.limits.maxFileBytes });
  executor = await createExecutor({ config, hostApi: createHostApi({ config, workspace, logger: silentLogger(), toolNames: () => [] }), logger: silentLogger(), workspace });
});

afterAll(async () => {
  await executor?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("TypeScript that grows the stripper's memory", () => {
  it('is stripped and runs on the direct path, at 1,300, 4,000 and 20,000 declarations', async () => {
    const before = executor.stats().direct_calls;
    for (const size of [1_300, 4_000, 20_000]) {
      const code = Array.from({ length: size }, (_, i) => `let a${i}: number = ${i};`).join('\n') + '\nreturn a1 + a2';
      const r = await executor.execute({ code, language: 'typescript', timeoutSeconds: 30, memoryMb: 256 }, identity);
      expect(r, r.error).toMatchObject({ success: true, result: 3 });
    }
    expect(executor.stats().direct_calls - before).toBe(3);
  });
});
