// The code-execution-mcp command line: dispatches to serve, stdio and exec; --help and
// --version. Bad usage and invalid configuration exit 2 with a message on stderr.

import { adaptError, isDaemonError } from '../util/daemon-error.js';
import { packageVersion } from '../config/defaults.js';
import type { CommandName } from '../config/options.js';
import { parseCommand } from './args.js';
import type { CliIo } from './cli-io.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, write } from './cli-io.js';
import { BIN, commandHelp, mainHelp } from './help.js';

type Command = (parsed: ReturnType<typeof parseCommand>, io: CliIo) => Promise<number>;

// Loaded on demand: --help, --version and usage errors answer without loading the subsystems.
const COMMANDS: Record<CommandName, () => Promise<Command>> = {
  serve: async () => (await import('./serve-command.js')).serveCommand,
  stdio: async () => (await import('./stdio-command.js')).stdioCommand,
  exec: async () => (await import('./exec-command.js')).execCommand,
  'import-catalog': async () => (await import('./import-catalog-command.js')).importCatalogCommand,
};

export async function main(io: CliIo): Promise<number> {
  const [first, ...rest] = io.argv;
  if (first === '--version' || first === '-v' || first === 'version') {
    await write(io.stdout, `${packageVersion()}\n`);
    return EXIT_OK;
  }
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    await write(first === undefined ? io.stderr : io.stdout, mainHelp(packageVersion()));
    return first === undefined ? EXIT_USAGE : EXIT_OK;
  }
  if (first === 'status') return statusMain(rest, io);
  if (!Object.hasOwn(COMMANDS, first)) {
    await write(io.stderr, `${BIN}: unknown command "${first}"; the commands are serve, stdio, exec, import-catalog and status (see ${BIN} --help)\n`);
    return EXIT_USAGE;
  }
  const command = first as CommandName;
  try {
    const parsed = parseCommand(command, rest);
    if (parsed.help) {
      await write(io.stdout, commandHelp(command));
      return EXIT_OK;
    }
    const run = await COMMANDS[command]();
    return await run(parsed, io);
  } catch (error) {
    // Bad usage, an invalid configuration or an unwritable data folder: the row says 'invalid'.
    const failure = adaptError(error);
    if (failure.outcome === 'invalid') {
      await write(io.stderr, `${BIN} ${command}: ${failure.message}\nRun "${BIN} ${command} --help" for usage.\n`);
      return EXIT_USAGE;
    }
    // A daemon error (a store that cannot be opened: Redis down, or its optional client not
    // installed) is the operator's to fix: its message says how, a stack would only bury it.
    const detail = failure.daemon ? failure.message : error instanceof Error ? (error.stack ?? error.message) : String(error);
    await write(io.stderr, `${BIN} ${command}: ${detail}\n`);
    return EXIT_FAILED;
  }
}

/** `status` reads a running daemon; it has its own flags (no configuration options). */
async function statusMain(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    const { statusCommand } = await import('./status-command.js');
    return await statusCommand(argv, io);
  } catch (error) {
    if (isDaemonError(error, 'USAGE')) {
      await write(io.stderr, `${BIN} status: ${error.message}\nRun "${BIN} status --help" for usage.\n`);
      return EXIT_USAGE;
    }
    await write(io.stderr, `${BIN} status: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return EXIT_FAILED;
  }
}

/** Entry point of bin/code-execution-mcp.js. */
export async function run(): Promise<void> {
  const code = await main({ argv: process.argv.slice(2), env: process.env, cwd: process.cwd(), stdin: process.stdin, stdout: process.stdout, stderr: process.stderr });
  process.exitCode = code;
  // Sandbox processes, watchers and sockets are closed by now; exit without waiting for stray
  // handles (a stdin left open by a parent), after stderr (pino) has had a chance to flush.
  setImmediate(() => process.exit(code));
}
