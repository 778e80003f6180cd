// Sandbox methods backed by the skill store: save, load, list, and the module source that
// import_skill evaluates (compiled once per content hash, preprocessed for SES).

import { LRUCache } from 'lru-cache';
import { preprocess } from '../../workers/preprocess.js';
import { HostError } from '../executor/index.js';
import type { HostMethod } from '../executor/index.js';
import { isSkillError } from '../skills/index.js';
import type { SkillLanguage, SkillStore } from '../skills/index.js';
import { requireSkills } from './permissions.js';

interface ModuleSource {
  name: string;
  language: SkillLanguage;
  source: string;
}

export function skillMethods(skills: SkillStore): Record<string, HostMethod> {
  // Keyed by content hash: an unchanged skill is never preprocessed twice, a changed one never stale.
  const sources = new LRUCache<string, ModuleSource>({ max: 1_000 });
  const wrap = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      if (isSkillError(err)) {
        const name = err.code === 'SKILL_NOT_FOUND' ? 'ImportError' : err.code === 'IMPORT_CYCLE' ? 'ImportError' : 'ValueError';
        throw new HostError(err.code, err.message, name);
      }
      throw err;
    }
  };
  return {
    save_skill: async ([name, code, description, language], ctx) => {
      requireSkills(ctx.identity.permissions, true);
      return wrap(() =>
        skills.save({
          name: name as string,
          code: code as string,
          description: typeof description === 'string' && description !== '' ? description : undefined,
          language: (language ?? undefined) as SkillLanguage | undefined,
        }),
      );
    },
    load_skill: async ([name], ctx) => {
      requireSkills(ctx.identity.permissions, false);
      return wrap(async () => (await skills.load(name as string)).code);
    },
    list_skills: async (_args, ctx) => {
      requireSkills(ctx.identity.permissions, false);
      return (await skills.list()).skills;
    },
    skill_module: async ([name], ctx) => {
      requireSkills(ctx.identity.permissions, false);
      return wrap(async () => {
        const compiled = await skills.compileSkill(name as string);
        const key = `${compiled.name}\0${compiled.hash}`;
        let mod = sources.get(key);
        if (!mod) {
          if (compiled.language === 'python') {
            mod = { name: compiled.name, language: 'python', source: compiled.body };
          } else {
            const pre = preprocess(compiled.body, 'javascript', `skill:${compiled.name}`);
            if (!pre.ok) throw new HostError('SKILL_INVALID', `skill ${compiled.name} cannot be loaded: ${pre.error.message} (line ${pre.error.line ?? '?'})`, 'ImportError');
            mod = { name: compiled.name, language: compiled.language, source: pre.source };
          }
          sources.set(key, mod);
        }
        return mod;
      });
    },
  };
}
