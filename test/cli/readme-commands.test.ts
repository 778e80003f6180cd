// Every command the README and the docs it links to show must work: the shell lines of their code
// blocks and the commands and flags in their inline code and command tables are extracted, each invocation of our CLI is
// parsed against the CLI's own option table (flags that do not exist, a value given to a boolean
// flag, an unknown command fail), npm scripts must exist, the package is never installed from a
// registry it is not on, and the safe commands (--help, --version, exec snippets) are run.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMAND_FLAGS, UsageError, parseCommand } from '../../src/cli/args.js';
import type { CommandName } from '../../src/config/options.js';
import { REPO } from '../fixtures/mcp/cli.js';

const README = readFileSync(path.join(REPO, 'README.md'), 'utf8');
/** The README and the pages its text moved to; each is checked as strictly as the README. */
const PAGES = ['README.md', 'docs/architecture.md', 'docs/configuration.md', 'docs/sandbox-api.md', 'docs/security-model.md', 'docs/tools.md', 'bench/RESULTS.md'];
const TEXTS = PAGES.map((file) => ({ file, text: readFileSync(path.join(REPO, file), 'utf8') }));
const SCRIPTS = (JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
const COMMANDS = new Set<string>(Object.keys(COMMAND_FLAGS));
const STATUS_FLAGS = new Set(['--url', '--token', '--json', '--help', '-h']);
const CLI = /^(?:npx\s+)?(?:code-execution-mcp|node\s+bin\/code-execution-mcp\.js)(?:\s+|$)/;

interface Shown {
  text: string;
  line: number;
  file: string;
  where: 'block' | 'inline' | 'table';
}

/** Shell lines of ```sh/bash/shell blocks, comments removed, split at && ; | into commands. */
function blockCommands(): Shown[] {
  return TEXTS.flatMap(({ file, text }) => blockCommandsOf(file, text));
}

function blockCommandsOf(file: string, text: string): Shown[] {
  const out: Shown[] = [];
  let shell = false;
  let inBlock = false;
  text.split('\n').forEach((raw, i) => {
    const fence = /^```(\S*)/.exec(raw);
    if (fence) {
      inBlock = !inBlock;
      shell = inBlock && ['sh', 'bash', 'shell', 'console'].includes(fence[1] ?? '');
      return;
    }
    if (!shell) return;
    const line = raw.replace(/(^|\s)#.*$/, '').trim();
    if (line === '') return;
    out.push({ text: line, line: i + 1, file, where: 'block' });
  });
  return out;
}

/** Inline code spans (outside code blocks); table cells are marked. */
function inlineSpans(): Shown[] {
  return TEXTS.flatMap(({ file, text }) => inlineSpansOf(file, text));
}

function inlineSpansOf(file: string, text: string): Shown[] {
  const out: Shown[] = [];
  let inBlock = false;
  text.split('\n').forEach((raw, i) => {
    if (raw.startsWith('```')) {
      inBlock = !inBlock;
      return;
    }
    if (inBlock) return;
    for (const m of raw.matchAll(/`([^`]+)`/g)) out.push({ text: (m[1] ?? '').replace(/\\\|/g, '|'), line: i + 1, file, where: raw.startsWith('|') ? 'table' : 'inline' });
  });
  return out;
}

/** Splits a shell line into simple commands and their words (quotes respected, no expansion). */
function simpleCommands(line: string): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word = '';
  let quote: string | null = null;
  let pending = false;
  const flush = (): void => {
    if (pending) words.push(word);
    word = '';
    pending = false;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote) {
      if (c === quote) quote = null;
      else word += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      pending = true;
    } else if (/\s/.test(c)) flush();
    else if (c === '|' || c === ';' || c === '&') {
      flush();
      if (line[i + 1] === c) i++;
      if (words.length > 0) commands.push(words);
      words = [];
    } else {
      word += c;
      pending = true;
    }
  }
  flush();
  if (words.length > 0) commands.push(words);
  return commands;
}

/** What a placeholder in the README stands for when its command is parsed. */
function concrete(word: string): string {
  return /^[A-Z][A-Z0-9_]*$/.test(word) ? 'x' : word;
}

/** Problems of one invocation of our CLI (the words after the program name). */
function cliProblems(args: readonly string[], where: Shown['where']): string[] {
  const [command, ...rest] = args;
  if (command === undefined || ['--help', '-h', '--version', '-v', 'help', 'version'].includes(command)) return [];
  if (command === 'status') return rest.filter((w) => w.startsWith('-') && !STATUS_FLAGS.has(w.replace(/=.*$/, ''))).map((w) => `status has no flag ${w}`);
  if (!COMMANDS.has(command)) return [`no command "${command}" (the commands are ${[...COMMANDS].join(', ')}, status)`];
  return flagProblems(command as CommandName, rest, where);
}

/** Flags checked with the CLI's own parser; a table row's [optional] syntax is checked flag by flag. */
function flagProblems(command: CommandName, words: readonly string[], where: Shown['where']): string[] {
  if (where === 'table') {
    const flags = words.join(' ').match(/--?[a-z][a-z-]*/g) ?? [];
    return flags.flatMap((flag) => {
      try {
        const probe = parseCommand(command, [flag, 'x']);
        return probe.help || Object.keys(probe.configFlags).length + Object.keys(probe.own).length + (probe.configFile ? 1 : 0) > 0 ? [] : [`${command} ${flag} was not recognised`];
      } catch (error) {
        return [`${command} ${flag}: ${error instanceof Error ? error.message : String(error)}`];
      }
    });
  }
  try {
    const parsed = parseCommand(command, words.map(concrete));
    const positionalsAllowed = command === 'exec' || command === 'import-catalog' ? 1 : 0;
    if (parsed.positionals.length > positionalsAllowed) return [`${command} ${words.join(' ')}: "${parsed.positionals.join(' ')}" would be an argument, not a flag value (a boolean flag takes no value: --flag / --no-flag)`];
    return [];
  } catch (error) {
    if (error instanceof UsageError) return [`${command} ${words.join(' ')}: ${error.message}`];
    throw error;
  }
}

/** Flags of a bare span: parsed by `command`'s parser, and nothing may be left over as an argument. */
function bareFlagProblems(command: CommandName, words: readonly string[]): string[] {
  try {
    const parsed = parseCommand(command, words);
    if (parsed.positionals.length > 0) return [`${words.join(' ')}: "${parsed.positionals.join(' ')}" would be an argument, not a flag value (a boolean flag takes no value: --flag / --no-flag)`];
    return [];
  } catch (error) {
    if (error instanceof UsageError) return [`${command} ${words.join(' ')}: ${error.message}`];
    throw error;
  }
}

/** Node's and V8's own flags (the README names some the sandbox processes run with). */
const RUNTIME_FLAGS = new Set<string>([
  ...process.allowedNodeEnvironmentFlags,
  ...(spawnSync(process.execPath, ['--v8-options'], { encoding: 'utf8' }).stdout.match(/^\s+(--[a-z0-9-]+)/gm) ?? []).map((f) => f.trim()),
]);

/** Problems of one shown command (a shell line, or an inline span that is a command or flags). */
function problemsOf(shown: Shown): string[] {
  const problems: string[] = [];
  const text = shown.text.trim();
  for (const words of simpleCommands(text)) {
    const joined = words.join(' ');
    if (/^npm (install|i)\b.*\bcode-execution-mcp(@\S*)?$/.test(joined) || /^npx code-execution-mcp\b/.test(joined)) {
      problems.push(`"${joined}": the package is not published to a registry; say how to install from a clone or a tarball`);
    } else if (CLI.test(joined)) {
      problems.push(...cliProblems(words.slice(words[0] === 'node' || words[0] === 'npx' ? 2 : 1), shown.where));
    } else if (words[0] === 'npm' && words[1] === 'run' && words[2] !== undefined) {
      if (!Object.hasOwn(SCRIPTS, words[2])) problems.push(`npm run ${words[2]}: package.json has no such script`);
    }
  }
  // A bare flag span in prose (`--port 0`, `--no-semantic-search`) must be a flag of one of our
  // commands, or of Node/V8 (the sandbox processes' own flags); naming a flag without its value is fine.
  if (shown.where === 'inline' && /^--[a-z]/.test(text) && !text.includes('|') && !RUNTIME_FLAGS.has(text.split(/\s+/)[0] ?? '')) {
    const words = simpleCommands(text)[0] ?? [];
    const tries = (['serve', 'stdio', 'exec'] as const).map((c) => bareFlagProblems(c, words).filter((p) => !(words.length === 1 && p.endsWith('argument missing'))));
    if (tries.every((t) => t.length > 0)) problems.push(...(tries[0] ?? []));
  }
  // The table's first column names a command without the program name.
  if (shown.where === 'table') {
    const first = text.split(/\s+/)[0] ?? '';
    if (COMMANDS.has(first) || first === 'status') problems.push(...cliProblems(text.split(/\s+/), 'table'));
  }
  return problems;
}

describe('README commands', () => {
  const shown = [...blockCommands(), ...inlineSpans()];

  it('finds the commands it checks (the extraction itself works)', () => {
    const isCli = (s: Shown): boolean => CLI.test(s.text) || (s.where === 'table' && /^(serve|stdio|exec|import-catalog|status)\b/.test(s.text));
    expect(shown.filter((s) => s.file === 'README.md' && isCli(s)).length).toBeGreaterThanOrEqual(6);
    expect(shown.filter((s) => s.file === 'docs/configuration.md' && isCli(s)).length).toBeGreaterThanOrEqual(5);
    expect(shown.some((s) => s.file === 'README.md' && s.where === 'inline' && s.text === '--no-semantic-search')).toBe(true);
    // Every page is read, and the README links to each of the docs.
    for (const { file, text } of TEXTS) {
      expect(text.length, file).toBeGreaterThan(0);
      if (file !== 'README.md') expect(README, `README.md links to ${file}`).toContain(`](${file})`);
    }
  });

  it('the checker catches the kinds of mistakes it is for', () => {
    const probe = (text: string, where: Shown['where'] = 'inline'): string[] => problemsOf({ text, line: 0, file: 'probe', where });
    expect(probe('--semantic-search false')).toEqual([expect.stringContaining('"false" would be an argument')]);
    expect(probe('npx code-execution-mcp serve')).toEqual([expect.stringContaining('not published')]);
    expect(probe('npm install -g code-execution-mcp')).toEqual([expect.stringContaining('not published')]);
    expect(probe('code-execution-mcp serve --no-such-flag')).toEqual([expect.stringContaining("Unknown option '--no-such-flag'")]);
    expect(probe('code-execution-mcp launch')).toEqual([expect.stringContaining('no command "launch"')]);
    expect(probe('npm run no-such-script')).toEqual([expect.stringContaining('no such script')]);
    expect(probe('exec [FILE|-] [--langauge js]', 'table')).toEqual([expect.stringContaining("Unknown option '--langauge'")]);
    expect(probe('code-execution-mcp status --url http://x --jsn')).toEqual(['status has no flag --jsn']);
    expect(probe('npm install -g ./code-execution-mcp-0.1.0.tgz')).toEqual([]);
  });

  it('every command and flag the README and the moved docs show exists and parses', () => {
    const problems = shown.flatMap((s) => problemsOf(s).map((p) => `${s.file}:${s.line}: ${p}`));
    expect(problems).toEqual([]);
  });

  it('does not claim that npm ci builds dist/ unless an install script does', () => {
    const claims = TEXTS.flatMap(({ text }) => text.split('\n')).filter((l) => /npm ci[^.]*\(?builds dist\/?/i.test(l) || /install \(builds dist/i.test(l));
    const builds = ['prepare', 'install', 'postinstall'].some((s) => SCRIPTS[s]?.includes('build'));
    if (!builds) expect(claims).toEqual([]);
  });

  describe('the safe ones run', () => {
    const data = mkdtempSync(path.join(tmpdir(), 'cem-readme-'));
    afterAll(() => rmSync(data, { recursive: true, force: true }));
    const env = { ...process.env, CODE_EXEC_DATA_DIR: data, CODE_EXEC_SEMANTIC_SEARCH: 'false', CODE_EXEC_SANDBOX_PROCESSES: '1', CODE_EXEC_PYTHON_PROCESSES: '0', PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env['PATH'] ?? ''}` };
    const run = (line: string): { code: number | null; stdout: string; stderr: string } => {
      const r = spawnSync('bash', ['-c', line], { cwd: data, env, encoding: 'utf8', timeout: 90_000 });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    const bin = `node ${JSON.stringify(path.join(REPO, 'bin/code-execution-mcp.js'))}`;

    it('--help and --version of the program and of every command the README names', () => {
      for (const args of ['--help', '--version', ...[...COMMANDS, 'status'].map((c) => `${c} --help`)]) {
        const r = run(`${bin} ${args}`);
        expect(r.code, `${args}: ${r.stderr}`).toBe(0);
        expect(r.stdout.length).toBeGreaterThan(0);
      }
    });

    it('the exec snippets of the code blocks', () => {
      const lines = blockCommands().filter((s) => / exec\b/.test(s.text) && CLI.test(simpleCommands(s.text).at(-1)?.join(' ') ?? ''));
      expect(lines.length).toBeGreaterThan(0);
      for (const s of lines) {
        const r = run(s.text.replace(/node bin\/code-execution-mcp\.js|(?<![\w/-])code-execution-mcp(?= )/g, bin));
        expect(r.code, `${s.file}:${s.line}: ${r.stderr}`).toBe(0);
        expect(JSON.parse(r.stdout)).toMatchObject({ success: true });
      }
    }, 120_000);
  });
});
