// The markdown body of SKILL.md when the caller gives none: how to use the skill and, for each
// export, its signature and leading doc comment (JSDoc, line comments, or a Python docstring).
// Signatures come from the code as written, so TypeScript types show in them.

import { languageFor } from '../config/languages.js';
import type { Comment, Node, Program } from 'acorn';
import type { SkillLanguage } from './skill-types.js';

export interface ExportDoc {
  name: string;
  kind: 'function' | 'class' | 'value';
  /** Parameters and return type as written, e.g. `(items, threshold = 7)`; '' for non-functions. */
  signature: string;
  /** The doc comment, cleaned of comment markers; '' when there is none. */
  doc: string;
}

interface FunctionLike extends Node {
  id?: { name: string; end: number } | null;
  params: Node[];
  body: Node;
}

/**
 * Docs of the exports of a JavaScript or TypeScript skill. `source` is the code as written;
 * `program` and `comments` come from parsing its type-blanked form, whose positions match.
 */
export function describeJsExports(
  source: string,
  program: Program,
  comments: readonly Comment[],
  locals: readonly { exported: string; local: string | null }[],
): ExportDoc[] {
  return locals.map(({ exported, local }) => {
    const found = local === null ? (exported === 'default' ? findDefaultExpression(program) : null) : findDeclaration(program, local);
    if (!found) return { name: exported, kind: 'value', signature: '', doc: '' };
    const doc = leadingDoc(source, comments, found.statement.start);
    if (found.fn) return { name: exported, kind: 'function', signature: signatureOf(source, found.fn), doc };
    return { name: exported, kind: found.isClass ? 'class' : 'value', signature: '', doc };
  });
}

function findDeclaration(program: Program, local: string): { statement: Node; fn: FunctionLike | null; isClass: boolean } | null {
  for (const statement of program.body) {
    let declaration: Node = statement;
    if (statement.type === 'ExportNamedDeclaration' || statement.type === 'ExportDefaultDeclaration') {
      if (!statement.declaration) continue;
      declaration = statement.declaration;
    }
    if (declaration.type === 'FunctionDeclaration' || declaration.type === 'ClassDeclaration') {
      const named = declaration as FunctionLike;
      if (named.id?.name !== local) continue;
      return { statement, fn: declaration.type === 'FunctionDeclaration' ? named : null, isClass: declaration.type === 'ClassDeclaration' };
    }
    if (declaration.type === 'VariableDeclaration') {
      const declarators = (declaration as Node & { declarations: { id: Node & { name?: string }; init?: Node | null }[] }).declarations;
      for (const d of declarators) {
        if (d.id.type !== 'Identifier' || d.id.name !== local) continue;
        const init = d.init;
        const isFn = init?.type === 'ArrowFunctionExpression' || init?.type === 'FunctionExpression';
        return { statement, fn: isFn ? (init as FunctionLike) : null, isClass: init?.type === 'ClassExpression' };
      }
    }
  }
  return null;
}

/** `export default (a, b) => ...` or `export default function (a) {}`: no local name to look up. */
function findDefaultExpression(program: Program): { statement: Node; fn: FunctionLike | null; isClass: boolean } | null {
  for (const statement of program.body) {
    if (statement.type !== 'ExportDefaultDeclaration') continue;
    const d = statement.declaration;
    const isFn = d.type === 'ArrowFunctionExpression' || d.type === 'FunctionExpression' || d.type === 'FunctionDeclaration';
    return { statement, fn: isFn ? (d as FunctionLike) : null, isClass: d.type === 'ClassDeclaration' || d.type === 'ClassExpression' };
  }
  return null;
}

function signatureOf(source: string, fn: FunctionLike): string {
  const from = fn.id ? fn.id.end : fn.start;
  const firstParam = fn.params[0];
  const paren = source.indexOf('(', from);
  let text: string;
  if (paren === -1 || paren > (firstParam?.start ?? fn.body.start)) {
    // An arrow function with a single bare parameter: `x => ...`.
    text = firstParam ? `(${source.slice(firstParam.start, fn.params[fn.params.length - 1]?.end ?? firstParam.end)})` : '()';
  } else {
    text = source.slice(paren, fn.body.start);
  }
  return text.replace(/\s+/g, ' ').replace(/\s*=>\s*$/, '').trim();
}

/** The comment block right above `start` (only whitespace between), cleaned. */
function leadingDoc(source: string, comments: readonly Comment[], start: number): string {
  const lines: string[] = [];
  let cursor = start;
  for (let i = comments.length - 1; i >= 0; i--) {
    const comment = comments[i];
    if (!comment || comment.end > cursor) continue;
    if (source.slice(comment.end, cursor).trim() !== '') break;
    if (comment.type === 'Block') {
      if (lines.length > 0) break;
      return cleanBlock(comment.value);
    }
    if (comment.value.startsWith('!')) break; // a hashbang line
    lines.unshift(comment.value.replace(/^\/?\s?/, ''));
    cursor = comment.start;
  }
  return lines.join('\n').trim();
}

function cleanBlock(value: string): string {
  return value
    .replace(/^\*/, '')
    .split(/\r?\n/)
    .map((line) => line.replace(/^\s*\*\s?/, '').trimEnd())
    .join('\n')
    .trim();
}

/** Docs of the top-level `def`s of a Python skill. */
export function describePythonExports(code: string, names: readonly string[]): ExportDoc[] {
  return names.map((name) => {
    const escaped = name.replace(/[$]/g, '\\$');
    const def = new RegExp(`^(?:async[ \\t]+)?def[ \\t]+${escaped}[ \\t]*(\\([^)]*\\))[ \\t]*(->[^:\\n]+)?:[^\\n]*\\n`, 'm').exec(code);
    if (!def) return { name, kind: 'function', signature: '()', doc: '' };
    const signature = `${def[1] ?? '()'}${def[2] ? ` ${def[2].trim()}` : ''}`.replace(/\s+/g, ' ');
    const rest = code.slice(def.index + def[0].length);
    const docstring = /^\s*[rRuU]?("""|''')([\s\S]*?)\1/.exec(rest);
    return { name, kind: 'function', signature, doc: docstring ? dedent(docstring[2] ?? '') : '' };
  });
}

function dedent(text: string): string {
  const lines = text.split(/\r?\n/);
  const indents = lines.slice(1).filter((l) => l.trim() !== '').map((l) => /^\s*/.exec(l)?.[0].length ?? 0);
  const cut = indents.length > 0 ? Math.min(...indents) : 0;
  return lines.map((l, i) => (i === 0 ? l : l.slice(cut))).join('\n').trim();
}

/** A one-line description from the first doc comment, else from the export names. */
export function defaultDescription(docs: readonly ExportDoc[]): string {
  const first = docs.find((d) => d.doc !== '')?.doc.split(/\n\s*\n|(?<=\.)\s/)[0]?.replace(/\s+/g, ' ').trim();
  if (first) return first;
  return docs.length > 0 ? `Exports ${docs.map((d) => d.name).join(', ')}.` : 'A skill with no exported functions.';
}

export function renderSkillBody(name: string, description: string, language: SkillLanguage, docs: readonly ExportDoc[]): string {
  const out: string[] = [`# ${name}`, '', description, '', '## Use', ''];
  // How a skill is used is its runtime's (src/config/languages.ts LanguageSkills.usage).
  out.push(...(languageFor(language)?.skills.usage(name, language, docs.map((d) => d.name)) ?? []));
  if (docs.length > 0) {
    out.push('', '## Exports');
    for (const doc of docs) {
      const title = doc.kind === 'function' ? `${doc.name}${doc.signature}` : doc.kind === 'class' ? `class ${doc.name}` : doc.name;
      out.push('', `### \`${title}\``);
      if (doc.doc !== '') out.push('', doc.doc);
    }
  }
  return out.join('\n') + '\n';
}
