// How deeply code nests, read in one linear pass without parsing, for the TypeScript stripper's
// sake: amaro (SWC on WebAssembly) recurses as the code nests and traps when its fixed stack runs
// out (measured: 200 levels of parentheses, 300 of `x =>` or `${`, 500 of `a = ` or generics,
// 1,000 of ternaries, blocks or `if`s). A trapped instance is unusable, and reloading one costs
// about 0.1 s and leaves 5-8 MB behind in the thread: one agent's nested code must not get that far
// (the threads serve every agent). So code that nests past MAX_NESTING is refused before it runs.
//
// The count is conservative: each open bracket, `(` `[` `{` and a template's `${`, is a level, and
// within a level so is each `=>`, `?`, `=` and `<` since the last `;` or `,` (or the last line
// break that neither the line before nor the line after continues: `x =>` at a line's end, or
// `: a ? b` at the next line's start, keep counting). Strings and comments are skipped; a regular
// expression is read as code (its brackets can only raise the count). Ordinary code stays far
// below the limit: its deepest statements measure under 30.

/** Levels past which code is refused: half of what the stripper survives in its worst shape. */
export const MAX_NESTING = 100;
/**
 * Statements nested without braces (`if (a) if (b) ...`, `else if` chains) within one level since
 * its last `;`: the stripper traps at 1,000; counted apart, since long `else if` chains are real.
 */
export const MAX_NESTED_STATEMENTS = 400;
const STATEMENT_KEYWORDS = new Set(['if', 'else', 'for', 'while', 'do', 'with']);

const OPEN = new Set(['(', '[', '{']);
const CLOSE = new Set([')', ']', '}']);
/** Characters that, ending a line, let the expression go on to the next one. */
const CONTINUES = new Set(['=', '>', '?', ':', '<', '(', '[', '{', ',', '+', '-', '*', '/', '%', '&', '|', '^', '!', '~', '.']);

/**
 * The deepest nesting of `code` as counted above, stopping early once it passes `limit` (the
 * scan is linear either way).
 */
export function nestingDepth(code: string, limit = Number.POSITIVE_INFINITY): number {
  // One entry per open level: its count of nesting operators; template levels are marked.
  const pending: number[] = [0];
  const statements: number[] = [0];
  const templateLevel: boolean[] = [false];
  let total = 0;
  let deepest = 0;
  let last = '';
  let lineBreak = false;
  let i = 0;
  const n = code.length;
  const note = (): void => {
    const depth = pending.length - 1 + total;
    if (depth > deepest) deepest = depth;
  };
  const resetLevel = (): void => {
    total -= pending[pending.length - 1] as number;
    pending[pending.length - 1] = 0;
  };
  /** Past MAX_NESTED_STATEMENTS, the code counts as nested past any limit. */
  const statement = (): void => {
    const count = (statements[statements.length - 1] as number) + 1;
    statements[statements.length - 1] = count;
    if (count > MAX_NESTED_STATEMENTS) deepest = Number.POSITIVE_INFINITY;
  };
  /** Skips template text from `i` (just past a backtick or a `}` closing `${`), to its end or its next `${`. */
  const templateText = (): void => {
    while (i < n) {
      const c = code[i];
      if (c === '\\') {
        i += 2;
      } else if (c === '`') {
        i++;
        return;
      } else if (c === '$' && code[i + 1] === '{') {
        i += 2;
        pending.push(0);
        statements.push(0);
        templateLevel.push(true);
        note();
        return;
      } else {
        i++;
      }
    }
  };
  while (i < n) {
    if (deepest > limit) return deepest;
    const c = code[i] as string;
    const next = code[i + 1];
    if (c === '/' && next === '/') {
      while (i < n && code[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && next === '*') {
      const end = code.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
      continue;
    }
    if (c === '"' || c === "'") {
      i++;
      while (i < n && code[i] !== c && code[i] !== '\n') i += code[i] === '\\' ? 2 : 1;
      i++;
      last = c;
      continue;
    }
    if (c === '`') {
      i++;
      templateText();
      last = '`';
      continue;
    }
    if (c === '\n' || c === ' ' || c === '\t' || c === '\r') {
      if (c === '\n') lineBreak = true;
      i++;
      continue;
    }
    if (lineBreak) {
      lineBreak = false;
      if (!CONTINUES.has(last) && !CONTINUES.has(c)) resetLevel();
    }
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_' || c === '$') {
      let end = i + 1;
      while (end < n && /[\w$]/.test(code[end] as string)) end++;
      if (STATEMENT_KEYWORDS.has(code.slice(i, end))) statement();
      last = code[end - 1] as string;
      i = end;
      continue;
    }
    if (OPEN.has(c)) {
      pending.push(0);
      statements.push(0);
      templateLevel.push(false);
      note();
    } else if (CLOSE.has(c)) {
      if (pending.length > 1) {
        total -= pending.pop() as number;
        statements.pop();
        if (templateLevel.pop() === true && c === '}') {
          i++;
          templateText();
          last = '`';
          continue;
        }
      }
    } else if (c === ';' || c === ',') {
      resetLevel();
      if (c === ';') statements[statements.length - 1] = 0;
    } else if ((c === '=' && next === '>') || (c === '?' && next !== '.' && next !== '?') || (c === '=' && next !== '=' && !'=!<>'.includes(last)) || (c === '<' && next !== '<' && next !== '=')) {
      pending[pending.length - 1] = (pending[pending.length - 1] as number) + 1;
      total++;
      note();
      if (c === '=' && next === '>') {
        i += 2;
        last = '>';
        continue;
      }
    }
    last = c;
    i++;
  }
  return deepest;
}
