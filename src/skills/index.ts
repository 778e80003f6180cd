// The skills subsystem's public API: the store, its contract types, its error class and the
// visibility rule every reader of skills applies.

export { SkillStore, DEFAULT_SKILL_CACHE_SIZE, DEFAULT_MAX_SKILL_CODE_BYTES } from './skill-store.js';
export { DEFAULT_SKILL_CODE_CACHE_BYTES } from './skill-index.js';
export { DEFAULT_SKILL_QUOTA_BYTES, DEFAULT_SKILL_QUOTA_COUNT } from './skill-quota.js';
export { SkillError, isSkillError } from './skill-error.js';
export type { SkillErrorCode, SkillErrorDetails } from './skill-error.js';
export { skillNameProblem, assertSkillName, suggestNames, SKILL_NAME_PATTERN, MAX_SKILL_NAME_CHARS } from './skill-names.js';
export { detectLanguage } from './skill-parse.js';
export { CODE_FILES } from './skill-disk.js';
export { SkillFileFacts } from './skill-file-facts.js';
export type { FileFacts } from './skill-file-facts.js';
export { SKILL_LANGUAGES, SKILL_VISIBILITIES } from './skill-types.js';
export { skillVisibleTo } from './skill-access.js';
export type { SkillCaller } from './skill-access.js';
export type { SkillRepository } from './skill-repository.js';
export type {
  CompiledSkill,
  InvalidSkill,
  LoadedSkill,
  PythonValidator,
  SaveSkillInput,
  SaveSkillResult,
  SkillChange,
  SkillChangeListener,
  SkillLanguage,
  SkillList,
  SkillMetadata,
  SkillStoreOptions,
  SkillStoreStats,
  SkillSummary,
  SkillVisibility,
} from './skill-types.js';
