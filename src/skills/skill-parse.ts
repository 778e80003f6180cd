// Parsing skill code: acorn for JavaScript (as a module, latest syntax, top-level await), TypeScript
// through amaro first (types become spaces, so acorn's line:column point into the TS as
// written), and Python through an injected validator. Errors carry the parser's own message.

import { parse } from 'acorn';
import type { Comment, Program } from 'acorn';
import { TYPESCRIPT_MISSING } from '../../workers/js/strip-types.js';
import { SkillError } from './skill-error.js';
import { stripSkillTypes } from './skill-strip.js';
import type { PythonValidator, SkillLanguage } from './skill-types.js';

export interface ParsedModule {
  /** The JavaScript that was parsed (TypeScript with its types blanked out). */
  js: string;
  program: Program;
  comments: Comment[];
}

/**
 * Guess the language of code saved without one: Python when a line is a `def name(` and nothing
 * looks like JavaScript (`function`, `=>`); JavaScript otherwise. `{` alone does not rule Python
 * out, since Python dict literals use it; a `def` line with its `:` is never valid JavaScript.
 */
export function detectLanguage(code: string): SkillLanguage {
  const hasDef = /^[ \t]*(?:async[ \t]+)?def[ \t]+[A-Za-z_]\w*[ \t]*\(/m.test(code);
  const looksJs = /\bfunction\b|=>/.test(code);
  return hasDef && !looksJs ? 'python' : 'javascript';
}

/**
 * Parse JavaScript or TypeScript as a module; throws SkillError SYNTAX_ERROR with 1-based
 * line:column. `agent`: whose save or import it is (TypeScript is stripped in that agent's turn).
 */
export async function parseSkillModule(code: string, language: 'javascript' | 'typescript', label: string, agent?: string): Promise<ParsedModule> {
  const js = language === 'typescript' ? await stripTypes(code, label, agent) : code;
  const comments: Comment[] = [];
  try {
    const program = parse(js, {
      ecmaVersion: 'latest',
      sourceType: 'module',
      allowAwaitOutsideFunction: true,
      allowHashBang: true,
      locations: true,
      onComment: comments,
    });
    return { js, program, comments };
  } catch (error) {
    throw syntaxErrorFrom(error, label);
  }
}

function syntaxErrorFrom(error: unknown, label: string): SkillError {
  if (error instanceof SyntaxError) {
    const loc = (error as SyntaxError & { loc?: { line: number; column: number } }).loc;
    const message = error.message.replace(/\s*\(\d+:\d+\)$/, '');
    if (loc) return syntaxError(label, message, loc.line, loc.column + 1);
    return new SkillError('SYNTAX_ERROR', `${label}: ${message}`);
  }
  return new SkillError('SYNTAX_ERROR', `${label}: ${error instanceof Error ? error.message : String(error)}`);
}

export function syntaxError(label: string, message: string, line: number, column?: number): SkillError {
  const where = column === undefined ? `line ${line}` : `line ${line}, column ${column}`;
  return new SkillError('SYNTAX_ERROR', `${label}: ${message} (${where})`, column === undefined ? { line } : { line, column });
}

/**
 * TypeScript → JavaScript with every type replaced by spaces (amaro's strip-only mode, on the
 * skill stripper's thread: skill-strip.ts), so positions are unchanged. What has no type-only
 * erasure (enum, namespace, parameter properties) is refused with its line: a skill's lines must
 * stay where they were written.
 */
export async function stripTypes(code: string, label: string, agent?: string): Promise<string> {
  const stripped = await stripSkillTypes(code, agent);
  if (stripped === 'missing') throw new SkillError('INVALID_ARGUMENT', `${TYPESCRIPT_MISSING}; or write the skill in JavaScript or Python`);
  if (stripped.ok) return stripped.code;
  const { message, line, column, unsupported } = stripped.diagnostic;
  if (!unsupported) throw syntaxError(label, message, line, column);
  throw syntaxError(
    label,
    `${message}: it has no type-only erasure and is not supported in skills (use a plain object instead of an enum or namespace, assign constructor fields explicitly, write \`x as T\` for \`<T>x\`)`,
    line,
    column,
  );
}

/** Top-level `def` names of Python code, in order. */
export function pythonExports(code: string): string[] {
  const names: string[] = [];
  for (const match of code.matchAll(/^(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)[ \t]*\(/gm)) {
    const name = match[1];
    if (name !== undefined && !names.includes(name)) names.push(name);
  }
  return names;
}

export async function checkPython(code: string, validator: PythonValidator | undefined, label: string, agent?: string): Promise<void> {
  if (!validator) return;
  const problem = await validator(code, agent);
  if (problem) throw syntaxError(label, problem.message, problem.line);
}
