// `serve`: the HTTP daemon. Logs a "listening" line with the URL, port and data folders (on a
// terminal: a short block saying how to connect and where data lives), writes the port to
// --port-file, serves until SIGINT/SIGTERM, then drains calls in flight and exits 0.

import path from 'node:path';
import { serverSettings } from '../config/defaults.js';
import type { ConfigWatch } from '../config/load-config.js';
import { watchUpstreamConfig } from '../upstream/config-reload.js';
import { startCoordinator } from '../daemon.js';
import { HttpDaemon, StartupError, bindProblem } from '../mcp/http/http-daemon.js';
import type { Config } from '../config/config-types.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import type { ParsedCommand } from './args.js';
import { UsageError } from './args.js';
import type { CliIo } from './cli-io.js';
import { EXIT_FAILED, EXIT_OK, commandConfig, write } from './cli-io.js';
import { BIN } from './help.js';
import { createCliLogger } from './log-format.js';
import { nextStopSignal } from './signals.js';

export async function serveCommand(parsed: ParsedCommand, io: CliIo): Promise<number> {
  if (parsed.positionals.length > 0) throw new UsageError(`serve takes no arguments; got ${parsed.positionals.join(' ')}`, 'serve');
  const config = commandConfig(parsed, io);
  const problem = bindProblem(config);
  if (problem) throw new UsageError(problem, 'serve');

  const { logger, format } = createCliLogger(config, io.stderr, { service: 'code-execution-mcp' });
  const stop = nextStopSignal();
  const coordinator = await startCoordinator(config, logger);
  const daemon = new HttpDaemon(coordinator.services);
  let configWatch: ConfigWatch | undefined;
  try {
    let info;
    try {
      info = await daemon.listen();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const message =
        error instanceof StartupError
          ? error.message
          : code === 'EADDRINUSE'
            ? `port ${config.port} on ${config.host} is already in use; stop the other process or pick another with --port (0 = any free port)`
            : `cannot listen on ${config.host}:${config.port}: ${error instanceof Error ? error.message : String(error)}`;
      logger.fatal({ code: code ?? 'LISTEN_FAILED' }, message);
      return EXIT_FAILED;
    }
    const auth = config.agents.length > 0 || config.authToken !== undefined;
    if (format === 'text') await write(io.stderr, startBlock(info.url, coordinator.services.version, auth, config));
    else {
      logger.info(
        { url: info.url, host: info.host, port: info.port, version: coordinator.services.version, agents: config.agents.length, auth, data_dir: config.dataDir, skills_dir: config.skillsDir, workspace_dir: config.workspaceDir },
        'listening',
      );
    }
    // Behind a load balancer: announce the address its upstream list knows this daemon by.
    await coordinator.membership?.join(config.clusterAddress ?? `${info.host}:${info.port}`);
    // mcpServers edits in the configuration file apply live (src/upstream/config-reload.ts).
    const loadOptions = { ...(parsed.configFile !== undefined ? { configFile: parsed.configFile } : {}), flags: parsed.configFlags, env: io.env, cwd: io.cwd };
    configWatch = await watchUpstreamConfig(loadOptions, config, coordinator.upstream, logger);
    const portFile = parsed.own['port-file'];
    if (portFile !== undefined) await writeFileAtomic(path.resolve(io.cwd, portFile), `${info.port}\n`);

    const signal = await stop.signal;
    const drainMs = serverSettings(config).drainSeconds * 1000;
    logger.info({ signal, in_flight: coordinator.services.recorder.inFlight }, 'shutting down');
    await daemon.shutdown(drainMs);
    return EXIT_OK;
  } finally {
    await configWatch?.close();
    await daemon.shutdown(0);
    await coordinator.close();
    stop.dispose();
    logger.info('stopped');
  }
}

/** What a person starting the daemon in a terminal needs: where it listens, how to connect, where data lives. */
function startBlock(url: string, version: string, auth: boolean, config: Readonly<Config>): string {
  const header = auth ? ' --header "Authorization: Bearer $CODE_EXEC_TOKEN"' : '';
  return [
    `code-execution-mcp ${version} listening on ${url}`,
    `  connect an HTTP client:  claude mcp add --transport http code-execution ${url}${header}`,
    `  connect a stdio client:  ${BIN} stdio --connect ${url}${auth ? '   (with CODE_EXEC_TOKEN set)' : ''}`,
    `  skills:     ${config.skillsDir}`,
    `  workspace:  ${config.workspaceDir}`,
    `  catalog:    ${config.catalogDir}`,
    '  stop with Ctrl-C (calls in flight finish first); JSON logs: --log-format json',
    '',
  ].join('\n');
}
