// The MCP `logging` capability of one session: `logging/setLevel` sets this session's level, and
// `notifications/message` carries this session's own events (its calls starting, ending and
// failing). Each session has its own McpServer and its own SessionLog, so one agent never hears
// of another agent's or another session's calls. Never code, arguments, results or PII.

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SetLevelRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { LoggingLevel, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { CallOutcome } from './call-outcome.js';

/** Severity order of RFC 5424, as MCP uses it. */
export const LOG_SEVERITY: Readonly<Record<LoggingLevel, number>> = { debug: 0, info: 1, notice: 2, warning: 3, error: 4, critical: 5, alert: 6, emergency: 7 };
/** Until a client sets a level it hears of failures only: a client that never asked gets no chatter. */
export const DEFAULT_SESSION_LOG_LEVEL: LoggingLevel = 'warning';
const LOGGER = 'code-execution-mcp';

type Send = (notification: ServerNotification) => Promise<void>;

export interface CallEnd {
  tool: string;
  outcome: CallOutcome;
  durationMs: number;
  errorCode?: string | undefined;
}

export class SessionLog {
  #level: LoggingLevel = DEFAULT_SESSION_LOG_LEVEL;
  readonly #standalone: Send;

  constructor(server: McpServer) {
    // Replaces the SDK's handler, which keys levels by transport session and, unset, sends everything.
    server.server.setRequestHandler(SetLevelRequestSchema, (request) => {
      this.#level = request.params.level;
      return Promise.resolve({});
    });
    this.#standalone = (notification) => server.server.notification(notification);
  }

  get level(): LoggingLevel {
    return this.#level;
  }

  /** A call reached its tool (sent on the call's own stream when `send` is the request's). */
  callStarted(tool: string, send?: Send): void {
    this.#emit('debug', { event: 'call_started', tool }, send);
  }

  callEnded(end: CallEnd, send?: Send): void {
    const level: LoggingLevel = end.outcome === 'ok' ? 'info' : end.outcome === 'internal' ? 'error' : 'warning';
    this.#emit(
      level,
      {
        event: end.outcome === 'ok' ? 'call_finished' : 'call_failed',
        tool: end.tool,
        outcome: end.outcome,
        duration_ms: Math.round(end.durationMs * 100) / 100,
        ...(end.errorCode !== undefined ? { error_code: end.errorCode } : {}),
      },
      send,
    );
  }

  #emit(level: LoggingLevel, data: Record<string, unknown>, send: Send = this.#standalone): void {
    if (LOG_SEVERITY[level] < LOG_SEVERITY[this.#level]) return;
    // a client that went away is not an error of the call
    send({ method: 'notifications/message', params: { level, logger: LOGGER, data } }).catch(() => undefined);
  }
}
