// What the parsers and the line heuristics say about a piece of code: pure computation, the same
// on the coordinator (short code) and on the detection helper thread (detect-worker.ts, long or
// deeply nested code), so one agent's big or pathological code never holds the event loop that
// every agent's calls share. detect-language.ts decides from these facts.

import { readings } from './detect-reading.js';
import type { Readings } from './detect-reading.js';
import { parseWrapped, preprocess } from '../../workers/js/preprocess.js';
import { tooDeepForStripper } from '../../workers/js/strip-types.js';
import { isStripperTrap } from '../util/trap-strikes.js';
import { WRAP_PREFIX } from '../../workers/kit/protocol.js';

/** Characters the line heuristics read: a sample says enough, and keeps them cheap on the coordinator. */
export const SIGNAL_SAMPLE_CHARS = 64 * 1024;
/**
 * Largest code the TypeScript stripper is tried on for detection, characters (it costs about
 * 1-2 s per MiB, and traps on nesting past about 150 levels: on the helper thread either way).
 * Bigger code goes to the configured default; the sandbox then reports its own syntax error.
 */
export const MAX_TYPESCRIPT_DETECT_CHARS = 32 * 1024;
/**
 * Largest code acorn is run on here, characters: its scope bookkeeping is quadratic in the names
 * one scope declares (50,000 consts in 1 MiB take about 6 s). Past it, the heuristics and the
 * Python pool decide, and the sandbox's own parse reports JavaScript errors off the coordinator.
 */
export const MAX_PARSE_DETECT_CHARS = 32 * 1024;

/** Lines that only Python writes: blocks opened by a colon, Python imports, comprehensions, literals. */
const PYTHON_LINE = [
  /^\s*(?:async\s+)?def\s+\w+\s*\(.*\)\s*(?:->.*)?:\s*(?:#.*)?$/,
  /^\s*class\s+\w+(?:\s*\(.*\))?\s*:\s*(?:#.*)?$/,
  /^\s*(?:if|elif|while|with|for)\b.*:\s*(?:#.*)?$/,
  /^\s*(?:else|try|finally)\s*:\s*(?:#.*)?$/,
  /^\s*except\b.*:\s*(?:#.*)?$/,
  /^\s*import\s+[A-Za-z_][\w.]*(?:\s+as\s+\w+)?(?:\s*,\s*[A-Za-z_][\w.]*)*\s*$/,
  /^\s*from\s+[\w.]+\s+import\s+[\w*(]/,
  /^\s*[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)+\s*=[^=]/, // tuple unpacking: a, b = f()
  /^\s*#(?!!)/,
];
/** Fragments only Python code holds, anywhere in a line. */
const PYTHON_FRAGMENT = [
  /\[[^\]\n]*\bfor\s+\w+(?:\s*,\s*\w+)*\s+in\b[^\]\n]*\]/, // list comprehension
  /\bjson\.(?:loads|dumps)\(/,
  /(?:^|[^.\w])exec\(/, // the seed's exec(load_skill(name)); the sandbox has no exec in JavaScript
  /(?:^|[=(,\s])(?:True|False|None)\b/,
  /\b(?:elif|lambda\s*\w*\s*:|not\s+in|is\s+not|isinstance\(|len\(|range\()/,
  /\b[fr]"[^"\n]*"|\b[fr]'[^'\n]*'/,
  /\w\[-?\w*:-?\w*(?::-?\w*)?\]/, // a slice: xs[1:3]
];
/** Fragments only JavaScript or TypeScript holds. */
const JS_FRAGMENT = [
  /\b(?:const|let|var|function)\s+[\w$[{]/,
  /=>/,
  /===|!==|&&|\|\||\+\+|--(?!>)/,
  /;\s*(?:\/\/.*)?$/,
  /\b(?:console|JSON|Math|Object|Array|Promise)\./,
  /^\s*\/\/|\/\*/,
  /\{\s*$/,
  /^\s*\}/,
];

/** How Python-like and how JavaScript-like the code looks: counts of matching lines. */
export function languageSignals(code: string): { python: number; javascript: number } {
  let python = 0;
  let javascript = 0;
  let inTripleQuote = false;
  for (const line of code.slice(0, SIGNAL_SAMPLE_CHARS).split('\n')) {
    // A long docstring of prose must not vote either way.
    const triple = (line.match(/"""|'''/g) ?? []).length;
    if (inTripleQuote) {
      if (triple % 2 === 1) inTripleQuote = false;
      continue;
    }
    if (triple % 2 === 1) {
      inTripleQuote = true;
      python++;
      continue;
    }
    if (line.length > 2000) continue; // minified or data: says nothing, and keeps the regexes cheap
    if (PYTHON_LINE.some((re) => re.test(line)) || PYTHON_FRAGMENT.some((re) => re.test(line))) python++;
    if (JS_FRAGMENT.some((re) => re.test(line))) javascript++;
  }
  return { python, javascript };
}

/**
 * Whether code parses as TypeScript: it does, it does not, or it is too deep for the stripper
 * (refused by the nesting guard, or it trapped and was replaced).
 */
export type TypeScriptVerdict = 'parses' | 'fails' | 'too-deep';

/** Whether the code parses as the body of an async JavaScript (or TypeScript) function. */
export function parsesAs(code: string, language: 'javascript' | 'typescript'): boolean {
  if (language === 'typescript') return typescriptVerdict(code) === 'parses';
  if (code.length > MAX_PARSE_DETECT_CHARS) return false;
  return jsFailure(code) === undefined;
}

/**
 * Whether the code parses as TypeScript. JavaScript that acorn parses does; the stripper is asked
 * only where acorn's own error points at TypeScript syntax, since code that fails as JavaScript
 * before any type fails as TypeScript too, and the stripper costs 1-2 s per MiB and traps on long
 * chains (strip-types.ts), where acorn costs a fraction of that.
 */
export function typescriptVerdict(code: string): TypeScriptVerdict {
  return typescriptDiagnosis(code).verdict;
}

/** The verdict, with the stripper's refusal when it is 'too-deep' and whether the stripper trapped (a fresh one was loaded). */
export interface TypeScriptDiagnosis {
  verdict: TypeScriptVerdict;
  /** The stripper's message for code too deep for it. */
  tooDeep?: string;
  /** It trapped (not only the nesting guard's refusal): a cost to charge to the caller. */
  trapped?: boolean;
}

/** typescriptVerdict, with the refusal's words (what the run would say) and whether it trapped. */
export function typescriptDiagnosis(code: string): TypeScriptDiagnosis {
  if (code.length > MAX_TYPESCRIPT_DETECT_CHARS) return { verdict: 'fails' };
  const failure = jsFailure(code);
  if (failure === undefined) return { verdict: 'parses' };
  if (!typeScriptAt(code, failure)) return { verdict: 'fails' };
  try {
    const pre = preprocess(code, 'typescript');
    if (pre.ok) return { verdict: 'parses' };
    const message = pre.error.message;
    if (!tooDeepForStripper(message)) return { verdict: 'fails' };
    return { verdict: 'too-deep', tooDeep: message, trapped: isStripperTrap(message) };
  } catch {
    return { verdict: 'fails' }; // nesting deeper than the compiler's recursion (RangeError): not for detection to decide
  }
}

/** Where acorn stops on `code` (an offset into it), -1 past its recursion; undefined when it parses. */
function jsFailure(code: string): number | undefined {
  // The sandbox's own wrapping, without the token and comment bookkeeping preprocess needs.
  try {
    parseWrapped(code);
    return undefined;
  } catch (error) {
    const pos = (error as { pos?: unknown }).pos;
    return error instanceof SyntaxError && typeof pos === 'number' ? pos - WRAP_PREFIX.length : -1;
  }
}

/** Characters TypeScript adds around where JavaScript stops: `x: T`, `<T>`, `x!`, `a?:`, `@dec`. */
const TYPE_PUNCTUATION = /[:<>!?@]/;
/** Words TypeScript adds: acorn stops at them or at the name after them. */
const TYPE_WORDS = new Set([
  'interface', 'type', 'enum', 'as', 'satisfies', 'declare', 'namespace', 'module', 'abstract', 'implements',
  'private', 'public', 'protected', 'readonly', 'override', 'accessor', 'keyof', 'infer', 'is', 'asserts', 'unique', 'global',
]);

/** Whether JavaScript stopped at `at` where TypeScript syntax is: on or just after its punctuation or words. */
export function typeScriptAt(code: string, at: number): boolean {
  if (at < 0) return false;
  const before = code.slice(Math.max(0, at - 3), at + 1);
  if (TYPE_PUNCTUATION.test(before)) return true;
  // The last two words up to the end of the one acorn stopped at: `interface Foo`, `x as`, `abstract class`.
  const end = at + (/^[\w$]*/.exec(code.slice(at, at + 40))?.[0].length ?? 0);
  const last = code.slice(Math.max(0, at - 40), end).match(/[A-Za-z_$][\w$]*/g)?.slice(-2) ?? [];
  return last.some((w) => TYPE_WORDS.has(w));
}

/** The facts detection decides from; plain data (it crosses from the helper thread). */
export interface CodeFacts {
  signals: { python: number; javascript: number };
  /** The readings of code JavaScript parses (undefined when it does not, or it is too long to parse here). */
  read?: Readings;
  /** Whether the code parses as JavaScript (too long to parse: whether it does not look like Python). */
  jsParses: boolean;
}

/** Signals, the one acorn parse and its readings, for `code` with `names` defined by the call. */
export function codeFacts(code: string, names: readonly string[]): CodeFacts {
  const signals = languageSignals(code);
  const looksPython = signals.python > 0 && signals.python >= signals.javascript;
  // Too big to parse here: unless it looks like Python, it goes where the default says.
  const read = code.length > MAX_PARSE_DETECT_CHARS ? undefined : readings(code, new Set(names));
  const jsParses = code.length > MAX_PARSE_DETECT_CHARS ? !looksPython : read !== undefined;
  return { signals, read, jsParses };
}
