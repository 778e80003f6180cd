// What a CLI command reads and writes, injected so tests can drive commands without a process.

import type { Readable, Writable } from 'node:stream';
import type { Config } from '../config/config-types.js';
import { prepareDataFolders } from '../config/data-dir.js';
import { loadConfig } from '../config/load-config.js';
import type { ParsedCommand } from './args.js';

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

/** Resolves once what was written so far has been handed to the stream's destination. */
export async function flushed(stream: Writable): Promise<void> {
  await new Promise<void>((resolve) => stream.write('', () => resolve()));
}

/**
 * How long a command about to exit waits for its sandbox processes to exit, ms, once everything
 * else is closed: they end with it anyway (their IPC channel closes), and a process that answered
 * its last call has nothing left to save.
 */
export const SANDBOX_EXIT_WAIT_MS = 100;

/**
 * Resolves the configuration of a command and makes sure its data folders exist and are writable
 * (a bridge, which keeps no data, skips that); configuration problems are usage errors.
 */
export function commandConfig(parsed: ParsedCommand, io: CliIo, adjustDefaults?: (c: Config) => void): Readonly<Config> {
  const config = loadCommandConfig(parsed, io, adjustDefaults);
  if (parsed.command === 'stdio' && parsed.own['connect'] !== undefined) return config;
  // An unwritable folder (DataDirError) is reported as bad usage by the command line (cli/main.ts).
  prepareDataFolders([
    { dir: config.skillsDir, option: optionFor('skills-dir', config) },
    { dir: config.workspaceDir, option: optionFor('workspace-dir', config) },
  ]);
  return config;
}

function optionFor(folderFlag: string, config: Readonly<Config>): string {
  const data = config.dataDir !== undefined ? '--data-dir DIR (CODE_EXEC_DATA_DIR) or ' : '';
  return `${data}--${folderFlag} DIR`;
}

function loadCommandConfig(parsed: ParsedCommand, io: CliIo, adjustDefaults?: (c: Config) => void): Readonly<Config> {
  // An invalid configuration (ConfigError) is reported as bad usage by the command line (cli/main.ts).
  return loadConfig({
    ...(parsed.configFile !== undefined ? { configFile: parsed.configFile } : {}),
    flags: parsed.configFlags,
    env: io.env,
    cwd: io.cwd,
    ...(adjustDefaults ? { adjustDefaults } : {}),
  }).config;
}
