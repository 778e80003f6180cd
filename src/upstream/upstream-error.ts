// The one error class the upstream subsystem throws, with a stable code the sandbox bridge and
// the MCP front can map to a tool error without parsing messages.

import { DaemonError } from '../util/daemon-error.js';

/**
 * - 'UNKNOWN_TOOL': no such server or tool (the message suggests close names);
 * - 'INVALID_ARGUMENT': the arguments do not match the tool's input schema;
 * - 'TOOL_ERROR': the tool ran and failed (`isError: true` or a JSON-RPC error from the server);
 * - 'TIMEOUT': the call took longer than its timeout;
 * - 'ABORTED': the caller's signal aborted the call;
 * - 'SERVER_UNAVAILABLE': the server is not connected (starting, failed, reconnecting, closed);
 * - 'CONNECTION_LOST': the connection broke while the call was in flight;
 * - 'PROTOCOL_ERROR': the server answered with something that is not a valid MCP result.
 */
export type UpstreamErrorCode =
  | 'UNKNOWN_TOOL'
  | 'INVALID_ARGUMENT'
  | 'TOOL_ERROR'
  | 'TIMEOUT'
  | 'ABORTED'
  | 'SERVER_UNAVAILABLE'
  | 'CONNECTION_LOST'
  | 'PROTOCOL_ERROR';

export class UpstreamError extends DaemonError {
  override readonly name = 'UpstreamError';
  declare readonly code: UpstreamErrorCode;
  /** The server the failing call was for, when known. */
  readonly server?: string;
  /** The tool the failing call was for, when known. */
  readonly tool?: string;

  constructor(code: UpstreamErrorCode, message: string, details: { server?: string; tool?: string; cause?: unknown } = {}) {
    super(code, message, { cause: details.cause });
    if (details.server !== undefined) this.server = details.server;
    if (details.tool !== undefined) this.tool = details.tool;
  }
}

/** `server.tool` as the sandbox spells it, for messages. */
export function qualifiedName(server: string, tool: string): string {
  return `${server}.${tool}`;
}
