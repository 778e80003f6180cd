// The handler of the stateless revision 2026-07-28 (SEP-2575) for every front: it checks each
// request's _meta, answers server/discover itself, refuses what the revision removed, serves the
// SEP-2640 skills extension, hands the rest to one MCP server per agent (the same tools and
// resources a session has, reached over a Loopback), completes every result (resultType, caching
// attributes, serverInfo) and passes on the notifications related to the request that it asked
// for (progress with a progressToken; log messages at or above its _meta logLevel, none without).
// The fronts carry bytes: HTTP (http-daemon.ts), embedded stdio (stdio-front.ts), and the bridge,
// whose daemon runs this handler.

import type { JSONRPCMessage, JSONRPCNotification, JSONRPCRequest, LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import { createMcpSession, INSTRUCTIONS, SERVER_NAME } from '../create-server.js';
import type { McpSession } from '../create-server.js';
import type { AgentIdentity, McpServices, SessionInfo } from '../mcp-types.js';
import type { ObservedTransport } from '../observed-transport.js';
import { LOG_SEVERITY } from '../session-log.js';
import { answerSkills, isSkillsRequest, skillManifestResources, SKILLS_EXTENSION } from '../http/skills-extension.js';
import { Loopback } from './loopback.js';
import type { NotificationSink } from './loopback.js';
import { errorAnswer, isRecord, META_CLIENT_CAPABILITIES, META_LOG_LEVEL, META_PROTOCOL_VERSION, META_SERVER_INFO, metaOf, SESSION_REVISIONS, STATELESS_REVISION } from './revision.js';

const UNSUPPORTED_VERSION = -32022;
const INVALID_PARAMS = -32602;
const METHOD_NOT_FOUND = -32601;
/** Results a client may cache (SEP-2549): they carry ttlMs and cacheScope. */
const CACHEABLE = new Set(['server/discover', 'tools/list', 'resources/list', 'resources/templates/list', 'resources/read', 'skills/list', 'skills/get']);
/** What is answered besides server/discover; everything else is -32601. */
const SERVED = new Set(['tools/list', 'tools/call', 'resources/list', 'resources/read', 'resources/templates/list', 'skills/list', 'skills/get']);

/** One answer; `status` is its HTTP status (400 for a malformed request, 404 for an unknown method), which stdio ignores. */
export interface StatelessAnswer {
  status: number;
  message: JSONRPCMessage;
}

/** Where one request's notifications go (none when absent) and how a front cancels it. */
export interface StatelessExchange {
  notify?: NotificationSink | undefined;
  onCancel: (cancel: () => void) => void;
}

interface AgentServer {
  session: McpSession;
  observed: ObservedTransport;
  loopback: Loopback;
}

export class StatelessHandler {
  readonly #services: McpServices;
  readonly #transport: SessionInfo['transport'];
  readonly #servers = new Map<string, Promise<AgentServer>>();
  readonly #abort = new AbortController();

  constructor(services: McpServices, transport: SessionInfo['transport']) {
    this.#services = services;
    this.#transport = transport;
  }

  /** The answer to one stateless message; null for a notification (nothing to answer). */
  async answer(message: Record<string, unknown>, agent: AgentIdentity, exchange: StatelessExchange): Promise<StatelessAnswer | null> {
    const id = message['id'];
    const method = String(message['method']);
    const refuse = (status: number, code: number, text: string, data?: unknown): StatelessAnswer => ({ status, message: errorAnswer(id, code, text, data) });
    const meta = metaOf(message);
    const missing = [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES].filter((key) => meta?.[key] === undefined);
    if (missing.length > 0) return refuse(400, INVALID_PARAMS, `Invalid params: missing _meta keys: ${missing.join(', ')} (revision ${STATELESS_REVISION} sends them with every request)`);
    const logLevel = meta?.[META_LOG_LEVEL];
    if (logLevel !== undefined && !isLogLevel(logLevel)) {
      return refuse(400, INVALID_PARAMS, `Invalid params: _meta["${META_LOG_LEVEL}"] must be one of ${Object.keys(LOG_SEVERITY).join(', ')}, got ${JSON.stringify(logLevel)}`);
    }
    const version = String(meta?.[META_PROTOCOL_VERSION]);
    if (version !== STATELESS_REVISION) {
      return refuse(400, UNSUPPORTED_VERSION, `Unsupported protocol version ${version}: without a session this server speaks ${STATELESS_REVISION}; with a session (initialize) ${SESSION_REVISIONS[0]}`, { supported: [STATELESS_REVISION], requested: version });
    }
    if (id === undefined) return null;
    if (method === 'server/discover') return this.#complete(method, id, discoverResult(this.#serverInfo()));
    if (!SERVED.has(method)) return refuse(404, METHOD_NOT_FOUND, `Method not found: ${method} (revision ${STATELESS_REVISION}; server/discover lists what this server offers)`);

    const params = isRecord(message['params']) ? message['params'] : {};
    if (isSkillsRequest(method, params)) {
      const skills = await answerSkills(this.#services, agent, method, params);
      return 'error' in skills ? { status: 200, message: errorAnswer(id, skills.error.code, skills.error.message, skills.error.data) } : this.#complete(method, id, skills.result);
    }
    const { loopback } = await this.#serverFor(agent);
    const sink = exchange.notify && ((note: JSONRPCNotification) => wanted(note, logLevel) && exchange.notify?.(note));
    const reply = await loopback.request(message as unknown as JSONRPCRequest, sink || undefined, exchange.onCancel);
    if ('error' in reply) return { status: reply.error.code === METHOD_NOT_FOUND ? 404 : 200, message: reply };
    if (!('result' in reply)) return refuse(500, -32603, 'internal error: no answer');
    let result = reply.result as Record<string, unknown>;
    // The skills extension's SKILL.md files are resources too (first page only: they are few).
    if (method === 'resources/list' && params['cursor'] === undefined) result = { ...result, resources: [...((result['resources'] as unknown[]) ?? []), ...(await skillManifestResources(this.#services, agent))] };
    return this.#complete(method, id, result);
  }

  /** Waits until no request is being answered, at most `ms`; whether it got there. */
  async waitIdle(ms: number): Promise<boolean> {
    const servers = await Promise.allSettled(this.#servers.values());
    const idle = await Promise.all(servers.map((s) => (s.status === 'fulfilled' ? s.value.session.requests.waitIdle(ms) : true)));
    return idle.every(Boolean);
  }

  /** Answers every request still open with an error carrying `text` (a drain that ran out of time). */
  async answerOpen(text: string): Promise<number> {
    const servers = await Promise.allSettled(this.#servers.values());
    const counts = await Promise.all(servers.map((s) => (s.status === 'fulfilled' ? s.value.observed.answerOpen(text) : 0)));
    return counts.reduce((a, b) => a + b, 0);
  }

  async close(): Promise<void> {
    this.#abort.abort(new Error('daemon shutting down'));
    const servers = await Promise.allSettled(this.#servers.values());
    this.#servers.clear();
    await Promise.allSettled(servers.map((s) => (s.status === 'fulfilled' ? s.value.session.close() : undefined)));
  }

  #complete(method: string, id: unknown, result: Record<string, unknown>): StatelessAnswer {
    return { status: 200, message: { jsonrpc: '2.0', id: id as string, result: completeResult(method, result, this.#serverInfo()) } };
  }

  #serverFor(agent: AgentIdentity): Promise<AgentServer> {
    let server = this.#servers.get(agent.name);
    if (!server) {
      server = (async () => {
        const session = createMcpSession(this.#services, { sessionId: `stateless-${agent.name}`, agent, transport: this.#transport, signal: this.#abort.signal });
        const loopback = new Loopback();
        const observed = await session.connect(loopback);
        // This server's log says everything; each request gets what its own _meta logLevel asks for.
        await loopback.request({ jsonrpc: '2.0', id: 0, method: 'logging/setLevel', params: { level: 'debug' } }, undefined, () => undefined);
        return { session, observed, loopback };
      })();
      this.#servers.set(agent.name, server);
    }
    return server;
  }

  #serverInfo(): { name: string; version: string } {
    return { name: SERVER_NAME, version: this.#services.version };
  }
}

/** A log level by name; own keys only, so `constructor` or `__proto__` is not one. */
function isLogLevel(value: unknown): value is LoggingLevel {
  return typeof value === 'string' && Object.hasOwn(LOG_SEVERITY, value);
}

/** What server/discover answers (before completeResult). */
function discoverResult(serverInfo: { name: string; version: string }): Record<string, unknown> {
  return { supportedVersions: [STATELESS_REVISION], capabilities: { tools: { listChanged: false }, resources: {}, extensions: { [SKILLS_EXTENSION]: {} } }, serverInfo, instructions: INSTRUCTIONS };
}

/** resultType, the caching attributes of cacheable results, and who answered. */
function completeResult(method: string, result: Record<string, unknown>, serverInfo: { name: string; version: string }): Record<string, unknown> {
  const meta = typeof result['_meta'] === 'object' && result['_meta'] !== null ? (result['_meta'] as Record<string, unknown>) : {};
  return {
    ...result,
    resultType: 'complete',
    // Everything this server lists depends on the agent (permissions, private skills) and can change at any time.
    ...(CACHEABLE.has(method) && { ttlMs: 0, cacheScope: 'private' }),
    _meta: { ...meta, [META_SERVER_INFO]: serverInfo },
  };
}

/** Log messages only at or above the level the request asked for, and none if it asked for none. */
function wanted(notification: JSONRPCNotification, logLevel: unknown): boolean {
  if (notification.method !== 'notifications/message') return true;
  if (!isLogLevel(logLevel)) return false;
  const level = (notification.params as { level?: unknown } | undefined)?.level;
  return isLogLevel(level) && LOG_SEVERITY[level] >= LOG_SEVERITY[logLevel];
}
