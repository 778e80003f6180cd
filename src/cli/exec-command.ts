// `exec [FILE|-]`: run code once through the real sandbox and print the execute_code result JSON.
// Exit 0 when the code succeeded, 1 when it failed, 2 on bad usage. The executor owns the call as
// it does execute_code's (language detection, the run, the result); exec only sizes the pools for
// one call: one sandbox process of the language it expects (named, from the file's extension, else
// the configured default) started with the coordinator, the others only if the call needs them.
// Tokens are estimated unless --count-tokens asks for the tokenizer (about 0.5 s to load). Once
// the result is written nothing is waited for: the sandbox processes end with this process.

import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Config } from '../config/config-types.js';
import { startCoordinator } from '../daemon.js';
import { MIN_MEMORY_MB } from '../executor/executor-types.js';
import type { Language } from '../executor/executor-types.js';
import { localAgent } from '../mcp/agents.js';
import { createLogger } from '../util/logger.js';
import { estimateTokens, measureTokens } from '../util/tokens.js';
import type { ParsedCommand } from './args.js';
import { UsageError } from './args.js';
import type { CliIo } from './cli-io.js';
import { orList } from '../executor/runtime-pools.js';
import { RUNTIMES } from '../executor/runtimes.js';
import { EXIT_FAILED, EXIT_OK, SANDBOX_EXIT_WAIT_MS, commandConfig, flushed, write } from './cli-io.js';

/** Each language by its own name and its row's short names (runtimes.ts): js, ts, py. */
const LANGUAGE_ALIASES: Readonly<Record<string, Language>> = Object.fromEntries(
  RUNTIMES.flatMap((row) => [...row.languages.map((l) => [l, l]), ...Object.entries(row.aliases)]),
) as Record<string, Language>;
/** A file's extension that names its language, over the rows. */
const EXTENSIONS: Readonly<Record<string, Language>> = Object.assign({}, ...RUNTIMES.map((row) => row.extensions)) as Record<string, Language>;

export async function execCommand(parsed: ParsedCommand, io: CliIo): Promise<number> {
  if (parsed.positionals.length > 1) throw new UsageError(`exec takes one FILE (or - for stdin); got ${parsed.positionals.length}: ${parsed.positionals.join(' ')}`, 'exec');
  const file = parsed.positionals[0] ?? '-';
  const chosen = pickLanguage(parsed.own['language'], file);
  const loaded = commandConfig(parsed, io, (c) => (c.logLevel = 'warn'));
  const code = await readCode(file, io);
  const expected = chosen ?? loaded.limits.defaultLanguage;
  const plan = RUNTIMES.map((row) => row.singleCall(row.languages.includes(expected)));
  const config: Readonly<Config> = Object.freeze({
    ...loaded,
    // A search in one call is served by the lexical index: the sentence encoder takes seconds to start.
    semanticSearch: false,
    sandbox: Object.freeze(Object.assign({ ...loaded.sandbox }, ...plan.map((p) => p.sandbox))),
  });
  const timeoutSeconds = pickNumber(parsed.own['timeout'], '--timeout', config.limits.defaultTimeoutSeconds, { min: 0, exclusiveMin: true, max: config.limits.maxTimeoutSeconds, unit: 'seconds', limit: 'limits.maxTimeoutSeconds' });
  const memoryMb = pickNumber(parsed.own['memory'], '--memory', config.limits.defaultMemoryMb, { min: MIN_MEMORY_MB, max: config.limits.maxMemoryMb, integer: true, unit: 'MiB', limit: 'limits.maxMemoryMb' });

  const logger = createLogger(config.logLevel, { command: 'exec' });
  const countTokens = parsed.own['count-tokens'] === 'true' ? measureTokens : estimateTokens;
  const coordinator = await startCoordinator(config, logger, { watch: false, pool: Object.assign({}, ...plan.map((p) => p.tuning)), countTokens });
  const abort = new AbortController();
  const onSignal = (): void => abort.abort(new Error('interrupted'));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const agent = localAgent(config);
    const sessionId = `exec-${randomUUID()}`;
    const raw = await coordinator.executor.execute(
      { code, ...(chosen ? { language: chosen } : {}), timeoutSeconds, memoryMb },
      { agent: agent.name, sessionId, workspaceNamespace: agent.workspaceNamespace, permissions: agent.permissions },
      // --progress: output lines reach stderr as the code prints them; stdout keeps only the JSON.
      { signal: abort.signal, ...(parsed.own['progress'] === 'true' ? { onOutput: (line: string) => void write(io.stderr, `${line}\n`) } : {}) },
    );
    const session = { sessionId, agent, transport: 'stdio' as const, signal: abort.signal };
    const { boundary } = coordinator.services;
    const result = boundary.active
      ? { ...raw, result: await boundary.outgoingValue(raw.result, session), output: await Promise.all(raw.output.map((l) => boundary.outgoingText(l, session))) }
      : raw;
    await write(io.stdout, `${JSON.stringify(result, null, 2)}\n`);
    await flushed(io.stdout);
    return result.success ? EXIT_OK : EXIT_FAILED;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await coordinator.close({ sandboxExitWaitMs: SANDBOX_EXIT_WAIT_MS });
  }
}

function pickLanguage(flag: string | undefined, file: string): Language | undefined {
  if (flag !== undefined) {
    const language = LANGUAGE_ALIASES[flag.toLowerCase()];
    if (!language) throw new UsageError(`--language must be ${orList(languageChoices())}; got "${flag}"`, 'exec');
    return language;
  }
  return EXTENSIONS[path.extname(file).toLowerCase()];
}

interface NumberRule {
  min: number;
  max: number;
  exclusiveMin?: boolean;
  integer?: boolean;
  unit: string;
  limit: string;
}

function pickNumber(text: string | undefined, flag: string, fallback: number, rule: NumberRule): number {
  if (text === undefined) return Math.min(fallback, rule.max);
  const value = Number(text);
  const tooLow = rule.exclusiveMin ? value <= rule.min : value < rule.min;
  if (text.trim() === '' || !Number.isFinite(value) || tooLow || value > rule.max || (rule.integer && !Number.isInteger(value))) {
    const lower = rule.exclusiveMin ? `more than ${rule.min}` : `at least ${rule.min}`;
    throw new UsageError(`${flag} must be ${rule.integer ? 'an integer' : 'a number'} ${lower} and at most ${rule.max} (${rule.unit}; the cap is ${rule.limit}); got "${text}"`, 'exec');
  }
  return value;
}

async function readCode(file: string, io: CliIo): Promise<string> {
  if (file === '-') {
    if (io.stdin.isTTY) throw new UsageError('no code: give a FILE, or pipe the code on stdin (exec - < script.js)', 'exec');
    return readAll(io.stdin);
  }
  try {
    return await readFile(path.resolve(io.cwd, file), 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : error instanceof Error ? error.message : String(error);
    throw new UsageError(`cannot read ${file}: ${reason}`, 'exec');
  }
}

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** "javascript (js), typescript (ts) or python (py)". */
function languageChoices(): string[] {
  return RUNTIMES.flatMap((row) =>
    row.languages.map((language) => {
      const short = Object.keys(row.aliases).filter((a) => row.aliases[a] === language);
      return short.length > 0 ? `${language} (${short.join(', ')})` : language;
    }),
  );
}
