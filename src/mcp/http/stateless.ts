// MCP revision 2026-07-28 (SEP-2575, stateless) on the same /mcp endpoint as the session revision
// 2025-11-25: no initialize and no Mcp-Session-Id; each request carries its protocol version (the
// MCP-Protocol-Version header and _meta) and the client's capabilities in _meta; server/discover
// says what the server is; every result carries resultType, and cacheable ones ttlMs/cacheScope.
// The revision is chosen per request (isStatelessRequest). A stateless request is answered by one
// MCP server per agent (the same tools and resources a session has), reached over an in-process
// loopback with request ids of its own, so ids of different clients never meet.

import type { IncomingMessage } from 'node:http';
import type { JSONRPCMessage, JSONRPCNotification, JSONRPCRequest, LoggingLevel, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { createMcpSession, SERVER_NAME } from '../create-server.js';
import type { McpSession } from '../create-server.js';
import type { AgentIdentity, McpServices } from '../mcp-types.js';
import { LOG_SEVERITY } from '../session-log.js';
import { answerSkills, isSkillsRequest, skillManifestResources, SKILLS_EXTENSION } from './skills-extension.js';

export const STATELESS_REVISION = '2026-07-28';
/** Revisions spoken with a session (initialize, Mcp-Session-Id). */
export const SESSION_REVISIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26'];
export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
/** The log level one request asks for; without it the request gets no notifications/message. */
export const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
const HEADER_MISMATCH = -32020;
const UNSUPPORTED_VERSION = -32022;
const INVALID_PARAMS = -32602;
const METHOD_NOT_FOUND = -32601;
/** Results a client may cache (SEP-2549): they carry ttlMs and cacheScope. */
const CACHEABLE = new Set(['server/discover', 'tools/list', 'resources/list', 'resources/templates/list', 'resources/read', 'skills/list', 'skills/get']);
/** What this server answers statelessly besides server/discover; everything else is 404 -32601. */
export const STATELESS_SERVED = new Set(['tools/list', 'tools/call', 'resources/list', 'resources/read', 'resources/templates/list', 'skills/list', 'skills/get']);

export interface StatelessAnswer {
  status: number;
  body: unknown;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function metaOf(message: Record<string, unknown>): Record<string, unknown> | undefined {
  const params = message['params'];
  if (typeof params !== 'object' || params === null) return undefined;
  const meta = (params as Record<string, unknown>)['_meta'];
  return typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>) : undefined;
}

/**
 * Whether a request without a session speaks the stateless revision: its MCP-Protocol-Version
 * header is one no session revision has, or it carries the revision's _meta, or it is
 * server/discover. An initialize (no header, or a session revision) starts a session as before.
 */
export function isStatelessRequest(req: IncomingMessage, message: unknown): boolean {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return false;
  const record = message as Record<string, unknown>;
  if (typeof record['method'] !== 'string') return false;
  const version = header(req, 'mcp-protocol-version');
  if (version !== undefined) return !SESSION_REVISIONS.includes(version);
  if (record['method'] === 'initialize') return false;
  return record['method'] === 'server/discover' || metaOf(record)?.[META_PROTOCOL_VERSION] !== undefined;
}

/** Answers one stateless request for `agent`; one per-agent MCP server does the work. */
export class StatelessEndpoint {
  readonly #services: McpServices;
  readonly #servers = new Map<string, Promise<{ session: McpSession; loopback: Loopback }>>();
  readonly #abort = new AbortController();

  constructor(services: McpServices) {
    this.#services = services;
  }

  /**
   * `notify` receives the notifications related to this request (progress, the log messages its
   * _meta logLevel asks for), before the answer; without it they are dropped.
   */
  async answer(req: IncomingMessage, message: Record<string, unknown>, agent: AgentIdentity, onClose: (cancel: () => void) => void, notify?: (notification: JSONRPCNotification) => void): Promise<StatelessAnswer | null> {
    const id = (message['id'] ?? null) as RequestId | null;
    const method = message['method'] as string;
    const reject = (status: number, code: number, text: string, data?: unknown): StatelessAnswer => ({ status, body: { jsonrpc: '2.0', id, error: { code, message: text, ...(data !== undefined && { data }) } } });
    const version = header(req, 'mcp-protocol-version');
    if (version === undefined) return reject(400, HEADER_MISMATCH, `Missing MCP-Protocol-Version header: a request without Mcp-Session-Id speaks revision ${STATELESS_REVISION} and must send "MCP-Protocol-Version: ${STATELESS_REVISION}"`);
    const meta = metaOf(message);
    const missing = [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES].filter((key) => meta?.[key] === undefined);
    if (missing.length > 0) return reject(400, INVALID_PARAMS, `Invalid params: missing _meta keys: ${missing.join(', ')} (revision ${STATELESS_REVISION} sends them with every request)`);
    const logLevel = meta?.[META_LOG_LEVEL];
    if (logLevel !== undefined && !(typeof logLevel === 'string' && logLevel in LOG_SEVERITY)) {
      return reject(400, INVALID_PARAMS, `Invalid params: _meta["${META_LOG_LEVEL}"] must be one of ${Object.keys(LOG_SEVERITY).join(', ')}, got ${JSON.stringify(logLevel)}`);
    }
    if (meta?.[META_PROTOCOL_VERSION] !== version) return reject(400, HEADER_MISMATCH, `MCP-Protocol-Version header (${version}) does not match _meta["${META_PROTOCOL_VERSION}"] (${String(meta?.[META_PROTOCOL_VERSION])})`);
    if (version !== STATELESS_REVISION) {
      return reject(400, UNSUPPORTED_VERSION, `Unsupported protocol version ${version}: without a session this server speaks ${STATELESS_REVISION}; with a session (initialize) ${SESSION_REVISIONS[0]}`, { supported: [STATELESS_REVISION], requested: version });
    }
    const nameProblem = checkNameHeader(req, method, message);
    if (nameProblem) return reject(400, HEADER_MISMATCH, nameProblem);
    if (message['id'] === undefined) return null; // a notification: nothing to answer
    if (method === 'server/discover') return { status: 200, body: { jsonrpc: '2.0', id, result: completeResult(method, discoverResult(this.#serverInfo(), { skillsExtension: true }), this.#serverInfo()) } };
    if (!STATELESS_SERVED.has(method)) return reject(404, METHOD_NOT_FOUND, `Method not found: ${method} (revision ${STATELESS_REVISION}; server/discover lists what this server offers)`);

    const params = (typeof message['params'] === 'object' && message['params'] !== null ? message['params'] : {}) as Record<string, unknown>;
    if (isSkillsRequest(method, params)) {
      const skills = await answerSkills(this.#services, agent, method, params);
      if ('error' in skills) return { status: 200, body: { jsonrpc: '2.0', id, error: skills.error } };
      return { status: 200, body: { jsonrpc: '2.0', id, result: completeResult(method, skills.result, this.#serverInfo()) } };
    }
    const { loopback } = await this.#serverFor(agent);
    const reply = await loopback.request(message as unknown as JSONRPCRequest, onClose, notify && { notify, logLevel: logLevel as LoggingLevel | undefined });
    if ('error' in reply) return { status: reply.error.code === METHOD_NOT_FOUND ? 404 : 200, body: { ...reply, id } };
    if ('result' in reply) {
      let result = reply.result as Record<string, unknown>;
      // The skills extension's SKILL.md files are resources too (first page only: they are few).
      if (method === 'resources/list' && params['cursor'] === undefined) result = { ...result, resources: [...((result['resources'] as unknown[]) ?? []), ...(await skillManifestResources(this.#services, agent))] };
      return { status: 200, body: { jsonrpc: '2.0', id, result: completeResult(method, result, this.#serverInfo()) } };
    }
    return reject(500, -32603, 'internal error: no answer');
  }

  async close(): Promise<void> {
    this.#abort.abort(new Error('daemon shutting down'));
    const servers = await Promise.allSettled(this.#servers.values());
    this.#servers.clear();
    await Promise.allSettled(servers.map((s) => (s.status === 'fulfilled' ? s.value.session.close() : undefined)));
  }

  #serverFor(agent: AgentIdentity): Promise<{ session: McpSession; loopback: Loopback }> {
    let server = this.#servers.get(agent.name);
    if (!server) {
      server = (async () => {
        const session = createMcpSession(this.#services, { sessionId: `stateless-${agent.name}`, agent, transport: 'http', signal: this.#abort.signal });
        const loopback = new Loopback();
        await session.connect(loopback);
        // This server's log says everything; each request gets what its own _meta logLevel asks for.
        await loopback.request({ jsonrpc: '2.0', id: 0, method: 'logging/setLevel', params: { level: 'debug' } }, () => undefined);
        return { session, loopback };
      })();
      this.#servers.set(agent.name, server);
    }
    return server;
  }

  #serverInfo(): { name: string; version: string } {
    return { name: SERVER_NAME, version: this.#services.version };
  }
}

/** What server/discover answers (before completeResult). */
export function discoverResult(serverInfo: { name: string; version: string }, options: { skillsExtension: boolean }): Record<string, unknown> {
  const extensions = options.skillsExtension ? { extensions: { [SKILLS_EXTENSION]: {} } } : {};
  return { supportedVersions: [STATELESS_REVISION], capabilities: { tools: { listChanged: false }, resources: {}, ...extensions }, serverInfo };
}

/** resultType, the caching attributes of cacheable results, and who answered. */
export function completeResult(method: string, result: Record<string, unknown>, serverInfo: { name: string; version: string }): Record<string, unknown> {
  const meta = typeof result['_meta'] === 'object' && result['_meta'] !== null ? (result['_meta'] as Record<string, unknown>) : {};
  return {
    ...result,
    resultType: 'complete',
    // Everything this server lists depends on the agent (permissions, private skills) and can change at any time.
    ...(CACHEABLE.has(method) && { ttlMs: 0, cacheScope: 'private' }),
    _meta: { ...meta, [META_SERVER_INFO]: serverInfo },
  };
}

/** The Mcp-Name header, when sent, must name what the body names (tool, resource). */
function checkNameHeader(req: IncomingMessage, method: string, message: Record<string, unknown>): string | null {
  const sentMethod = header(req, 'mcp-method')?.trim();
  if (sentMethod === undefined) return `Mcp-Method header missing: revision ${STATELESS_REVISION} sends the body's method in it ("Mcp-Method: ${method}")`;
  if (sentMethod !== method) return `Mcp-Method header (${sentMethod}) does not match the body's method (${method})`;
  const sentName = header(req, 'mcp-name')?.trim();
  const params = (message['params'] ?? {}) as Record<string, unknown>;
  const named = method === 'tools/call' || method === 'prompts/get' ? params['name'] : method === 'resources/read' ? params['uri'] : undefined;
  if (typeof named === 'string' && sentName === undefined) return `Mcp-Name header missing: a ${method} request names "${named}" in the header too`;
  if (sentName !== undefined && typeof named === 'string' && sentName !== named) return `Mcp-Name header (${sentName}) does not match the body's ${method === 'resources/read' ? 'uri' : 'name'} (${named})`;
  return null;
}

/** Where one request's related notifications go, and the log level it asked for. */
interface RequestSink {
  notify: (notification: JSONRPCNotification) => void;
  logLevel: LoggingLevel | undefined;
}

/**
 * An in-process transport: each request gets an id of its own, its answer goes back to its caller,
 * and notifications related to it (by the SDK's relatedRequestId) go to its sink, if it has one.
 */
class Loopback implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly #waiting = new Map<string, (message: JSONRPCMessage) => void>();
  readonly #sinks = new Map<string, RequestSink>();
  #next = 0;

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ('method' in message) {
      if ('id' in message) return; // a request to the client: this revision has no channel for them
      const related = options?.relatedRequestId;
      const sink = related === undefined ? undefined : this.#sinks.get(String(related));
      if (sink && wanted(message, sink.logLevel)) sink.notify(message);
      return;
    }
    if (!('id' in message) || message.id === undefined) return;
    const waiter = this.#waiting.get(String(message.id));
    if (!waiter) return;
    this.#waiting.delete(String(message.id));
    this.#sinks.delete(String(message.id));
    waiter(message);
  }

  async close(): Promise<void> {
    this.onclose?.();
  }

  request(message: JSONRPCRequest, onClose: (cancel: () => void) => void, sink?: RequestSink): Promise<JSONRPCMessage> {
    const id = `stateless-${++this.#next}`;
    let settle: (message: JSONRPCMessage) => void = () => undefined;
    const answer = new Promise<JSONRPCMessage>((resolve) => (settle = resolve));
    this.#waiting.set(id, settle);
    if (sink) this.#sinks.set(id, sink);
    // A client that goes away cancels its call (the server sends no answer to a cancelled request).
    onClose(() => {
      if (!this.#waiting.delete(id)) return;
      this.#sinks.delete(id);
      this.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'the client closed the request' } });
      settle({ jsonrpc: '2.0', id, error: { code: -32800, message: 'Request cancelled: the client closed the request' } });
    });
    this.onmessage?.({ ...message, id });
    return answer;
  }
}

/** Log messages only at or above the level the request asked for, and none if it asked for none. */
export function wanted(notification: JSONRPCNotification, logLevel: LoggingLevel | undefined): boolean {
  if (notification.method !== 'notifications/message') return true;
  if (logLevel === undefined) return false;
  const level = (notification.params as { level?: LoggingLevel } | undefined)?.level;
  return level !== undefined && LOG_SEVERITY[level] >= LOG_SEVERITY[logLevel];
}
