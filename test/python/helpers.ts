// Shared fixture for the Python tests: a real executor with up to two Python sandbox processes
// started on demand (the compiled dist/ worker), a workspace in a temp folder, and small host extensions standing in for
// subsystems wired elsewhere (skills, an upstream tool), so Python's side of them is what is tested.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Config } from '../../src/config/config-types.js';
import { createExecutor, createHostApi, HostError } from '../../src/executor/index.js';
import type { CallIdentity, ExecutionResult, HostMethod, PooledExecutor } from '../../src/executor/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { Workspace } from '../../src/workspace/index.js';
import { FULL_PERMISSIONS, testConfig } from '../fixtures/config.js';

/** Pyodide loads in seconds on a loaded two-core machine: hooks get this long. */
export const PYTHON_START_MS = 180_000;

export interface PythonHarness {
  executor: PooledExecutor;
  config: Config;
  workspace: Workspace;
  /** A folder outside the workspace, for escape probes' marker files. */
  outside: string;
  run(code: string, options?: RunOptions): Promise<ExecutionResult>;
  close(): Promise<void>;
}

export interface RunOptions {
  timeoutSeconds?: number;
  memoryMb?: number;
  contextVars?: Record<string, unknown>;
  /** The agent's workspace namespace ('' = the root). */
  namespace?: string;
  language?: 'python' | 'javascript';
}

/** Skills and an upstream tool as plain host methods (the real ones are wired by the daemon). */
function extensions(): Record<string, HostMethod> {
  const skills = new Map<string, { code: string; language: string; description: string }>();
  return {
    save_skill: async ([name, code, description, language]) => {
      if (typeof name !== 'string' || typeof code !== 'string') throw new HostError('INVALID_ARGUMENT', 'save_skill(name, code): both must be strings', 'ValueError');
      skills.set(name, { code, language: typeof language === 'string' ? language : 'javascript', description: String(description ?? '') });
      return { success: true, name };
    },
    load_skill: async ([name]) => {
      const skill = skills.get(String(name));
      if (!skill) throw new HostError('SKILL_NOT_FOUND', `no skill named ${String(name)}`, 'ImportError');
      return skill.code;
    },
    list_skills: async () => [...skills.entries()].map(([name, s]) => ({ name, description: s.description, language: s.language })),
    skill_module: async ([name]) => {
      const skill = skills.get(String(name));
      if (!skill) throw new HostError('SKILL_NOT_FOUND', `no skill named ${String(name)}`, 'ImportError');
      return { name, language: skill.language, source: skill.code };
    },
    call_tool: async ([server, tool, args]) => {
      if (server === 'demo' && tool === 'echo') return { echoed: args };
      if (server === 'demo' && tool === 'slow') return new Promise(() => {});
      throw new HostError('TOOL_NOT_FOUND', `unknown tool ${String(server)}.${String(tool)}`, 'ValueError');
    },
  };
}

export async function startPython(overrides: Partial<Config> = {}): Promise<PythonHarness> {
  // Two Python processes, as the daemon has by default: two agents taking turns each keep their
  // own interpreter instead of forcing an interpreter start per turn (slow on a loaded machine).
  const config = testConfig({ sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 2 }, ...overrides });
  const workspace = new Workspace({ root: config.workspaceDir, maxFileBytes: config.limits.maxFileBytes });
  const logger = silentLogger();
  const hostApi = createHostApi({ config, workspace, logger, extensions: extensions(), toolNames: () => ['demo.echo', 'demo.slow'] });
  const executor = await createExecutor({ config, hostApi, logger, workspace });
  const identity = (namespace: string): CallIdentity => ({ agent: namespace || 'test', sessionId: `session-${namespace}`, workspaceNamespace: namespace, permissions: FULL_PERMISSIONS });
  const run = (code: string, o: RunOptions = {}): Promise<ExecutionResult> =>
    executor.execute(
      { code, language: o.language ?? 'python', timeoutSeconds: o.timeoutSeconds ?? 60, memoryMb: o.memoryMb ?? 500, contextVars: o.contextVars },
      identity(o.namespace ?? ''),
    );
  // Python starts on demand: the first call starts an interpreter and waits for it (not counted in its timeout).
  const first = await run('result = "ready"', { timeoutSeconds: PYTHON_START_MS / 1000 - 10 });
  if (!first.success) throw new Error(`the Python sandbox did not start: ${first.error_type}: ${first.error}`);
  return {
    executor,
    config,
    workspace,
    outside: mkdtempSync(path.join(tmpdir(), 'cem-python-outside-')),
    run,
    close: () => executor.close(),
  };
}
