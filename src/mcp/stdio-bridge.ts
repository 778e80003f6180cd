// `stdio --connect URL`: a message pump between a stdio MCP client (an agent launched by a
// stdio-only client) and the daemon's Streamable HTTP endpoint, so those agents share the
// daemon's pool, catalog and skills. Messages pass unchanged both ways; the bridge only learns
// the negotiated protocol version (the HTTP transport must send it) and answers requests itself
// when the daemon cannot be reached.

import type { Readable, Writable } from 'node:stream';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../util/logger.js';

export interface BridgeOptions {
  url: string;
  token?: string | undefined;
  stdin: Readable;
  stdout: Writable;
  logger: Logger;
}

export interface Bridge {
  /** Resolves when either side has closed and the bridge has shut down. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

export async function startBridge(options: BridgeOptions): Promise<Bridge> {
  const { logger } = options;
  const url = new URL(options.url);
  const stdio = new StdioServerTransport(options.stdin, options.stdout);
  const http = new StreamableHTTPClientTransport(url, options.token ? { requestInit: { headers: { Authorization: `Bearer ${options.token}` } } } : {});
  const initializeIds = new Set<RequestId>();

  let resolveClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      try {
        await http.terminateSession();
      } catch {
        // the daemon may be gone already
      }
      await Promise.allSettled([http.close(), stdio.close()]);
      resolveClosed();
    })());

  stdio.onmessage = (message: JSONRPCMessage) => {
    if ('method' in message && message.method === 'initialize' && 'id' in message) initializeIds.add(message.id);
    http.send(message).catch((error: unknown) => {
      const reason = error instanceof Error ? error.message : String(error);
      logger.warn({ err: reason, url: url.href }, 'daemon unreachable');
      if ('method' in message && 'id' in message) {
        void stdio.send({
          jsonrpc: '2.0',
          id: message.id,
          error: { code: -32000, message: `the code-execution-mcp daemon at ${url.href} did not answer (${reason}); start it with "code-execution-mcp serve" or fix --connect/--token` },
        });
      }
    });
  };
  http.onmessage = (message: JSONRPCMessage) => {
    if ('result' in message && initializeIds.delete(message.id)) {
      const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === 'string') http.setProtocolVersion(version);
    }
    stdio.send(message).catch((error: unknown) => logger.warn({ err: error }, 'could not write to stdout'));
  };
  http.onerror = (error) => logger.warn({ err: error.message }, 'daemon connection error');
  stdio.onerror = (error) => logger.warn({ err: error.message }, 'stdio error');
  stdio.onclose = () => void close();
  http.onclose = () => void close();
  options.stdin.once('end', () => void close());

  await http.start();
  await stdio.start();
  logger.info({ url: url.href }, 'bridging stdio to the daemon');
  return { closed, close };
}
