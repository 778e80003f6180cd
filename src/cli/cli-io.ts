// What a CLI command reads and writes, injected so tests can drive commands without a process.

import type { Readable, Writable } from 'node:stream';
import type { Config } from '../config/config-types.js';
import { ConfigError, loadConfig } from '../config/load-config.js';
import type { ParsedCommand } from './args.js';
import { UsageError } from './args.js';

export interface CliIo {
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable;
  stderr: Writable;
}

/** Exit statuses of the CLI. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

export function write(stream: Writable, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (!stream.write(text)) stream.once('drain', () => resolve());
    else resolve();
  });
}

/** Resolves the configuration of a command; configuration problems are usage errors. */
export function commandConfig(parsed: ParsedCommand, io: CliIo, adjustDefaults?: (c: Config) => void): Readonly<Config> {
  try {
    return loadConfig({
      ...(parsed.configFile !== undefined ? { configFile: parsed.configFile } : {}),
      flags: parsed.configFlags,
      env: io.env,
      cwd: io.cwd,
      ...(adjustDefaults ? { adjustDefaults } : {}),
    }).config;
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message, parsed.command);
    throw error;
  }
}
