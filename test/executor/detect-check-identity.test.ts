// Attack class: a shared resource without a per-agent share. Language detection confirms Python with
// CPython's ast.parse in the Python pool. Under one identity of the daemon's, every agent's checks
// waited in that identity's one queue of the pool, so one agent's flood of long Python-looking code
// delayed every other agent's detection; the pool's turns by agent never saw two agents. The check
// now runs as the calling agent, with no powers (as skill checks do).

import { describe, expect, it } from 'vitest';
import type { CallIdentity, ExecutionRequest, ExecutionResult, Executor } from '../../src/executor/index.js';
import { detectLanguage } from '../../src/executor/detect-language.js';
import { detectOptions } from '../../src/mcp/tools/execute-code.js';

function recordingExecutor(seen: CallIdentity[]): Executor {
  return {
    execute: async (_request: ExecutionRequest, identity: CallIdentity): Promise<ExecutionResult> => {
      seen.push(identity);
      return { success: true, result: null } as unknown as ExecutionResult;
    },
  } as unknown as Executor;
}

const PYTHONISH = 'def total(xs):\n    return sum(x for x in xs if x)\n\nresult = total([1, 2, 3])\nprint(result)';

describe("detection's Python check", () => {
  it('runs as the calling agent, each agent in its own share, with no powers', async () => {
    const seen: CallIdentity[] = [];
    const executor = recordingExecutor(seen);
    for (const agent of ['alpha', 'beta']) {
      const detection = await detectLanguage(PYTHONISH, detectOptions('javascript', true, executor, agent));
      expect(detection.language).toBe('python');
    }
    expect(seen.map((i) => i.agent)).toEqual(['alpha', 'beta']);
    expect(new Set(seen.map((i) => i.sessionId)).size).toBe(2);
    for (const identity of seen) expect(identity.permissions).toEqual({ workspace: 'none', skills: 'none', tools: [], net: [] });
  });

  it('without an agent (the exec command), runs as the daemon', async () => {
    const seen: CallIdentity[] = [];
    await detectLanguage(PYTHONISH, detectOptions('javascript', true, recordingExecutor(seen)));
    expect(seen.length).toBe(1);
    expect(seen[0]?.agent).not.toBe('alpha');
  });
});
