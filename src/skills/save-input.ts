// What `SkillStore.save` accepts, checked where it enters: each refusal names the argument (or the
// line of code) and the fix.

import type { SkillAnalysis, SkillCompiler, SkillSource } from './skill-compiler.js';
import { isSkillError, SkillError } from './skill-error.js';
import { assertSkillName } from './skill-names.js';
import { detectLanguage } from './skill-parse.js';
import { SKILL_LANGUAGES } from './skill-types.js';
import type { SaveSkillInput, SkillLanguage } from './skill-types.js';

export const MAX_DESCRIPTION_CHARS = 2_000;
export const MAX_SKILL_BODY_CHARS = 64 * 1024;

export interface ValidSaveInput {
  name: string;
  code: string;
  language: SkillLanguage;
  description: string | undefined;
  body: string | undefined;
  shared: boolean | undefined;
}

export function validateSaveInput(input: SaveSkillInput, maxCodeBytes: number): ValidSaveInput {
  if (typeof input !== 'object' || input === null) throw new SkillError('INVALID_ARGUMENT', 'save needs { name, code, description?, language? }');
  const { name, code, description, language, body, shared } = input;
  assertSkillName(name);
  if (typeof code !== 'string' || code.trim() === '') throw new SkillError('INVALID_ARGUMENT', `Skill "${name}" was not saved: code must be a non-empty string.`);
  const bytes = Buffer.byteLength(code, 'utf8');
  if (bytes > maxCodeBytes) {
    throw new SkillError('CODE_TOO_LARGE', `Skill "${name}" was not saved: its code is ${bytes} bytes, over the ${maxCodeBytes}-byte limit. Split it into smaller skills that import each other.`);
  }
  if (language !== undefined && !SKILL_LANGUAGES.includes(language)) {
    throw new SkillError('INVALID_ARGUMENT', `Skill "${name}" was not saved: language must be one of ${SKILL_LANGUAGES.join(', ')}.`);
  }
  if (description !== undefined && (typeof description !== 'string' || description.length > MAX_DESCRIPTION_CHARS)) {
    throw new SkillError('INVALID_ARGUMENT', `Skill "${name}" was not saved: description must be a string of at most ${MAX_DESCRIPTION_CHARS} characters.`);
  }
  if (body !== undefined && (typeof body !== 'string' || body.length > MAX_SKILL_BODY_CHARS)) {
    throw new SkillError('INVALID_ARGUMENT', `Skill "${name}" was not saved: body must be a string of at most ${MAX_SKILL_BODY_CHARS} characters.`);
  }
  if (shared !== undefined && typeof shared !== 'boolean') {
    throw new SkillError('INVALID_ARGUMENT', `Skill "${name}" was not saved: shared must be true or false.`);
  }
  return {
    shared,
    name,
    code,
    language: language ?? detectLanguage(code),
    description: description === undefined || description.trim() === '' ? undefined : description.trim(),
    body,
  };
}

/** The compiler's analysis of code about to be saved; its refusal says the skill was not saved and where. */
export async function analyzeForSave(compiler: SkillCompiler, source: SkillSource, codeFile: string): Promise<SkillAnalysis> {
  try {
    return await compiler.analyze(source, `${source.name}/${codeFile}`);
  } catch (error) {
    if (!isSkillError(error)) throw error;
    const details = { ...(error.line !== undefined && { line: error.line }), ...(error.column !== undefined && { column: error.column }) };
    throw new SkillError(error.code, `Skill "${source.name}" was not saved: ${error.message}. Fix the code and save again.`, details, { cause: error });
  }
}
