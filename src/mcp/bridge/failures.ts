// The stdio bridge's view of a failed exchange with the daemon: whether the daemon still answers,
// what kind of failure an error is (refused, dropped, session lost, an HTTP status), the one
// retry policy (resend only what provably was not delivered), and what the client is told.

import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** How long the liveness probe of a daemon whose stream broke may take, ms. */
const PROBE_TIMEOUT_MS = 1000;

/**
 * False only when nothing listens at the daemon's address any more (connection refused): any HTTP
 * answer, or a slow one (PROBE_TIMEOUT_MS), leaves the stream to the SDK's own resumption.
 */
export async function daemonAnswers(url: URL, token: string | undefined): Promise<boolean> {
  try {
    const res = await fetch(new URL('/healthz', url), { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS), ...(token ? { headers: { Authorization: `Bearer ${token}` } } : {}) });
    await res.body?.cancel();
    return true;
  } catch (error) {
    return !refused(error);
  }
}

export function httpStatus(error: unknown): number | undefined {
  return error instanceof StreamableHTTPError && typeof error.code === 'number' && error.code > 0 ? error.code : undefined;
}

/** The daemon no longer knows the session: it expired when idle, or the daemon restarted. */
export function sessionLost(error: unknown): boolean {
  return httpStatus(error) === 404;
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
    return `the code-execution-mcp daemon at ${href} dropped the connection while this request ran (it stopped or restarted); it may not have completed: send it again`;
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
