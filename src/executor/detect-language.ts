// Decides the language of execute_code when the caller gives none (the seed's prompts never do:
// the seed only ran Python). Parsers decide where they can: acorn for JavaScript, the sandbox's
// own TypeScript path, CPython's ast.parse in the Python pool. Line heuristics, linear in the code,
// only pick which parser to trust when both could accept the text.

import { Parser } from 'acorn';
import { readings } from './detect-reading.js';
import { preprocess } from '../../workers/preprocess.js';
import { WRAP_PREFIX } from '../../workers/protocol.js';
import type { Language } from './executor-types.js';

/** Why a language was chosen: shown in logs and tests, never needed by callers. */
export type DetectionReason =
  | 'javascript-parses'
  | 'typescript-parses'
  | 'python-parses'
  | 'python-looking'
  /** Both parse; as JavaScript it would fail or differ (undeclared names, Python builtins, `//`), as Python not. */
  | 'python-reading'
  /** Both parse and read alike: JavaScript, which needs no Python process. */
  | 'javascript-reading'
  | 'default';

export interface Detection {
  language: Language;
  reason: DetectionReason;
}

/** `{line, message}` of Python's first syntax error, null when it parses, undefined when unknown. */
export type PythonSyntaxCheck = (code: string) => Promise<{ line: number; message: string } | null | undefined>;

export interface DetectOptions {
  /** Whether this daemon runs Python at all. */
  python: boolean;
  /** Used when neither parser nor heuristics can tell (config limits.defaultLanguage). */
  defaultLanguage: Language;
  /** CPython's own verdict (the Python pool); without it the heuristics decide alone. */
  checkPython?: PythonSyntaxCheck;
  /** Names the call defines in every language (context_vars). */
  names?: readonly string[];
}

/** Characters the line heuristics read: a sample says enough, and keeps them cheap on the coordinator. */
export const SIGNAL_SAMPLE_CHARS = 64 * 1024;
/**
 * Largest code the TypeScript parser is tried on here, characters: stripping types costs about
 * 0.5 s per MiB on the coordinator's event loop (plus loading the compiler once, about 1 s).
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

/** Whether the code parses as the body of an async JavaScript (or TypeScript) function. */
export function parsesAs(code: string, language: 'javascript' | 'typescript'): boolean {
  if (language === 'typescript') {
    if (code.length > MAX_TYPESCRIPT_DETECT_CHARS) return false;
    try {
      return preprocess(code, language).ok;
    } catch {
      return false; // nesting deeper than the compiler's recursion (RangeError): not for detection to decide
    }
  }
  if (code.length > MAX_PARSE_DETECT_CHARS) return false;
  // The sandbox's own wrapping, without the token and comment bookkeeping preprocess needs.
  try {
    Parser.parse(`${WRAP_PREFIX}${code}\n})`, { ecmaVersion: 'latest', sourceType: 'script', allowHashBang: false });
    return true;
  } catch {
    return false;
  }
}

/**
 * The language to run `code` in. JavaScript that parses and looks no more like Python than like
 * JavaScript is JavaScript; code that looks like Python is Python once CPython agrees (without
 * the check: when it holds nothing only JavaScript writes); TypeScript is tried when JavaScript
 * does not parse.
 */
export async function detectLanguage(code: string, options: DetectOptions): Promise<Detection> {
  const signals = languageSignals(code);
  const looksPython = signals.python > 0 && signals.python >= signals.javascript;
  // Too big to parse here: unless it looks like Python, it goes where the default says.
  // One acorn parse: the readings' (undefined when JavaScript does not parse).
  const read = code.length > MAX_PARSE_DETECT_CHARS ? undefined : readings(code, new Set(options.names ?? []));
  const jsParses = code.length > MAX_PARSE_DETECT_CHARS ? !looksPython : read !== undefined;
  // Code both parsers accept is JavaScript unless it looks at least as much like Python.
  // Code both parse, in the part of JavaScript that Python reads alike: the names each reading
  // would fail on decide, with no Python process needed.
  if (read?.pythonCompatible) {
    const jsWrong = read.jsFailures.length > 0 || read.jsDiffers.length > 0;
    if (options.python && jsWrong && read.pyFailures.length === 0) return { language: 'python', reason: 'python-reading' };
    if (!jsWrong) return { language: 'javascript', reason: 'javascript-reading' };
  }
  if (jsParses && !looksPython) return { language: 'javascript', reason: 'javascript-parses' };

  if (options.python && looksPython) {
    const verdict = await options.checkPython?.(code);
    if (verdict === null) return { language: 'python', reason: 'python-parses' };
    if (verdict === undefined && (!jsParses || signals.javascript === 0)) return { language: 'python', reason: 'python-looking' };
  }
  if (jsParses) return { language: 'javascript', reason: 'javascript-parses' };
  if (parsesAs(code, 'typescript')) return { language: 'typescript', reason: 'typescript-parses' };
  // Parses nowhere else: CPython has the last word (a conditional expression or a `#` comment
  // gives no line signal), then the signals say where the error should come from.
  if (options.python && !looksPython && (await options.checkPython?.(code)) === null) return { language: 'python', reason: 'python-parses' };
  if (options.python && looksPython) return { language: 'python', reason: 'python-looking' };
  const fallback = options.defaultLanguage === 'python' && !options.python ? 'javascript' : options.defaultLanguage;
  return { language: fallback, reason: 'default' };
}

/**
 * For a SyntaxError in `language`: a hint naming the language the code parses in instead, with
 * the argument to pass, or undefined when no other language accepts it either.
 */
export async function otherLanguageHint(code: string, language: Language, options: DetectOptions): Promise<string | undefined> {
  if (language === 'python') {
    if (parsesAs(code, 'javascript')) return 'this looks like JavaScript; pass language: "javascript"';
    if (parsesAs(code, 'typescript')) return 'this looks like TypeScript; pass language: "typescript"';
    return undefined;
  }
  if (language === 'javascript' && parsesAs(code, 'typescript') && !parsesAs(code, 'javascript')) {
    return 'this looks like TypeScript; pass language: "typescript"';
  }
  const signals = languageSignals(code);
  if (signals.python === 0) return undefined;
  if (!options.python) {
    return signals.python >= signals.javascript ? 'this looks like Python, which this daemon does not run (sandbox.pythonProcesses is 0)' : undefined;
  }
  const verdict = await options.checkPython?.(code);
  if (verdict === null || (verdict === undefined && signals.python > signals.javascript)) return 'this looks like Python; pass language: "python"';
  return undefined;
}
