// The stdio bridge's view of a failed exchange with the daemon: what kind of failure an error is
// (refused, dropped, an HTTP status), the one retry policy (resend only what provably was not
// delivered), and what the client is told.

import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export function httpStatus(error: unknown): number | undefined {
  return error instanceof StreamableHTTPError && typeof error.code === 'number' && error.code > 0 ? error.code : undefined;
}

/** Whether the error, or one of its first causes, carries one of these system error codes. */
function hasCode(error: unknown, codes: readonly string[]): boolean {
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 4; cause = cause.cause, depth++) {
    if (codes.includes(String((cause as NodeJS.ErrnoException).code))) return true;
  }
  return false;
}

/** Nothing listens on the port (yet): the daemon is stopped or restarting. */
export function refused(error: unknown): boolean {
  return hasCode(error, ['ECONNREFUSED']);
}

/**
 * The bridge's one retry policy: an attempt that provably delivered nothing (connection refused:
 * the daemon is stopped or restarting; 503: it is still starting its pools) is made again, with
 * back-off, until `windowMs` has passed or `stopped()` says the bridge is closing.
 */
export async function retrying<T>(attempt: () => Promise<T>, windowMs: number, stopped: () => boolean): Promise<T> {
  const deadline = Date.now() + windowMs;
  for (let delayMs = 100; ; delayMs = Math.min(delayMs * 2, 2000)) {
    try {
      return await attempt();
    } catch (error) {
      if (!(refused(error) || httpStatus(error) === 503) || Date.now() + delayMs > deadline || stopped()) throw error;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

/** The connection broke after the request went out: the daemon died or restarted under it. */
function dropped(error: unknown): boolean {
  return hasCode(error, ['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);
}

export function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
  return `${message}${cause}`;
}

/** What the client is told when a request could not be delivered: the cause and the fix. */
export function failureMessage(error: unknown, href: string): string {
  const status = httpStatus(error);
  if (status === 401 || status === 403) {
    return `token refused by the daemon at ${href} (HTTP ${status}; check CODE_EXEC_TOKEN or --token: it must be the daemon's authToken or an agent's token)`;
  }
  if (status !== undefined) {
    return `the code-execution-mcp daemon at ${href} refused the request (HTTP ${status}: ${daemonMessage(error)})`;
  }
  if (dropped(error)) {
    return `the code-execution-mcp daemon at ${href} stopped while this request ran (it dropped the connection); it may not have completed: send it again once the daemon is back`;
  }
  return `the code-execution-mcp daemon at ${href} did not answer (${describe(error)}); start it with "code-execution-mcp serve" or fix --connect`;
}

/** The JSON-RPC error message in a refused POST's body, when the daemon sent one. */
function daemonMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const start = text.indexOf('{');
  if (start >= 0) {
    try {
      const body: unknown = JSON.parse(text.slice(start));
      const message = (body as { error?: { message?: unknown } }).error?.message;
      if (typeof message === 'string') return message;
    } catch {
      // not JSON: fall through
    }
  }
  return text.replace(/^Streamable HTTP error: /, '');
}
