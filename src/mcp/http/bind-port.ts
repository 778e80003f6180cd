// `serve` binds its port before the subsystems start (bindPort), so a port in use is reported at
// once; the bound server answers 503 "starting" until an HttpDaemon takes it over (GET /healthz:
// the documented health shape, status "starting").

import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../../config/config-types.js';
import { startingHealth } from './health.js';
import { isLoopbackHost, jsonRpcError, sendJson } from './request-guards.js';
import { DaemonError } from '../../util/daemon-error.js';

export const MCP_PATH = '/mcp';

/** The daemon refused to start; the message says why and what to change. */
export class StartupError extends DaemonError {
  constructor(message: string) {
    super('STARTUP_REFUSED', message);
    this.name = 'StartupError';
  }
}

/** Why the configuration must not be served as is (a non-loopback bind without a token), or null. */
export function bindProblem(config: Pick<Config, 'host' | 'authToken' | 'agents'>): string | null {
  if (isLoopbackHost(config.host) || config.authToken !== undefined || config.agents.length > 0) return null;
  return `refusing to listen on ${config.host}: a non-loopback address needs a bearer token. Set CODE_EXEC_TOKEN (or --token, or "authToken" / "agents" in the config file) to a secret of 16+ characters, or bind 127.0.0.1.`;
}

export interface ListenInfo {
  host: string;
  port: number;
  url: string;
}

/** A port bound before the daemon's subsystems start; it answers 503 "starting" until an HttpDaemon takes it over. */
export interface BoundPort {
  server: Server;
  info: ListenInfo;
}

const STARTING_ANSWER = 'the daemon is starting (sandbox pools warming up); retry in a few seconds';

/**
 * Binds the configured host and port (0 = any free port) at once, so a port already in use is
 * reported before the sandbox pools spend seconds starting. Requests that arrive meanwhile get a
 * 503 with Retry-After.
 */
export async function bindPort(config: Pick<Config, 'host' | 'port' | 'authToken' | 'agents'>): Promise<BoundPort> {
  const problem = bindProblem(config);
  if (problem) throw new StartupError(problem);
  // Node checks header and request deadlines on this interval (30 s by default).
  const server = createServer({ connectionsCheckingInterval: 1000 }, (req, res) => {
    if (new URL(req.url ?? '/', 'http://localhost').pathname === '/healthz') {
      const health = startingHealth();
      return sendJson(res, health.status, health.body, { 'Retry-After': '2', 'Cache-Control': 'no-store', Connection: 'close' });
    }
    sendJson(res, 503, jsonRpcError(-32000, STARTING_ANSWER), { 'Retry-After': '2', Connection: 'close' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { server, info: { host: address.address, port: address.port, url: `http://${shownHost}:${address.port}${MCP_PATH}` } };
}

/** What a failed bind means for the person starting the daemon. */
export function bindFailure(error: unknown, config: Pick<Config, 'host' | 'port'>): { code: string; message: string } {
  const code = (error as NodeJS.ErrnoException).code;
  const message =
    error instanceof StartupError
      ? error.message
      : code === 'EADDRINUSE'
        ? `port ${config.port} on ${config.host} is already in use; stop the other process or pick another with --port (0 = any free port)`
        : `cannot listen on ${config.host}:${config.port}: ${error instanceof Error ? error.message : String(error)}`;
  return { code: code ?? (error instanceof StartupError ? error.code : 'LISTEN_FAILED'), message };
}
