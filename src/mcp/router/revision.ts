// Which MCP revision a message speaks, decided in one place for every front (HTTP, embedded
// stdio, the stdio bridge): 2025-11-25 with a session (initialize first), or the stateless
// 2026-07-28 (SEP-2575: the version and the client's capabilities in each request's _meta).

import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export const STATELESS_REVISION = '2026-07-28';
/** Revisions spoken with a session (initialize, Mcp-Session-Id). */
export const SESSION_REVISIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26'];
export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
/** The log level one request asks for; without it the request gets no notifications/message. */
export const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';

export type Revision = 'session' | 'stateless';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function metaOf(message: Record<string, unknown>): Record<string, unknown> | undefined {
  const params = message['params'];
  const meta = isRecord(params) ? params['_meta'] : undefined;
  return isRecord(meta) ? meta : undefined;
}

/**
 * The revision of one incoming message. `headerVersion` is what the transport says besides the
 * body (HTTP's MCP-Protocol-Version header; stdio has none): a version no session revision has
 * means stateless. Without it: initialize starts a session; server/discover, or a request whose
 * _meta carries a protocol version, is stateless; everything else belongs to the session.
 */
export function classify(message: unknown, headerVersion?: string): Revision {
  if (!isRecord(message) || typeof message['method'] !== 'string') return 'session';
  if (headerVersion !== undefined) return SESSION_REVISIONS.includes(headerVersion) ? 'session' : 'stateless';
  if (message['method'] === 'initialize') return 'session';
  return message['method'] === 'server/discover' || metaOf(message)?.[META_PROTOCOL_VERSION] !== undefined ? 'stateless' : 'session';
}

/** A JSON-RPC error answer. */
export function errorAnswer(id: unknown, code: number, message: string, data?: unknown): JSONRPCMessage {
  return { jsonrpc: '2.0', id: (id ?? null) as string, error: { code, message, ...(data !== undefined && { data }) } };
}
