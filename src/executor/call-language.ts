// The language of a call, decided by the executor and by none of its fronts: detected when the
// caller names none (detect-language.ts, CPython's own parser in the Python pool confirming what
// the coordinator's parsers cannot decide), and named in the result, with a SyntaxError's hint
// saying which language the code parses in instead. Every parse check the daemon makes (detection
// here, Python skills in the skill store) runs through `checkSyntax`, under one identity.

import { DAEMON_AGENT_NAME } from '../config/identities.js';
import { detectLanguage, otherLanguageHint } from './detect-language.js';
import type { Detection, DetectOptions } from './detect-language.js';
import type { CallIdentity, ExecutionRequest, ExecutionResult, Language } from './executor-types.js';
import { parseCheckRequest, PYTHON_RUNTIME, runtimeFor } from './runtimes.js';

/** A parser's first syntax error; null: the code parses; undefined: the check could not run. */
export type SyntaxVerdict = { line: number; message: string } | null | undefined;

/** How long a parse check may take, seconds: ast.parse takes milliseconds; this bounds a check stuck behind the agent's own calls. */
const CHECK_TIMEOUT_SECONDS = 60;

/** The parse checks' identity: no workspace, skills, tools or network. */
const CHECKER: CallIdentity = Object.freeze({
  agent: DAEMON_AGENT_NAME,
  sessionId: 'daemon-checks',
  workspaceNamespace: '',
  permissions: Object.freeze({ workspace: 'none', skills: 'none', tools: [], net: [] }),
}) as CallIdentity;

/**
 * Whom a parse check runs as. With `agent`, as that agent with no powers: in the agent's own share
 * of the pool, taking turns with other agents' calls, in an interpreter bound to the agent (whose
 * call is likely next). Under one identity of the daemon's, every agent's checks waited in one
 * queue, and one agent's flood of long code delayed all. Without one, as the daemon.
 */
export function checkerIdentity(agent?: string): CallIdentity {
  return agent === undefined ? CHECKER : { ...CHECKER, agent, sessionId: `daemon-checks-${agent}` };
}

export interface CallLanguageOptions {
  /** Runs a request in its (set) language: the executor's own call. */
  run(request: ExecutionRequest & { language: Language }, identity: CallIdentity): Promise<ExecutionResult>;
  /** Used when neither parsers nor heuristics can tell (limits.defaultLanguage). */
  defaultLanguage: Language;
  /** The languages this executor runs (a disabled runtime's are never detected). */
  enabled: readonly string[];
}

export class CallLanguage {
  readonly #o: CallLanguageOptions;
  readonly #python: boolean;

  constructor(options: CallLanguageOptions) {
    this.#o = options;
    this.#python = PYTHON_RUNTIME.languages.some((l) => options.enabled.includes(l));
  }

  /** The language to run `code` in, as `agent` would have it run (`names`: globals the call defines), and why. */
  detect(code: string, names: readonly string[], agent: string): Promise<Detection> {
    return detectLanguage(code, { ...this.#detectOptions(agent), names });
  }

  /** The result names its language; a syntax error that another language accepts says which, and how to ask for it. */
  async named(result: ExecutionResult, code: string, language: Language, agent: string): Promise<ExecutionResult> {
    if (result.success || result.error_type !== 'SyntaxError' || result.error === undefined) return { ...result, language };
    const hint = await otherLanguageHint(code, language, this.#detectOptions(agent));
    return hint ? { ...result, error: `${result.error} — ${hint}`, language } : { ...result, language };
  }

  /** `language`'s own parser on `code` (its row's parseCheck), as `agent` with no powers; undefined when it has none or it could not run. */
  async checkSyntax(language: string, code: string, agent?: string): Promise<SyntaxVerdict> {
    const row = runtimeFor(language);
    if (!row?.parseCheck || !row.languages.some((l) => this.#o.enabled.includes(l))) return undefined;
    const r = await this.#o.run(parseCheckRequest(row, code, CHECK_TIMEOUT_SECONDS), checkerIdentity(agent));
    return r.success ? ((r.result as { line: number; message: string } | null) ?? null) : undefined;
  }

  #detectOptions(agent: string): DetectOptions {
    return {
      python: this.#python,
      defaultLanguage: this.#o.defaultLanguage,
      agent,
      checkPython: (code) => this.checkSyntax(PYTHON_RUNTIME.languages[0] ?? '', code, agent),
    };
  }
}
