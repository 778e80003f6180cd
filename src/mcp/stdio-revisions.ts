// stdio speaks whichever revision the client asks for: 2025-11-25 (initialize first) passes
// through unchanged; a request whose _meta carries protocol version 2026-07-28 (or
// server/discover) is answered the stateless way: validated, server/discover answered here,
// removed methods refused with -32601, and its result completed with resultType and caching
// attributes on the way out. There are no headers on stdio: _meta alone carries the version.
// Its log messages follow its _meta logLevel: none without one, else those at or above it (of
// what the connection's log emits).

import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, LoggingLevel, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { completeResult, discoverResult, META_CLIENT_CAPABILITIES, META_LOG_LEVEL, META_PROTOCOL_VERSION, STATELESS_REVISION, STATELESS_SERVED, wanted } from './http/stateless.js';
import { LOG_SEVERITY } from './session-log.js';

type ServerInfo = { name: string; version: string };

/** Wraps a stdio transport so the server behind it also answers revision 2026-07-28 requests. */
export function speakBothRevisions(inner: Transport, serverInfo: ServerInfo): Transport {
  /** Stateless requests in flight: their results are completed on the way out. */
  const stateless = new Map<RequestId, { method: string; logLevel: LoggingLevel | undefined }>();
  const reply = (message: JSONRPCMessage): void => void inner.send(message).catch(() => undefined);
  const outer: Transport = {
    start: () => inner.start(),
    close: () => inner.close(),
    async send(message, options) {
      if ('method' in message && !('id' in message)) {
        const related = options?.relatedRequestId === undefined ? undefined : stateless.get(options.relatedRequestId);
        if (related && !wanted(message, related.logLevel)) return;
      }
      if ('id' in message && message.id !== undefined && !('method' in message)) {
        const method = stateless.get(message.id)?.method;
        if (method !== undefined) {
          stateless.delete(message.id);
          if ('result' in message) return inner.send({ ...message, result: completeResult(method, message.result as Record<string, unknown>, serverInfo) } as JSONRPCMessage, options);
        }
      }
      return inner.send(message, options);
    },
  };
  inner.onclose = () => outer.onclose?.();
  inner.onerror = (error) => outer.onerror?.(error);
  inner.onmessage = (message, extra) => {
    if (!('method' in message) || !('id' in message) || message.id === undefined) return outer.onmessage?.(message, extra);
    const meta = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
    const version = meta?.[META_PROTOCOL_VERSION];
    if (version === undefined && message.method !== 'server/discover') return outer.onmessage?.(message, extra);
    const error = (code: number, text: string, data?: unknown): void => reply({ jsonrpc: '2.0', id: message.id, error: { code, message: text, ...(data !== undefined && { data }) } });
    const missing = [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES].filter((key) => meta?.[key] === undefined);
    if (missing.length > 0) return error(-32602, `Invalid params: missing _meta keys: ${missing.join(', ')} (revision ${STATELESS_REVISION} sends them with every request)`);
    const logLevel = meta?.[META_LOG_LEVEL];
    if (logLevel !== undefined && !(typeof logLevel === 'string' && logLevel in LOG_SEVERITY)) {
      return error(-32602, `Invalid params: _meta["${META_LOG_LEVEL}"] must be one of ${Object.keys(LOG_SEVERITY).join(', ')}, got ${JSON.stringify(logLevel)}`);
    }
    if (version !== STATELESS_REVISION) return error(-32022, `Unsupported protocol version ${String(version)}: without initialize this server speaks ${STATELESS_REVISION}`, { supported: [STATELESS_REVISION], requested: String(version) });
    if (message.method === 'server/discover') return reply({ jsonrpc: '2.0', id: message.id, result: completeResult('server/discover', discoverResult(serverInfo, { skillsExtension: false }), serverInfo) } as JSONRPCMessage);
    if (!STATELESS_SERVED.has(message.method)) return error(-32601, `Method not found: ${message.method} (revision ${STATELESS_REVISION}; server/discover lists what this server offers)`);
    stateless.set(message.id, { method: message.method, logLevel: logLevel as LoggingLevel | undefined });
    return outer.onmessage?.(message, extra);
  };
  return outer;
}
