// Command-line parsing with node:util parseArgs: every configuration flag from the option table,
// plus each command's own flags. Unknown flags and missing values are usage errors (exit 2).

import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { OPTIONS } from '../config/options.js';
import type { CommandName } from '../config/options.js';
import { DaemonError } from '../util/daemon-error.js';

/** Bad usage: the message says what was wrong; the CLI exits 2. */
export class UsageError extends DaemonError {
  constructor(
    message: string,
    readonly command?: CommandName,
  ) {
    super('USAGE', message);
    this.name = 'UsageError';
  }
}

type OptionDefs = NonNullable<ParseArgsConfig['options']>;

/** Flags only a command has (not configuration). */
export const COMMAND_FLAGS: Record<CommandName, OptionDefs> = {
  serve: { 'port-file': { type: 'string' } },
  stdio: { connect: { type: 'string' } },
  exec: { language: { type: 'string', short: 'l' }, timeout: { type: 'string', short: 't' }, memory: { type: 'string', short: 'm' }, progress: { type: 'boolean', short: 'p' }, 'count-tokens': { type: 'boolean' } },
  'import-catalog': {},
};

export interface ParsedCommand {
  command: CommandName;
  help: boolean;
  configFile: string | undefined;
  /** Configuration flags, by flag name (see OPTIONS), for loadConfig. */
  configFlags: Record<string, string | boolean | undefined>;
  /** The command's own flags. */
  own: Record<string, string | undefined>;
  positionals: string[];
}

export function parseCommand(command: CommandName, argv: readonly string[]): ParsedCommand {
  const options: OptionDefs = { help: { type: 'boolean', short: 'h' }, config: { type: 'string', short: 'c' }, ...COMMAND_FLAGS[command] };
  for (const spec of OPTIONS) {
    if (spec.kind === 'bool') {
      options[spec.flag] = { type: 'boolean' };
      options[`no-${spec.flag}`] = { type: 'boolean' };
    } else {
      options[spec.flag] = { type: 'string' };
    }
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(friendly(error instanceof Error ? error.message : String(error)), command);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const configFlags: Record<string, string | boolean | undefined> = {};
  for (const spec of OPTIONS) {
    if (values[spec.flag] !== undefined) configFlags[spec.flag] = values[spec.flag];
    if (values[`no-${spec.flag}`] !== undefined) configFlags[`no-${spec.flag}`] = values[`no-${spec.flag}`];
  }
  const own: Record<string, string | undefined> = {};
  for (const name of Object.keys(COMMAND_FLAGS[command])) {
    const value = values[name];
    if (typeof value === 'string') own[name] = value;
    else if (value === true) own[name] = 'true'; // a boolean command flag (exec --progress)
  }
  const configFile = values['config'];
  return {
    command,
    help: values['help'] === true,
    configFile: typeof configFile === 'string' ? configFile : undefined,
    configFlags,
    own,
    positionals: parsed.positionals,
  };
}

/** parseArgs messages mention internals ("Use `--` to ..."); keep the part a user needs. */
function friendly(message: string): string {
  return message.replace(/\. To specify a positional argument.*$/s, '').replace(/\s+$/, '');
}
