// Decides the language of execute_code when the caller gives none (the seed's prompts never do:
// the seed only ran Python). Parsers decide where they can: acorn for JavaScript, the sandbox's
// own TypeScript path, CPython's ast.parse in the Python pool. Line heuristics, linear in the code,
// only pick which parser to trust when both could accept the text.

import { codeFactsOffLoop, parsesOffLoop, typescriptOffLoop } from './detect-helper.js';
import type { Language } from './executor-types.js';

export { languageSignals, MAX_PARSE_DETECT_CHARS, MAX_TYPESCRIPT_DETECT_CHARS, parsesAs, SIGNAL_SAMPLE_CHARS, typeScriptAt } from './detect-facts.js';

/** Why a language was chosen: shown in logs and tests, never needed by callers. */
export type DetectionReason =
  | 'javascript-parses'
  | 'typescript-parses'
  /**
   * TypeScript too deep for the type stripper (it trapped on the helper thread): TypeScript, whose
   * run then fails with the stripper's clear error, not JavaScript's syntax error and a second
   * stripper run for its hint.
   */
  | 'typescript-too-deep'
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
  /**
   * With 'typescript-too-deep': the stripper's refusal, which is the call's answer. The code is not
   * run, so it traps the stripper once (here), not a second time in the sandbox.
   */
  tooDeep?: string;
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
  /** Whose call this is: parsing on the helper thread takes turns by agent (detect-helper.ts). */
  agent?: string;
}

/**
 * The language to run `code` in. JavaScript that parses and looks no more like Python than like
 * JavaScript is JavaScript; code that looks like Python is Python once CPython agrees (without
 * the check: when it holds nothing only JavaScript writes); TypeScript is tried when JavaScript
 * does not parse.
 */
export async function detectLanguage(code: string, options: DetectOptions): Promise<Detection> {
  // One acorn parse (the readings': undefined when JavaScript does not parse) and the line signals.
  const { signals, read, jsParses } = await codeFactsOffLoop(code, options.names ?? [], options.agent);
  const looksPython = signals.python > 0 && signals.python >= signals.javascript;
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
  const typescript = await typescriptOffLoop(code, options.agent);
  if (typescript.verdict === 'parses') return { language: 'typescript', reason: 'typescript-parses' };
  if (typescript.verdict === 'too-deep') return { language: 'typescript', reason: 'typescript-too-deep', tooDeep: typescript.tooDeep };
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
    if (await parsesOffLoop(code, options.agent)) return 'this looks like JavaScript; pass language: "javascript"';
    if ((await typescriptOffLoop(code, options.agent)).verdict === 'parses') return 'this looks like TypeScript; pass language: "typescript"';
    return undefined;
  }
  if (language === 'javascript' && !(await parsesOffLoop(code, options.agent)) && (await typescriptOffLoop(code, options.agent)).verdict === 'parses') {
    return 'this looks like TypeScript; pass language: "typescript"';
  }
  const { signals } = await codeFactsOffLoop(code, [], options.agent);
  if (signals.python === 0) return undefined;
  if (!options.python) {
    return signals.python >= signals.javascript ? 'this looks like Python, which this daemon does not run (sandbox.pythonProcesses is 0)' : undefined;
  }
  const verdict = await options.checkPython?.(code);
  if (verdict === null || (verdict === undefined && signals.python > signals.javascript)) return 'this looks like Python; pass language: "python"';
  return undefined;
}
