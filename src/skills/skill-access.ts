// Who may see and change a skill. With agents configured, skills have owners: an agent sees its own
// skills, published ones and the operator's library (skills on disk without an author), and changes
// only its own. With no agents configured (one user), every skill is visible and changeable.

import { SkillError } from './skill-error.js';
import type { SkillVisibility } from './skill-types.js';

/** Who acts on the store; calls without a caller (the daemon itself, tests) see and change everything. */
export interface SkillCaller {
  /** Agent name, recorded as the author of what it saves. */
  agent: string;
  /**
   * Whether agents are configured: then skills have owners and private skills are hidden from other
   * agents. False in the single-user case (agent 'local'), where every skill is visible and changeable.
   */
  agentsConfigured: boolean;
}

/**
 * THE visibility rule, shared by the store, its MCP tools and sandbox methods, and catalog search:
 * visible iff no agents are configured (`agentName` null), or the skill is not private, or the
 * agent wrote it. A skill without an author (the operator's library) is never private.
 */
export function skillVisibleTo(agentName: string | null, author: string | undefined, visibility: SkillVisibility | undefined): boolean {
  return agentName === null || visibility !== 'private' || author === agentName;
}

/** Whether `caller` sees a skill by `author` with `visibility`. */
export function callerSees(caller: SkillCaller | undefined, author: string | undefined, visibility: SkillVisibility | undefined): boolean {
  return caller === undefined || skillVisibleTo(caller.agentsConfigured ? caller.agent : null, author, visibility);
}

/** Whether `caller` may overwrite or delete a skill by `author` (undefined: the operator's library). */
export function callerOwns(caller: SkillCaller | undefined, author: string | undefined): boolean {
  return caller === undefined || !caller.agentsConfigured || author === caller.agent;
}

/** What a save by `caller` records: its name as author, and 'shared' only when asked (or with one user). */
export function savedOwnership(caller: SkillCaller | undefined, shared: boolean | undefined): { author?: string; visibility: SkillVisibility } {
  if (caller === undefined) return { visibility: 'shared' };
  const visibility: SkillVisibility = shared === true || !caller.agentsConfigured ? 'shared' : 'private';
  return { author: caller.agent, visibility };
}

/**
 * The refusal for changing a skill `caller` does not own. Says whose it is only when the skill is
 * visible to the caller anyway; a private skill of another agent is "another agent's".
 */
export function notOwnerError(name: string, action: 'saved' | 'deleted', author: string | undefined, visible: boolean): SkillError {
  const owner = author === undefined ? "the operator's library (skills put on disk by hand), which agents can use but not change" : visible ? `agent "${author}"` : 'another agent';
  const fix = action === 'saved' ? 'Skill names are shared by all agents: save under another name.' : 'An agent can delete only the skills it saved.';
  return new SkillError('NOT_OWNER', `Skill "${name}" was not ${action}: the name belongs to ${owner}. ${fix}`);
}
