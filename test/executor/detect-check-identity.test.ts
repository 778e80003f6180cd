// Attack class: a shared resource without a per-agent share. Language detection confirms Python with
// CPython's ast.parse in the Python pool. Under one identity of the daemon's, every agent's checks
// waited in that identity's one queue of the pool, so one agent's flood of long Python-looking code
// delayed every other agent's detection; the pool's turns by agent never saw two agents. The check
// runs as the calling agent, with no powers (as skill checks do), and the executor alone builds
// that identity (call-language.ts).

import { describe, expect, it } from 'vitest';
import { CallLanguage } from '../../src/executor/call-language.js';
import type { CallIdentity } from '../../src/executor/index.js';

/** The executor's language logic over a run that records whom each parse check runs as. */
function recording(seen: CallIdentity[], enabled = ['javascript', 'typescript', 'python']): CallLanguage {
  return new CallLanguage({
    run: async (_request, identity) => {
      seen.push(identity);
      return { success: true, result: null, output: [], execution_time_ms: 0 };
    },
    defaultLanguage: 'javascript',
    enabled,
  });
}

const PYTHONISH = 'def total(xs):\n    return sum(x for x in xs if x)\n\nresult = total([1, 2, 3])\nprint(result)';
const NO_POWERS = { workspace: 'none', skills: 'none', tools: [], net: [] };

describe("detection's Python check", () => {
  it('runs as the calling agent, each agent in its own share, with no powers', async () => {
    const seen: CallIdentity[] = [];
    const language = recording(seen);
    for (const agent of ['alpha', 'beta']) expect((await language.detect(PYTHONISH, [], agent)).language).toBe('python');
    expect(seen.map((i) => i.agent)).toEqual(['alpha', 'beta']);
    expect(new Set(seen.map((i) => i.sessionId)).size).toBe(2);
    for (const identity of seen) expect(identity.permissions).toEqual(NO_POWERS);
  });

  it('a check without an agent (a skill the daemon reads from disk) runs as the daemon, with no powers', async () => {
    const seen: CallIdentity[] = [];
    expect(await recording(seen).checkSyntax('python', PYTHONISH)).toBeNull();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ agent: 'daemon', permissions: NO_POWERS });
  });

  it('is not made when Python is disabled: the check says it could not run', async () => {
    const seen: CallIdentity[] = [];
    const language = recording(seen, ['javascript', 'typescript']);
    expect(await language.checkSyntax('python', PYTHONISH, 'alpha')).toBeUndefined();
    expect((await language.detect(PYTHONISH, [], 'alpha')).language).not.toBe('python');
    expect(seen).toHaveLength(0);
  });
});
