// Parsing skill code: acorn for JavaScript (as a module, latest syntax, top-level await), TypeScript
// through ts-blank-space first (types become spaces, so acorn's line:column point into the TS as
// written), and Python through an injected validator. Errors carry the parser's own message.

import { parse } from 'acorn';
import type { Comment, Program } from 'acorn';
import type { blankSourceFile } from 'ts-blank-space';
import type TypeScript from 'typescript';
import { SkillError } from './skill-error.js';
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

/** Parse JavaScript or TypeScript as a module; throws SkillError SYNTAX_ERROR with 1-based line:column. */
export async function parseSkillModule(code: string, language: 'javascript' | 'typescript', label: string): Promise<ParsedModule> {
  const js = language === 'typescript' ? await stripTypes(code, label) : code;
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

// TypeScript is loaded on first use: it is large, and many deployments never see a TS skill.
type TsModule = typeof TypeScript;
type BlankSourceFile = typeof blankSourceFile;
interface TypescriptTools {
  ts: TsModule;
  blankSourceFile: BlankSourceFile;
}
let typescriptTools: Promise<TypescriptTools> | undefined;

/** Optional dependencies: without them TypeScript skills are refused, JavaScript and Python ones still work. */
function typescriptMissing(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return error;
  return new SkillError('INVALID_ARGUMENT', 'TypeScript skills need the optional packages "typescript" and "ts-blank-space", which are not installed on this daemon (npm install typescript ts-blank-space); write the skill in JavaScript or Python');
}

function loadTypescript(): Promise<TypescriptTools> {
  typescriptTools ??= (async (): Promise<TypescriptTools> => {
    const [tsModule, blank] = await Promise.all([import('typescript'), import('ts-blank-space')]).catch((error: unknown) => {
      typescriptTools = undefined;
      throw typescriptMissing(error);
    });
    const ts: TsModule = tsModule.default;
    return { ts, blankSourceFile: blank.blankSourceFile };
  })();
  return typescriptTools;
}

/** TypeScript → JavaScript with every type replaced by spaces, so positions are unchanged. */
export async function stripTypes(code: string, label: string): Promise<string> {
  const { ts, blankSourceFile: blank } = await loadTypescript();
  const source = ts.createSourceFile('index.ts', code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const position = (pos: number): { line: number; column: number } => {
    const lc = source.getLineAndCharacterOfPosition(pos);
    return { line: lc.line + 1, column: lc.character + 1 };
  };
  // The parser's own diagnostics say it best; they are on the source file, outside the typings.
  const diagnostics = (source as unknown as { parseDiagnostics?: readonly TypeScript.Diagnostic[] }).parseDiagnostics;
  const first = diagnostics?.[0];
  if (first) {
    const { line, column } = position(first.start ?? 0);
    throw syntaxError(label, ts.flattenDiagnosticMessageText(first.messageText, ' '), line, column);
  }
  let unsupported: SkillError | undefined;
  const js = blank(source, (node) => {
    if (unsupported) return;
    const { line, column } = position(node.getStart(source));
    const kind = ts.SyntaxKind[node.kind] ?? 'syntax';
    unsupported = syntaxError(
      label,
      `TypeScript ${kind} has no type-only erasure and is not supported in skills (use a plain object instead of an enum or namespace, and assign constructor fields explicitly)`,
      line,
      column,
    );
  });
  if (unsupported) throw unsupported;
  return js;
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
