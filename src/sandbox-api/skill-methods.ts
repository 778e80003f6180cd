// Sandbox methods backed by the skill store: save, load, list, and the module source that
// import_skill evaluates (compiled once per content hash, preprocessed for SES). Every call acts as
// the calling agent: it sees, imports and changes only what that agent may (src/skills/skill-access.ts).

import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { preprocess } from '../../workers/js/preprocess.js';
import { HostError } from '../executor/index.js';
import type { CallIdentity, HostMethod } from '../executor/index.js';
import type { SkillCaller, SkillLanguage, SkillRepository } from '../skills/index.js';
import { requireSkills } from './permissions.js';

interface ModuleSource {
  name: string;
  language: SkillLanguage;
  source: string;
}

/**
 * `agentsConfigured`: whether the daemon lists agents; then skills have owners. Without agents
 * (one user), every skill is visible and changeable, as in the seed.
 */
export function skillMethods(skills: SkillRepository, agentsConfigured: boolean): Record<string, HostMethod> {
  // Keyed by compiled body: an unchanged skill is never preprocessed twice, a changed one never stale.
  // Bounded by bytes too: a skill may be as large as limits.maxCodeBytes.
  const sources = new LRUCache<string, ModuleSource>({ max: 1_000, maxSize: 32 * 1024 * 1024, sizeCalculation: (m) => Math.max(1, m.source.length) });
  const callerOf = (identity: CallIdentity): SkillCaller => ({ agent: identity.agent, agentsConfigured });
  return {
    // save_skill(name, code, description, language, options): options is { shared: boolean }
    // (a bare boolean is taken too); absent, null or { shared: false } saves a private skill.
    save_skill: async ([name, code, description, language, options], ctx) => {
      requireSkills(ctx.identity, 'read-write', 'save_skill');
      const shared = sharedOption(options);
      if (shared && agentsConfigured) requireSkills(ctx.identity, 'publish', 'save_skill with shared: true (publishing to every agent)');
      // The folder on the host is not the agent's business.
      const { path: _path, ...saved } = await skills.save(
        {
          name: name as string,
          code: code as string,
          description: typeof description === 'string' && description !== '' ? description : undefined,
          // The store refuses a language it does not know, naming the allowed ones.
          language: language === null || language === undefined || language === '' ? undefined : (language as SkillLanguage),
          shared,
          // Python code parses a Python skill in its own interpreter before it calls here.
          syntaxChecked: ctx.language === 'python',
        },
        callerOf(ctx.identity),
      );
      return saved;
    },
    load_skill: async ([name], ctx) => {
      requireSkills(ctx.identity, 'read', 'load_skill');
      return (await skills.load(name as string, callerOf(ctx.identity))).code;
    },
    list_skills: async (_args, ctx) => {
      requireSkills(ctx.identity, 'read', 'list_skills');
      return (await skills.list(callerOf(ctx.identity))).skills;
    },
    // Called for import_skill and for every import inside a skill: resolution is by the calling
    // agent's view, whoever wrote the importing skill.
    skill_module: async ([name], ctx) => {
      requireSkills(ctx.identity, 'read', 'import_skill');
      const compiled = await skills.compileSkill(name as string, callerOf(ctx.identity));
      // The body, not only the code's hash: the same code compiles to other imports once its pins change.
      const key = `${compiled.name}\0${createHash('sha256').update(compiled.body).digest('hex')}`;
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
    },
  };
}

function sharedOption(options: unknown): boolean {
  if (options === undefined || options === null) return false;
  if (typeof options === 'boolean') return options;
  if (typeof options === 'object' && !Array.isArray(options)) {
    const shared = (options as { shared?: unknown }).shared;
    if (shared === undefined || typeof shared === 'boolean') return shared === true;
  }
  throw new HostError('INVALID_ARGUMENT', 'save_skill(name, code, description, language, options): options must be { shared: true } or { shared: false }', 'TypeError');
}
