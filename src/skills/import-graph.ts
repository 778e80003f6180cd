// Skills import each other through import_skill at run time; this walk finds what would go wrong
// before any code runs: a cycle, a missing or broken dependency, or a JS skill importing Python.

import { importRefusal } from '../config/languages.js';
import { isSkillError, SkillError } from './skill-error.js';
import type { CompiledSkill, SkillLanguage } from './skill-types.js';

/**
 * Walks the imports of `name` depth-first through `compile`. Returns every skill reached,
 * dependencies before their importers (`name` last). Throws SkillError IMPORT_CYCLE (with the
 * cycle as `chain`), or SKILL_NOT_FOUND / SKILL_INVALID / IMPORT_LANGUAGE naming the import chain.
 */
export async function walkImportGraph(name: string, compile: (name: string) => Promise<CompiledSkill>): Promise<string[]> {
  const order: string[] = [];
  const done = new Set<string>();
  const visit = async (current: string, path: readonly string[], importer: SkillLanguage | null): Promise<void> => {
    const loopStart = path.indexOf(current);
    if (loopStart !== -1) {
      const chain = [...path.slice(loopStart), current];
      throw new SkillError(
        'IMPORT_CYCLE',
        `Import cycle: ${chain.join(' -> ')}. Skills cannot import each other in a loop; move the shared code into a skill of its own.`,
        { chain },
      );
    }
    if (done.has(current)) return;
    const parent = path[path.length - 1];
    const chain = [...path, current];
    let compiled: CompiledSkill;
    try {
      compiled = await compile(current);
    } catch (error) {
      if (!isSkillError(error) || parent === undefined) throw error;
      const details = { chain, ...(error.suggestions && { suggestions: error.suggestions }) };
      throw new SkillError(error.code, `Skill "${parent}" imports "${current}" (${chain.join(' -> ')}): ${error.message}`, details, { cause: error });
    }
    const refused = parent === undefined || importer === null ? undefined : importRefusal(importer, compiled.language);
    if (refused) {
      throw new SkillError('IMPORT_LANGUAGE', `Skill "${parent}" imports ${refused.what} skill "${current}" (${chain.join(' -> ')}); ${refused.rule}.`, { chain });
    }
    for (const dependency of compiled.imports) await visit(dependency, chain, compiled.language);
    done.add(current);
    order.push(current);
  };
  await visit(name, [], null);
  return order;
}
