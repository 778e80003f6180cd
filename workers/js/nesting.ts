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
  return new NestingScan(code).run(limit);
}

const WORD_START = /[A-Za-z_$]/;
const WORD_CHAR = /[\w$]/;

class NestingScan {
  readonly #code: string;
  #i = 0;
  /** One entry per open level: its count of nesting operators, of brace-less statements, whether it is a template's `${`. */
  readonly #pending: number[] = [0];
  readonly #statements: number[] = [0];
  readonly #template: boolean[] = [false];
  #total = 0;
  #deepest = 0;
  /** The last significant character, and whether a line break came after it. */
  #last = '';
  #lineBreak = false;

  constructor(code: string) {
    this.#code = code;
  }

  run(limit: number): number {
    const code = this.#code;
    while (this.#i < code.length && this.#deepest <= limit) {
      const c = code[this.#i] as string;
      const next = code[this.#i + 1];
      if (c === '/' && (next === '/' || next === '*')) this.#comment(next);
      else if (c === '"' || c === "'") this.#string(c);
      else if (c === '`') this.#templateText(1);
      else if (c === '\n' || c === ' ' || c === '\t' || c === '\r') this.#space(c);
      else this.#token(c, next);
    }
    return this.#deepest;
  }

  #comment(kind: string | undefined): void {
    const end = this.#code.indexOf(kind === '/' ? '\n' : '*/', this.#i + 2);
    this.#i = end < 0 ? this.#code.length : kind === '/' ? end : end + 2;
  }

  #string(quote: string): void {
    const code = this.#code;
    let i = this.#i + 1;
    while (i < code.length && code[i] !== quote && code[i] !== '\n') i += code[i] === '\\' ? 2 : 1;
    this.#i = i + 1;
    this.#last = quote;
  }

  /** Skips template text from `skip` past the current position, to its end or its next `${`. */
  #templateText(skip: number): void {
    const code = this.#code;
    let i = this.#i + skip;
    while (i < code.length) {
      const c = code[i];
      if (c === '\\') {
        i += 2;
      } else if (c === '`') {
        i++;
        break;
      } else if (c === '$' && code[i + 1] === '{') {
        i += 2;
        this.#open(true);
        break;
      } else {
        i++;
      }
    }
    this.#i = i;
    this.#last = '`';
  }

  #space(c: string): void {
    if (c === '\n') this.#lineBreak = true;
    this.#i++;
  }

  #token(c: string, next: string | undefined): void {
    if (this.#lineBreak) {
      this.#lineBreak = false;
      if (!CONTINUES.has(this.#last) && !CONTINUES.has(c)) this.#resetLevel();
    }
    if (WORD_START.test(c)) return this.#word();
    this.#i++;
    this.#last = c;
    if (OPEN.has(c)) this.#open(false);
    else if (CLOSE.has(c)) this.#close(c);
    else if (c === ';' || c === ',') this.#endOfPart(c);
    else if (c === '=' && next === '>') {
      this.#i++;
      this.#last = '>';
      this.#operator();
    } else if ((c === '?' && next !== '.' && next !== '?') || (c === '=' && next !== '=' && !'=!<>'.includes(this.#previous())) || (c === '<' && next !== '<' && next !== '=')) {
      this.#operator();
    }
  }

  /** The character before the current token (for `==`, `<=`, `!=`: no assignment). */
  #previous(): string {
    return this.#code[this.#i - 2] ?? '';
  }

  #word(): void {
    const code = this.#code;
    let end = this.#i + 1;
    while (end < code.length && WORD_CHAR.test(code[end] as string)) end++;
    if (STATEMENT_KEYWORDS.has(code.slice(this.#i, end))) {
      const count = (this.#statements[this.#statements.length - 1] as number) + 1;
      this.#statements[this.#statements.length - 1] = count;
      // Past MAX_NESTED_STATEMENTS, the code counts as nested past any limit.
      if (count > MAX_NESTED_STATEMENTS) this.#deepest = Number.POSITIVE_INFINITY;
    }
    this.#last = code[end - 1] as string;
    this.#i = end;
  }

  #open(template: boolean): void {
    this.#pending.push(0);
    this.#statements.push(0);
    this.#template.push(template);
    this.#note();
  }

  #close(c: string): void {
    if (this.#pending.length === 1) return;
    this.#total -= this.#pending.pop() as number;
    this.#statements.pop();
    if (this.#template.pop() === true && c === '}') this.#templateText(0);
  }

  #endOfPart(c: string): void {
    this.#resetLevel();
    if (c === ';') this.#statements[this.#statements.length - 1] = 0;
  }

  #operator(): void {
    this.#pending[this.#pending.length - 1] = (this.#pending[this.#pending.length - 1] as number) + 1;
    this.#total++;
    this.#note();
  }

  #resetLevel(): void {
    this.#total -= this.#pending[this.#pending.length - 1] as number;
    this.#pending[this.#pending.length - 1] = 0;
  }

  #note(): void {
    const depth = this.#pending.length - 1 + this.#total;
    if (depth > this.#deepest) this.#deepest = depth;
  }
}
