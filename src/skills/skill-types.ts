// The skill store's contract: what the MCP tools, the sandbox's import_skill and tests see.
// Kept apart from the implementation so callers depend on shapes, not on the store's internals.

import type { Logger } from '../util/logger.js';

/** Languages a skill can be written in; the code file is index.js, index.ts or index.py. */
export type SkillLanguage = 'javascript' | 'typescript' | 'python';

export const SKILL_LANGUAGES: readonly SkillLanguage[] = ['javascript', 'typescript', 'python'];

/** 'private': its author only; 'shared': published to every agent that may read skills. */
export type SkillVisibility = 'private' | 'shared';

export const SKILL_VISIBILITIES: readonly SkillVisibility[] = ['private', 'shared'];

/** Where a parser or validator found a problem; line and column are 1-based. */
export interface CodePosition {
  line: number;
  column?: number;
}

/** Checks Python source; returns the first syntax error, or null when the code compiles. */
/** Parses Python without running it; `agent` is whose save it is (the check runs as that agent). */
export type PythonValidator = (code: string, agent?: string) => Promise<{ line: number; message: string } | null>;

export interface SkillStoreOptions {
  /** The skills folder; each skill is a sub-folder `NAME/`. Created on first save if missing. */
  dir: string;
  logger: Logger;
  /** Clock for `created` / `updated`. Default `() => new Date()`. */
  now?: () => Date;
  /** Compiled skills kept in the LRU cache, keyed by content hash. Default 256. */
  cacheSize?: number;
  /** Largest code accepted by `save`, bytes. Default 256 KiB. */
  maxCodeBytes?: number;
  /** Python syntax check (e.g. a Pyodide `compile`); without it Python code is accepted as is. */
  validatePython?: PythonValidator;
  /** How often debris of interrupted saves (stale temp folders) is swept while running, ms. Default 60 000. */
  debrisSweepMs?: number;
  /** Each agent's share: skills it may hold and bytes (code plus SKILL.md) they may take. Default 500 skills, 64 MiB. */
  quota?: { count?: number; bytes?: number };
  /** Bytes of code kept in memory (most recently used); the rest is read from disk when needed. Default 32 MiB. */
  codeCacheBytes?: number;
}

/** The front matter of SKILL.md, plus what the code exports. */
export interface SkillMetadata {
  name: string;
  description: string;
  language: SkillLanguage;
  /** ISO 8601 time of the first save; kept across updates. */
  created: string;
  /** ISO 8601 time of the last save (or of the code file, after a hand edit). */
  updated: string;
  /** sha256 of the code as served, hex. */
  hash: string;
  /** The agent that saved it; absent for the operator's library (skills put on disk by hand). */
  author?: string;
  /** Who sees it; the operator's library is always 'shared'. */
  visibility: SkillVisibility;
  /** Exported names (JS/TS `export`s, or top-level functions in the seed's style; Python top-level `def`s). */
  exports: string[];
}

export interface SaveSkillInput {
  name: string;
  code: string;
  description?: string;
  /** Default: 'python' when the code clearly is Python (a `def f(` line, no `function`/`=>`), else 'javascript'. */
  language?: SkillLanguage;
  /** Markdown body of SKILL.md; generated from the code (functions, parameters, doc comments) when absent. */
  body?: string;
  /**
   * Publish to every agent (visibility 'shared'). Default: private to its author when agents are
   * configured; with one user (no agents), every save is shared.
   */
  shared?: boolean;
  /**
   * The code was parsed by the saving call's own CPython (a save from Python code, whose
   * save_skill parses first), so the store does not ask a Python pool interpreter again.
   */
  syntaxChecked?: boolean;
}

export interface SaveSkillResult extends SkillMetadata {
  success: true;
  /** Folder of the skill on disk. */
  path: string;
}

export interface LoadedSkill {
  name: string;
  code: string;
  metadata: SkillMetadata;
}

export interface SkillSummary {
  name: string;
  description: string;
  language: SkillLanguage;
  exports: string[];
  updated: string;
  /** The agent that saved it; absent for the operator's library. */
  author?: string;
  visibility: SkillVisibility;
}

export interface SkillList {
  count: number;
  skills: SkillSummary[];
}

/** A skill folder on disk that is not served, and why. */
export interface InvalidSkill {
  name: string;
  reason: string;
}

export interface SkillStoreStats {
  /** Skills served. */
  count: number;
  invalid: InvalidSkill[];
  /** The compiled-module LRU cache. */
  cache: { size: number; hits: number; misses: number };
  /** Skill code held in memory (an LRU bounded by bytes; the index keeps metadata only). */
  code_cache: { entries: number; bytes: number; max_bytes: number };
  /** Each agent's share (limits.skillQuotaCount, limits.skillQuotaBytes). */
  quota: { count: number; bytes: number };
  /** What each agent's skills hold (the operator's library is not counted). */
  by_agent: Record<string, { skills: number; bytes: number }>;
}

/**
 * A skill in the form the sandbox evaluates. For JavaScript and TypeScript, `body` is the body
 * of an async function with one parameter, `import_skill`, that returns the exports object;
 * lines match the skill's code line for line. For Python, `body` is the code itself.
 */
export interface CompiledSkill {
  name: string;
  language: SkillLanguage;
  hash: string;
  body: string;
  exports: string[];
  /** Names of the skills this one imports, in source order, without repeats. */
  imports: string[];
}

/** What changed: 'api' changes come from save/delete, 'disk' ones from the watcher. */
export interface SkillChange {
  name: string;
  kind: 'added' | 'changed' | 'removed' | 'invalid';
  source: 'api' | 'disk';
}

export type SkillChangeListener = (change: SkillChange) => void;
