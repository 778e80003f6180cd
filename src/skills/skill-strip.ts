// TypeScript skills lose their types on a helper thread, never on the coordinator's event loop:
// the stripper costs 1-2 s per MiB, and code that passes the nesting guard can still trap it
// (long label, `new`, `keyof` chains: strip-types.ts), each trap loading a fresh instance. Inline,
// one agent's trapping saves grew the daemon every agent shares and held its event loop. Here the
// thread has a heap bound (a thread past it dies alone), saves of different agents take turns
// (util/helper-threads.ts), and every trap is charged to the saving agent (util/trap-strikes.ts):
// an agent that keeps trapping it is refused for a cool-down.

import { HelperThreads } from '../util/helper-threads.js';
import { isStripperTrap, stripperStrikes } from '../util/trap-strikes.js';
import { stripperTrapped } from '../../workers/js/strip-types.js';
import type { StripResult } from '../../workers/js/strip-types.js';
import type { SkillStripAnswer } from './skill-strip-worker.js';

/** The thread's heap bound, MiB: a skill is at most limits.maxSkillBytes and the stripper takes about 10 MiB. */
export const SKILL_STRIP_HEAP_MB = 96;

/** One thread, ended after 30 s idle: an idle daemon holds none. */
const helper = new HelperThreads(import.meta.url, 'src/skills/skill-strip-worker.js', { threads: 1, idleMs: 30_000, maxHeapMb: SKILL_STRIP_HEAP_MB });

/** What a dead thread means for the save that killed it: a trap, charged like one. */
const THREAD_DIED: StripResult = { ok: false, diagnostic: { message: stripperTrapped('its thread ran out of memory'), line: 1, column: 1, unsupported: false, trapped: true } };

/**
 * `code` with its types blanked out (amaro strip-only), on the helper thread in `agent`'s turn;
 * 'missing' when amaro is not installed. Refused at once while the agent cools down; a trap (or
 * the thread dying under this code) is a strike against the agent.
 */
export async function stripSkillTypes(code: string, agent = ''): Promise<SkillStripAnswer> {
  const refusal = stripperStrikes.refusal(agent);
  if (refusal !== undefined) return { ok: false, diagnostic: { message: refusal, line: 1, column: 1, unsupported: false, trapped: true } };
  const job = helper.run<SkillStripAnswer>(code, agent);
  if (job === undefined) throw new Error('the skill stripper thread is not built (npm run build)');
  const answer = await job.catch(() => THREAD_DIED);
  if (answer !== 'missing' && !answer.ok && isStripperTrap(answer.diagnostic.message)) stripperStrikes.strike(agent);
  return answer;
}

/** Ends the thread (daemon shutdown, tests); a later save starts it again. */
export function closeSkillStripper(): Promise<void> {
  return helper.close();
}
