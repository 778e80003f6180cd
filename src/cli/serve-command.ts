// `serve`: the HTTP daemon. Logs a "listening" line with the URL, port and data folders (on a
// terminal: a short block saying how to connect and where data lives), writes the port to
// --port-file, serves until SIGINT/SIGTERM, then drains calls in flight and exits 0.

import path from 'node:path';
import { serverSettings } from '../config/defaults.js';
import { startCoordinator } from '../daemon.js';
import { BackgroundSnapshot } from '../executor/background-snapshot.js';
import { pythonSnapshotDir } from '../executor/python-pool.js';
import { bindFailure, bindPort, bindProblem } from '../mcp/http/bind-port.js';
import { HttpDaemon } from '../mcp/http/http-daemon.js';
import type { Config } from '../config/config-types.js';
import type { ConfigWatch } from '../config/load-config.js';
import { watchUpstreamConfig } from '../upstream/config-reload.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import { commandFor, installKind } from '../util/install-kind.js';
import { cancelTokenizerLoad } from '../util/tokens.js';
import type { ParsedCommand } from './args.js';
import { UsageError } from './args.js';
import type { CliIo } from './cli-io.js';
import { EXIT_FAILED, EXIT_OK, SANDBOX_EXIT_WAIT_MS, commandConfig, write } from './cli-io.js';
import { createCliLogger } from './log-format.js';
import { nextStopSignal } from './signals.js';

export async function serveCommand(parsed: ParsedCommand, io: CliIo): Promise<number> {
  if (parsed.positionals.length > 0) throw new UsageError(`serve takes no arguments; got ${parsed.positionals.join(' ')}`, 'serve');
  const config = commandConfig(parsed, io);
  const problem = bindProblem(config);
  if (problem) throw new UsageError(problem, 'serve');

  const { logger, format } = createCliLogger(config, io.stderr, { service: 'code-execution-mcp' });
  const stop = nextStopSignal();
  // The port first: one already in use is reported at once, not after the pools have started.
  let bound;
  try {
    bound = await bindPort(config);
  } catch (error) {
    stop.dispose();
    const failure = bindFailure(error, config);
    logger.fatal({ code: failure.code }, failure.message);
    return EXIT_FAILED;
  }
  // Ctrl-C while the subsystems start: let them finish starting (a half-started pool is not
  // stopped in order), then close them and exit 0 without serving.
  const starting = startCoordinator(config, logger);
  const first = await Promise.race([starting.then(() => null), stop.signal]).catch(() => null);
  if (first !== null) {
    logger.info({ signal: first }, 'stop requested during start-up; closing what has started');
    bound.server.close();
    bound.server.closeAllConnections();
    const started = await starting.catch(() => undefined);
    await started?.close();
    stop.dispose();
    logger.info('stopped');
    return EXIT_OK;
  }
  const coordinator = await starting.catch((error: unknown) => {
    bound.server.close();
    stop.dispose();
    throw error;
  });
  const daemon = new HttpDaemon(coordinator.services, bound);
  // Python's interpreter snapshot, made in the background once per data folder (a no-op when it exists).
  const python = new BackgroundSnapshot(config.sandbox.pythonProcesses > 0 ? pythonSnapshotDir(config) : undefined, logger);
  coordinator.services.pythonReadiness = () => python.readiness();
  let configWatch: ConfigWatch | undefined;
  try {
    const info = await daemon.listen();
    // A Python call waiting for an interpreter hurries the make (it runs at the lowest priority until then).
    // Then one interpreter starts from the snapshot, so the first Python call finds it warm.
    const executor = coordinator.services.executor;
    python.start(
      () => {
        const pool = executor.health().python;
        return pool !== undefined && (pool.queued > 0 || pool.starting > 0);
      },
      () => executor.warm?.('python') ?? Promise.resolve(false),
    );
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
    // A tokenizer load not yet begun (util/tokens.ts) would only delay the exit.
    cancelTokenizerLoad();
    const drainMs = serverSettings(config).drainSeconds * 1000;
    logger.info({ signal, in_flight: coordinator.services.recorder.inFlight }, 'shutting down');
    await daemon.shutdown(drainMs);
    return EXIT_OK;
  } finally {
    await configWatch?.close();
    await daemon.shutdown(0);
    await python.close();
    await coordinator.close({ sandboxExitWaitMs: SANDBOX_EXIT_WAIT_MS });
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
    `  connect a stdio client:  ${commandFor(installKind())} stdio --connect ${url}${auth ? '   (with CODE_EXEC_TOKEN set)' : ''}`,
    `  skills:     ${config.skillsDir}`,
    `  workspace:  ${config.workspaceDir}`,
    `  catalog:    ${config.catalogDir}`,
    '  stop with Ctrl-C (calls in flight finish first); JSON logs: --log-format json',
    '',
  ].join('\n');
}
