// Builds the client transport for one upstream server: a child process over stdio, or a URL
// over Streamable HTTP (the legacy HTTP+SSE transport is the connection's fallback). A child's
// stderr is captured, logged at debug and its tail kept, so "the server exited" comes with why.
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerConfig } from '../config/config-types.js';
import type { Logger } from '../util/logger.js';
import type { UpstreamTransportKind } from './upstream-types.js';
import { sdkClient, sdkClientIfLoaded } from './sdk-client.js';

/** stderr lines kept per child for error messages. */
const STDERR_TAIL_LINES = 20;
/** Longest stderr line kept, characters. */
const MAX_STDERR_LINE_CHARS = 500;

export type StdioServerConfig = Extract<McpServerConfig, { command: string }>;
export type HttpServerConfig = Extract<McpServerConfig, { url: string }>;

export interface OpenedTransport {
  transport: Transport;
  kind: UpstreamTransportKind;
  /** The child's pid while it runs (stdio only). */
  pid(): number | null;
  /** The child's last stderr lines, '' when none (stdio only). */
  stderrTail(): string;
  /** Resolves once the child's stderr has ended (at most `timeoutMs` later), so its tail is complete. */
  stderrDrained(timeoutMs: number): Promise<void>;
}

export function isStdioConfig(config: McpServerConfig): config is StdioServerConfig {
  return 'command' in config;
}

/** What is wrong with a server's configuration, or undefined when it is usable. */
export function configProblem(config: McpServerConfig): string | undefined {
  if (typeof config !== 'object' || config === null) return 'the server configuration must be an object with "command" or "url"';
  const timeout: unknown = config.timeout_ms;
  if (timeout !== undefined && (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout <= 0)) {
    return `"timeout_ms" must be a positive number of milliseconds, got ${JSON.stringify(timeout)}`;
  }
  if ('command' in config) {
    if (typeof config.command !== 'string' || config.command.trim() === '') return '"command" must be a non-empty string';
    if (config.args !== undefined && (!Array.isArray(config.args) || !config.args.every((a) => typeof a === 'string'))) {
      return '"args" must be an array of strings';
    }
    return undefined;
  }
  if ('url' in config) {
    let url: URL;
    try {
      url = new URL(config.url);
    } catch {
      return `"url" is not a valid URL: ${String(config.url)}`;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return `"url" must be http or https, not ${url.protocol}`;
    return undefined;
  }
  return 'the server configuration needs "command" (stdio) or "url" (HTTP)';
}

export function openStdio(server: string, config: StdioServerConfig, logger: Logger): OpenedTransport {
  const params: ConstructorParameters<typeof StdioClientTransport>[0] = {
    command: config.command,
    args: [...(config.args ?? [])],
    stderr: 'pipe',
  };
  if (config.env !== undefined) params.env = { ...config.env };
  if (config.cwd !== undefined) params.cwd = config.cwd;
  const transport = new (sdkClient().StdioClientTransport)(params);
  const tail: string[] = [];
  let partial = '';
  let ended = false;
  const endWaiters = new Set<() => void>();
  const stderr = transport.stderr;
  stderr?.on('end', () => {
    ended = true;
    for (const wake of endWaiters) wake();
    endWaiters.clear();
  });
  stderr?.on('data', (chunk: Buffer | string) => {
    const lines = (partial + chunk.toString()).split(/\r?\n/);
    partial = (lines.pop() ?? '').slice(0, MAX_STDERR_LINE_CHARS);
    for (const raw of lines) {
      const line = raw.slice(0, MAX_STDERR_LINE_CHARS);
      if (line.trim() === '') continue;
      tail.push(line);
      if (tail.length > STDERR_TAIL_LINES) tail.shift();
      logger.debug({ code: 'UPSTREAM_STDERR', server, line }, 'upstream server stderr');
    }
  });
  return {
    transport,
    kind: 'stdio',
    pid: () => transport.pid,
    stderrTail: () => [...tail, ...(partial.trim() === '' ? [] : [partial])].join('\n'),
    stderrDrained: (timeoutMs) =>
      ended || stderr === null
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            // A grandchild may hold stderr open after the server died: wait a bounded time only.
            const timer = setTimeout(done, timeoutMs);
            timer.unref();
            function done(): void {
              clearTimeout(timer);
              endWaiters.delete(done);
              resolve();
            }
            endWaiters.add(done);
          }),
  };
}

export function openHttp(config: HttpServerConfig, kind: 'streamable-http' | 'sse'): OpenedTransport {
  const url = new URL(config.url);
  const requestInit: RequestInit = config.headers === undefined ? {} : { headers: { ...config.headers } };
  const sdk = sdkClient();
  const transport = kind === 'sse' ? new sdk.SSEClientTransport(url, { requestInit }) : new sdk.StreamableHTTPClientTransport(url, { requestInit });
  return { transport, kind, pid: () => null, stderrTail: () => '', stderrDrained: () => Promise.resolve() };
}

/**
 * Whether a failed Streamable HTTP connect means "this is an old HTTP+SSE server": the spec's
 * backwards-compatibility rule is a 4xx answer to the initialize POST. 401/403 are auth
 * failures, which the SSE transport would not fix.
 */
export function shouldFallBackToSse(error: unknown): boolean {
  const sdk = sdkClientIfLoaded();
  return (
    sdk !== undefined &&
    error instanceof sdk.StreamableHTTPError &&
    error.code !== undefined &&
    error.code >= 400 &&
    error.code < 500 &&
    error.code !== 401 &&
    error.code !== 403
  );
}

/** Ends a Streamable HTTP session politely (DELETE), bounded; other transports need nothing. */
export async function terminateSession(transport: Transport, timeoutMs: number): Promise<void> {
  const sdk = sdkClientIfLoaded();
  if (sdk === undefined || !(transport instanceof sdk.StreamableHTTPClientTransport) || transport.sessionId === undefined) return;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      transport.terminateSession(),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
        timer.unref();
      }),
    ]);
  } catch {
    // The server may already be gone; closing goes on regardless.
  } finally {
    clearTimeout(timer);
  }
}
