// Turns submitted JavaScript or TypeScript into source a SES Compartment will evaluate, without
// moving line or column numbers where that can be helped. SES refuses any source text holding
// `import(`, `<!--`, `-->` or a direct `eval(` - even in strings and comments - so those are
// rewritten inside strings, templates, regexes and comments, and refused with a clear message only
// where they are real code.

import { Parser, tokTypes } from 'acorn';
import type { Comment, Token } from 'acorn';
import { TYPESCRIPT_MISSING, stripTypeScript } from './strip-types.js';
import { USER_CODE_URL, WRAP_PREFIX } from '../kit/protocol.js';
import type { ErrorInfo, Preprocessed, SandboxLanguage } from '../kit/protocol.js';

export { TYPESCRIPT_MISSING, WRAP_PREFIX };
const WRAP_SUFFIX = '\n})';

/**
 * Parses `js` as the sandbox runs it: the body of an async function (so a top-level `return` or
 * `await` parses), as a script, without a hashbang. Throws acorn's SyntaxError. `collect` takes
 * the tokens and comments; `locations` adds line:column to them. Detection (src/executor) parses
 * with the same rules, so what it calls JavaScript is what the sandbox accepts.
 */
export function parseWrapped(js: string, collect?: { tokens: Token[]; comments: Comment[] }): ReturnType<typeof Parser.parse> {
  return Parser.parse(WRAP_PREFIX + js + WRAP_SUFFIX, {
    ecmaVersion: 'latest',
    sourceType: 'script',
    allowHashBang: false,
    ...(collect ? { locations: true, onToken: collect.tokens, onComment: collect.comments } : {}),
  });
}

export type { Preprocessed } from '../kit/protocol.js';

/** The patterns SES's evaluator rejects, as it matches them. */
const REJECTED = [
  { re: /(^|[^.]|\.\.\.)\bimport(\s*(?:\(|\/[/*]))/, what: 'import(' },
  { re: /<!--/, what: '<!--' },
  { re: /-->/, what: '-->' },
  { re: /(^|[^.]|\.\.\.)\beval(\s*\()/, what: 'eval(' },
] as const;

/** Preprocess `code` for evaluation under `url` (user-code.js, or skill:NAME for skills). */
export function preprocess(code: string, language: SandboxLanguage, url = USER_CODE_URL): Preprocessed {
  let js = code;
  if (language === 'typescript') {
    const stripped = stripTypes(code, url);
    if (!stripped.ok) return stripped;
    js = stripped.source;
  }
  const wrapped = WRAP_PREFIX + js + WRAP_SUFFIX;
  const tokens: Token[] = [];
  const comments: Comment[] = [];
  try {
    parseWrapped(js, { tokens, comments });
  } catch (err) {
    return { ok: false, error: syntaxError(err, url) };
  }
  const edits: Edit[] = [];
  for (const t of tokens) {
    if (t.type === tokTypes.string || t.type === tokTypes.template || t.type === tokTypes.regexp) {
      escapeInLiteral(wrapped, t.start, t.end, edits);
    }
  }
  for (const c of comments) defuseInComment(wrapped, c.start, c.end, edits);
  let source = applyEdits(wrapped, edits);

  // What is still there is real code: a dynamic import, a direct eval, or `x-->y` / `a<!--b`.
  source = source.replace(/-->/g, '-- >').replace(/<!--/g, '< !--');
  for (const { re, what } of REJECTED) {
    const m = re.exec(source);
    if (!m) continue;
    const pos = positionOf(source, m.index + (m[1]?.length ?? 0));
    const message =
      what === 'import('
        ? 'dynamic import() is not available in the sandbox: there are no host modules. Use `await import_skill("name")` for a saved skill.'
        : 'direct eval(...) is not supported in the sandbox; use indirect eval `(0, eval)(source)` if you really need it.';
    return { ok: false, error: { type: 'SyntaxError', message, line: pos.line, column: pos.column, traceback: `SyntaxError: ${message}\n    at ${url}:${pos.line}:${pos.column}` } };
  }
  return { ok: true, source: `${source}\n//# sourceURL=${url}` };
}

/**
 * Types become spaces (amaro's strip-only mode, inside the sandbox's own wrapping so a top-level
 * `return` or `await` parses), so positions stay where the user wrote them. What has no type-only
 * erasure (enum, namespace, parameter properties) goes through amaro's transform mode, at the cost
 * of exact columns. A syntax error is reported where it is in the code as submitted.
 */
function stripTypes(code: string, url: string): Preprocessed {
  let stripped;
  try {
    stripped = stripTypeScript(WRAP_PREFIX + code + WRAP_SUFFIX, 'strip-only');
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'TYPESCRIPT_MISSING') throw error;
    return { ok: false, error: { type: 'ValidationError', message: TYPESCRIPT_MISSING } };
  }
  if (stripped.ok) return { ok: true, source: stripped.code.slice(WRAP_PREFIX.length, stripped.code.length - WRAP_SUFFIX.length) };
  const transformed = stripped.diagnostic.trapped ? stripped : stripTypeScript(WRAP_PREFIX + code + WRAP_SUFFIX, 'transform');
  if (transformed.ok) {
    // The transform prints the whole wrapper anew: keep what is between its first { and last }.
    const out = transformed.code;
    return { ok: true, source: out.slice(out.indexOf('{') + 1, out.lastIndexOf('}')) };
  }
  const { message, line, column: wrappedColumn } = transformed.diagnostic.trapped ? transformed.diagnostic : stripped.diagnostic;
  const column = Math.max(1, wrappedColumn - (line === 1 ? WRAP_PREFIX.length : 0));
  return { ok: false, error: { type: 'SyntaxError', message, line, column, traceback: `SyntaxError: ${message}\n    at ${url}:${line}:${column}` } };
}

type Edit = { start: number; end: number; text: string };

/** Inside a string, template or regex literal, an escape keeps the value and breaks the pattern. */
function escapeInLiteral(src: string, start: number, end: number, edits: Edit[]): void {
  const raw = src.slice(start, end);
  if (!/import|<!--|-->|eval/.test(raw)) return;
  const replaced = raw
    .replace(/\bimport(?=\s*(?:\(|\/[/*]))/g, '\\x69mport')
    .replace(/\beval(?=\s*\()/g, '\\x65val')
    .replace(/<!--/g, '\\x3c!--')
    .replace(/-->/g, '--\\x3e');
  if (replaced !== raw) edits.push({ start, end, text: replaced });
}

/** Inside a comment, meaning does not matter: change one character, keep the length. */
function defuseInComment(src: string, start: number, end: number, edits: Edit[]): void {
  const raw = src.slice(start, end);
  if (!/import|<!--|-->|eval/.test(raw)) return;
  const body = raw.slice(2, raw.startsWith('/*') ? -2 : undefined);
  const fixed = body
    .replace(/\bimport(?=\s*(?:\(|\/[/*]))/g, 'Import')
    .replace(/\beval(?=\s*\()/g, 'Eval')
    .replace(/<!--/g, '<!~~')
    .replace(/-->/g, '~~>');
  if (fixed !== body) edits.push({ start: start + 2, end: start + 2 + body.length, text: fixed });
}

function applyEdits(src: string, edits: Edit[]): string {
  if (edits.length === 0) return src;
  edits.sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const e of edits) {
    out += src.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + src.slice(at);
}

/** Line and column (1-based) in the user's code of an offset in the wrapped source. */
function positionOf(wrapped: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < wrapped.length; i++) {
    if (wrapped.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  const column = offset - lineStart + 1 - (line === 1 ? WRAP_PREFIX.length : 0);
  return { line, column: Math.max(1, column) };
}

function syntaxError(err: unknown, url: string): ErrorInfo {
  const e = err as { message?: string; loc?: { line: number; column: number } };
  const loc = e.loc ?? { line: 1, column: 0 };
  const line = loc.line;
  const column = Math.max(1, loc.column + 1 - (line === 1 ? WRAP_PREFIX.length : 0));
  let message = String(e.message ?? err).replace(/\s*\(\d+:\d+\)$/, '');
  if (/'import' and 'export' may (only )?appear at the top level/.test(message)) {
    message =
      'import/export statements are not available in code run by execute_code: the code is the body of an async function. ' +
      'Use `await import_skill("name")` for saved skills; `return` a value to make the result.';
  }
  return { type: 'SyntaxError', message, line, column, traceback: `SyntaxError: ${message}\n    at ${url}:${line}:${column}` };
}
