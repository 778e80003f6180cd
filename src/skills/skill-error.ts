// The one error class of the skill store: a stable string code for callers to branch on and a
// message that says what was wrong and how to fix it (it reaches agents as a tool error).

import { DaemonError } from '../util/daemon-error.js';

/** Why a skill operation failed. */
export type SkillErrorCode =
  /** Name missing, malformed, too long or reserved. */
  | 'INVALID_NAME'
  /** An argument other than the name is malformed (code, description, language, body). */
  | 'INVALID_ARGUMENT'
  /** Code larger than the configured cap. */
  | 'CODE_TOO_LARGE'
  /** Code that does not parse; `line`/`column` say where. */
  | 'SYNTAX_ERROR'
  /** A JS/TS skill imports something that is not a skill, or uses a host-only module feature. */
  | 'IMPORT_NOT_ALLOWED'
  /** Skills import each other in a loop. */
  | 'IMPORT_CYCLE'
  /** A JS/TS skill imports a Python skill (or the reverse). */
  | 'IMPORT_LANGUAGE'
  /** No skill of that name; `suggestions` holds close names. */
  | 'SKILL_NOT_FOUND'
  /** The skill's folder exists but is broken on disk and is not served. */
  | 'SKILL_INVALID'
  /** Another name differs only by letter case (one folder on case-insensitive file systems). */
  | 'NAME_CONFLICT'
  /** The skill belongs to another agent (or to the operator's library): it cannot be changed. */
  | 'NOT_OWNER'
  /** The store was closed. */
  | 'STORE_CLOSED'
  /** A save kept losing the race to other writers (should not happen in practice). */
  | 'SAVE_CONFLICT'
  /** The skill folder could not be written (disk full, permissions); the daemon logs the details. */
  | 'SAVE_FAILED'
  /** The saving agent's skills would pass limits.skillQuotaCount or limits.skillQuotaBytes. */
  | 'QUOTA_EXCEEDED'
  /** Another agent's skill that an import was pinned to changed since the importer was saved. */
  | 'IMPORT_CHANGED';

export interface SkillErrorDetails {
  /** 1-based line of a syntax or import error in the skill's code. */
  line?: number;
  /** 1-based column. */
  column?: number;
  /** Close existing names, for SKILL_NOT_FOUND. */
  suggestions?: string[];
  /** The skills involved, e.g. the cycle `a -> b -> a`. */
  chain?: string[];
}

export class SkillError extends DaemonError {
  override readonly name = 'SkillError';
  declare readonly code: SkillErrorCode;

  /** What every call on a closed store fails with. */
  static closed(): SkillError {
    return new SkillError('STORE_CLOSED', 'The skill store is closed.');
  }

  readonly line?: number;
  readonly column?: number;
  readonly suggestions?: string[];
  readonly chain?: string[];

  constructor(code: SkillErrorCode, message: string, details: SkillErrorDetails = {}, options: { cause?: unknown } = {}) {
    super(code, message, options);
    if (details.line !== undefined) this.line = details.line;
    if (details.column !== undefined) this.column = details.column;
    if (details.suggestions !== undefined) this.suggestions = details.suggestions;
    if (details.chain !== undefined) this.chain = details.chain;
  }
}

export function isSkillError(error: unknown, code?: SkillErrorCode): error is SkillError {
  return error instanceof SkillError && (code === undefined || error.code === code);
}
