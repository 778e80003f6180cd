// `stdio`: MCP over stdin/stdout for one agent. Embedded, it runs its own coordinator (and applies
// mcpServers edits of the configuration file live, as `serve` does); with --connect it bridges to
// a running daemon. Nothing but protocol is written to stdout.

import { randomUUID } from 'node:crypto';
import { serverSettings } from '../config/defaults.js';
import { createLogger } from '../util/logger.js';
import { cancelTokenizerLoad } from '../util/tokens.js';
import type { ParsedCommand } from './args.js';
import { UsageError } from './args.js';
import type { CliIo } from './cli-io.js';
import { EXIT_OK, SANDBOX_EXIT_WAIT_MS, commandConfig, flushed } from './cli-io.js';
import { nextStopSignal } from './signals.js';

export async function stdioCommand(parsed: ParsedCommand, io: CliIo): Promise<number> {
  if (parsed.positionals.length > 0) throw new UsageError(`stdio takes no arguments; got ${parsed.positionals.join(' ')}`, 'stdio');
  const config = commandConfig(parsed, io);
  const logger = createLogger(config.logLevel, { service: 'code-execution-mcp', mode: 'stdio' });
  const connect = parsed.own['connect'];
  if (connect !== undefined) {
    try {
      const url = new URL(connect);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
    } catch {
      throw new UsageError(`--connect must be the daemon's MCP URL, e.g. http://127.0.0.1:7337/mcp; got "${connect}"`, 'stdio');
    }
    const stop = nextStopSignal();
    // A bridge needs neither the coordinator nor the MCP server: only what it uses is loaded.
    const { startBridge } = await import('../mcp/bridge/bridge.js');
    const bridge = await startBridge({ url: connect, token: config.authToken, stdin: io.stdin, stdout: io.stdout, logger, drainMs: serverSettings(config).drainSeconds * 1000 });
    await Promise.race([bridge.closed, stop.signal]);
    await bridge.close();
    stop.dispose();
    return EXIT_OK;
  }

  const [{ StdioServerTransport }, { startCoordinator }, { localAgent }, { createMcpSession }, { StdioFront }, { watchUpstreamConfig }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('../daemon.js'),
    import('../mcp/agents.js'),
    import('../mcp/create-server.js'),
    import('../mcp/router/stdio-front.js'),
    import('../upstream/config-reload.js'),
  ]);
  const stop = nextStopSignal();
  const coordinator = await startCoordinator(config, logger);
  const abort = new AbortController();
  const session = createMcpSession(coordinator.services, { sessionId: `stdio-${randomUUID()}`, agent: localAgent(config), transport: 'stdio', signal: abort.signal });
  // Both revisions: 2025-11-25 as the SDK speaks it, 2026-07-28 (stateless) by the router's handler.
  const front = new StdioFront(coordinator.services, session, new StdioServerTransport(io.stdin, io.stdout), localAgent(config));
  let configWatch: { close(): Promise<void> } | undefined;
  const clientGone = new Promise<'eof'>((resolve) => {
    io.stdin.once('end', () => resolve('eof'));
    io.stdin.once('close', () => resolve('eof'));
  });
  try {
    const observed = await front.connect();
    // mcpServers edits in the configuration file apply live (src/upstream/config-reload.ts).
    const loadOptions = { ...(parsed.configFile !== undefined ? { configFile: parsed.configFile } : {}), flags: parsed.configFlags, env: io.env, cwd: io.cwd };
    configWatch = await watchUpstreamConfig(loadOptions, config, coordinator.upstream, logger);
    logger.info({ session: session.info.sessionId }, 'serving MCP on stdio');
    const why = await Promise.race([clientGone, stop.signal]);
    // A tokenizer load not yet begun (util/tokens.ts) would only delay the exit.
    cancelTokenizerLoad();
    // End of input is how a stdio client says it has nothing more to ask; answer what it asked
    // (as a signal does, within the drain bound), then stop.
    logger.info({ reason: why, in_flight: coordinator.services.recorder.inFlight }, 'shutting down');
    await front.waitIdle(serverSettings(config).drainSeconds * 1000);
    // What the drain window did not see finish is cancelled below: answer it first.
    const cancelled = 'the server is shutting down and cancelled this call before it finished; retry it once the server is back';
    await Promise.all([observed.answerOpen(cancelled), front.answerOpen(cancelled)]);
    await flushed(io.stdout);
    return EXIT_OK;
  } finally {
    abort.abort(new Error('stdio session ended'));
    await configWatch?.close();
    await front.close();
    await session.close();
    await coordinator.close({ sandboxExitWaitMs: SANDBOX_EXIT_WAIT_MS });
    stop.dispose();
  }
}
