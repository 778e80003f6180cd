// Checks of a save against the other skills: a name differing only in case, and the imports, which
// are pinned (skill-pins.ts): each must name a skill the saving agent can use now, so a missing
// dependency can never be taken later by whoever publishes its name.

import { importRefusal } from '../config/languages.js';
import { callerSees } from './skill-access.js';
import type { SkillCaller } from './skill-access.js';
import { SkillError } from './skill-error.js';
import type { SkillPin } from './front-matter.js';
import { ownerOf } from './skill-record.js';
import type { IndexEntry } from './skill-record.js';
import type { SkillLanguage, SkillVisibility } from './skill-types.js';

export interface ImportingSkill {
  name: string;
  language: SkillLanguage;
  imports: readonly string[];
  visibility: SkillVisibility;
}

/** Refuses a name differing only in case from another (one folder on some file systems), naming it only when the caller sees it. */
export function caseClash(name: string, names: readonly string[], get: (name: string) => IndexEntry | undefined, caller: SkillCaller | undefined): void {
  const clash = names.find((other) => other !== name && other.toLowerCase() === name.toLowerCase());
  if (clash === undefined) return;
  const entry = get(clash);
  const owner = entry ? ownerOf(entry) : undefined;
  const named = caller === undefined || (entry !== undefined && callerSees(caller, owner?.author, owner?.visibility));
  const other = named ? `a skill named "${clash}" exists` : 'a skill whose name differs from it only in letter case exists';
  throw new SkillError('NAME_CONFLICT', `Skill "${name}" was not saved: ${other}, and names differing only in case share one folder on some file systems. Use ${named ? `"${clash}" or ` : ''}another name.`);
}

/** The pins of `skill`'s imports, or a refusal that names the import and the fix. `find` gives a name's current entry. */
export async function pinImports(skill: ImportingSkill, caller: SkillCaller | undefined, find: (name: string) => Promise<IndexEntry | null>): Promise<SkillPin[]> {
  const pins: SkillPin[] = [];
  const { name } = skill;
  for (const dependency of skill.imports) {
    if (dependency === name) {
      throw new SkillError('IMPORT_CYCLE', `Skill "${name}" was not saved: it imports itself. Remove the import of "${name}".`, { chain: [name, name] });
    }
    const entry = await find(dependency);
    const owner = entry ? ownerOf(entry) : undefined;
    if (!entry || !callerSees(caller, owner?.author, owner?.visibility)) {
      throw new SkillError(
        'SKILL_NOT_FOUND',
        `Skill "${name}" was not saved: it imports "${dependency}", which is not a skill you can use. Save "${dependency}" first: a skill's imports are pinned, when it is saved, to the skills they name then.`,
      );
    }
    if (entry.state === 'invalid') {
      throw new SkillError('SKILL_INVALID', `Skill "${name}" was not saved: it imports "${dependency}", which is broken on disk (${entry.reason}). Fix or save "${dependency}" first.`);
    }
    const { metadata } = entry.record;
    const refused = importRefusal(skill.language, metadata.language);
    if (refused) throw new SkillError('IMPORT_LANGUAGE', `Skill "${name}" was not saved: it imports ${refused.what} skill "${dependency}"; ${refused.rule}.`);
    if (skill.visibility === 'shared' && metadata.visibility === 'private') {
      throw new SkillError(
        'NOT_OWNER',
        `Skill "${name}" was not saved: it is shared but imports "${dependency}", which is private, so other agents could not import it. Publish "${dependency}" first (shared: true), or save "${name}" private.`,
      );
    }
    pins.push({ name: dependency, ...(metadata.author !== undefined && { author: metadata.author }), hash: metadata.hash });
  }
  return pins;
}
