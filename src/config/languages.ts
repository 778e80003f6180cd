// One row per language: what the domains (skills, the CLI) and the executor both know of it:
// its names, file extensions, skill files and formats, the parse check and the option that
// disables it. The executor's row (src/executor/runtimes.ts) adds how it runs; a third language
// is one row here and one there, plus its worker folder.

/** A runtime's skills (src/skills): their file, how they are read and compiled, how they are used. */
export interface LanguageSkills {
  /** The code file of a skill folder, per language. */
  readonly codeFiles: Readonly<Record<string, string>>;
  /**
   * 'es-module': parsed and compiled at save, its imports resolved and pinned then (import_skill);
   * 'python-source': kept as written, its top-level definitions exported, checked by the runtime's
   * parse check; it loads other skills when it runs (load_skill).
   */
  readonly format: 'es-module' | 'python-source';
  /** The lines of a skill's SKILL.md that show how to use it, in a fenced block. */
  usage(name: string, language: string, exportNames: readonly string[]): string[];
  /** What an 'es-module' skill may import, said in the refusal of any other (a skill imports only skills of its own runtime). */
  readonly importsOnly: string;
}

export interface LanguageRow {
  /** execute_code's `language` values this runtime runs; the first names the runtime in messages and health. */
  readonly languages: readonly string[];
  /** The language as people write it ('JavaScript'), for messages. */
  readonly label: string;
  /** The option that disables the runtime, for the message a call in a disabled language gets. */
  readonly disabledBy?: string;
  /**
   * A program of this runtime that parses the code in its global `src` without running it and
   * returns null, or { line, message } for a syntax error (execute_code's detection, skill saves).
   */
  readonly parseCheck?: string;
  /** `exec --language` short names (js, py) beside the languages themselves. */
  readonly aliases: Readonly<Record<string, string>>;
  /** A file's extension that names its language (`exec FILE`), lower case with the dot. */
  readonly extensions: Readonly<Record<string, string>>;
  readonly skills: LanguageSkills;
}

/** JavaScript and TypeScript. */
export const JAVASCRIPT_LANGUAGE: LanguageRow = {
  languages: ['javascript', 'typescript'],
  label: 'JavaScript',
  aliases: { js: 'javascript', ts: 'typescript' },
  extensions: { '.js': 'javascript', '.mjs': 'javascript', '.cjs': 'javascript', '.ts': 'typescript', '.mts': 'typescript', '.cts': 'typescript' },
  skills: {
    codeFiles: { javascript: 'index.js', typescript: 'index.ts' },
    format: 'es-module',
    usage(name, language, exportNames) {
      const names = exportNames.filter((n) => /^[A-Za-z_$][\w$]*$/.test(n) && n !== 'default');
      const binding = names.length > 0 ? `{ ${names.join(', ')} }` : 'skill';
      return ['```' + language, `const ${binding} = await import_skill(${JSON.stringify(name)});`, '```'];
    },
    importsOnly: 'JavaScript and TypeScript skills can import only JavaScript or TypeScript skills',
  },
};

/** Python. */
export const PYTHON_LANGUAGE: LanguageRow = {
  languages: ['python'],
  label: 'Python',
  disabledBy: 'sandbox.pythonProcesses is 0',
  // CPython's own parser, in the Python pool.
  parseCheck: 'import ast\ntry:\n    ast.parse(src)\n    result = None\nexcept SyntaxError as e:\n    result = {"line": e.lineno or 1, "message": e.msg}\n',
  aliases: { py: 'python' },
  extensions: { '.py': 'python' },
  skills: {
    codeFiles: { python: 'index.py' },
    format: 'python-source',
    usage: (name) => ['```python', `exec(load_skill(${JSON.stringify(name)}))`, '```'],
    importsOnly: 'Python skills load other skills when they run (load_skill)',
  },
};

/** The languages of this build. */
export const LANGUAGE_ROWS: readonly LanguageRow[] = Object.freeze([JAVASCRIPT_LANGUAGE, PYTHON_LANGUAGE]);

/** The row of `language`, or undefined. */
export function languageFor(language: string, rows: readonly LanguageRow[] = LANGUAGE_ROWS): LanguageRow | undefined {
  return rows.find((r) => r.languages.includes(language));
}

/** Every language's skill code file, over the rows (index.js, index.ts, index.py). */
export function skillCodeFiles(rows: readonly LanguageRow[] = LANGUAGE_ROWS): Record<string, string> {
  return Object.assign({}, ...rows.map((r) => r.skills.codeFiles)) as Record<string, string>;
}

/** The skill format of `language` ('es-module' for an unknown one: the strictest). */
export function skillFormat(language: string): LanguageSkills['format'] {
  return languageFor(language)?.skills.format ?? 'es-module';
}

/**
 * Why a skill in `importer`'s language may not import one in `imported`'s, or undefined when it
 * may: an 'es-module' skill imports only skills of its own runtime. `what` names the imported
 * skill's runtime ("Python"), `rule` is the importer's LanguageSkills.importsOnly.
 */
export function importRefusal(importer: string, imported: string): { what: string; rule: string } | undefined {
  const from = languageFor(importer);
  const to = languageFor(imported);
  if (!from || from.skills.format !== 'es-module' || from === to) return undefined;
  return { what: to?.label ?? imported, rule: from.skills.importsOnly };
}
