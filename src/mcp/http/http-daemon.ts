// The HTTP daemon: MCP Streamable HTTP at /mcp (one session per agent connection, many at once),
// GET /healthz and GET /metrics. Every request passes the connection cap, header and body
// deadlines, Host/Origin, auth and body-size guards first; a refusal is a JSON body that says what
// to fix. A client whose connection drops mid-call does not lose it: the call runs on, its
// answer is kept, and the client reconnects with Last-Event-ID (session-manager.ts). shutdown() stops accepting, drains
// calls in flight (bounded), answers the calls it then cancels, and closes.

import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { serverSettings } from '../../config/defaults.js';
import { AgentDirectory } from '../agents.js';
import { InFlight } from '../in-flight.js';
import type { AgentIdentity, McpServices } from '../mcp-types.js';
import { metricsDenied, PROMETHEUS_CONTENT_TYPE, renderMetrics } from './prometheus.js';
import { agentUsage } from './agent-usage.js';
import { ConnectionLimiter } from './connection-limiter.js';
import { healthReport, isOperator } from './health.js';
import type { RefusalReason } from './prometheus.js';
import { header, HostPolicy, jsonRpcError, readBody, sendJson } from './request-guards.js';
import { DUPLICATE_ID_CODE, duplicateIdMessage } from '../observed-transport.js';
import { SessionManager } from './session-manager.js';
import { bindProblem, MCP_PATH, StartupError } from './bind-port.js';
import type { BoundPort, ListenInfo } from './bind-port.js';
import { headerProblem, StatelessReply } from './stateless-binding.js';
import { classify, errorAnswer, isRecord } from '../router/revision.js';
import { StatelessHandler } from '../router/stateless-handler.js';
import type { HttpSession } from './session-manager.js';

/** Refusals of the resilience guards, besides the ones /metrics already names. */
type HttpRefusal = RefusalReason | 'connections' | 'body_timeout' | 'agent_sessions' | 'duplicate_id' | 'stateless';

/** Longest pause between two chunks of a request body, ms. */
const BODY_IDLE_MS = 10_000;
/** JSON-RPC error code of a stateless request whose headers do not match its body. */
const HEADER_MISMATCH = -32020;
/** What a call cancelled by shutdown is answered with. */
const SHUTDOWN_ANSWER = 'the daemon is shutting down and cancelled this call before it finished; retry it once the daemon is back';

export class HttpDaemon {
  readonly #services: McpServices;
  readonly #agents: AgentDirectory;
  readonly #hosts: HostPolicy;
  readonly #sessions: SessionManager;
  readonly #stateless: StatelessHandler;
  readonly #server: Server;
  readonly #refused = new Map<HttpRefusal, number>();
  readonly #connections: ConnectionLimiter;
  /** POST requests being answered (GET event streams are long-lived and not counted). */
  readonly #posts = new InFlight();
  #draining = false;
  #shutdown: Promise<void> | undefined;
  #bound: ListenInfo | undefined;

  /** `bound`: a port bindPort() already holds (serve binds before the pools start); else listen() binds. */
  constructor(services: McpServices, bound?: BoundPort) {
    const { config } = services;
    this.#services = services;
    this.#agents = new AgentDirectory(config);
    this.#hosts = new HostPolicy(config.host, config.allowedHosts, config.allowedOrigins);
    this.#sessions = new SessionManager(services, { idleSeconds: serverSettings(config).sessionIdleSeconds });
    this.#stateless = new StatelessHandler(services, 'http');
    services.openSessions = () => this.#sessions.size;
    services.clusterSessions?.reportSessions(() => this.#sessions.countsByAgent());
    const settings = serverSettings(config);
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      this.#handle(req, res).catch((error: unknown) => {
        services.logger.error({ err: error, path: req.url }, 'request failed');
        sendJson(res, 500, jsonRpcError(-32603, 'internal error; the daemon logged it'));
      });
    };
    if (bound) {
      this.#server = bound.server;
      this.#bound = bound.info;
      this.#server.removeAllListeners('request');
      this.#server.on('request', handler);
    } else {
      // Node checks header and request deadlines on this interval (30 s by default).
      this.#server = createServer({ connectionsCheckingInterval: 1000 }, handler);
    }
    this.#connections = new ConnectionLimiter({
      max: settings.maxConnections,
      maxPerAddress: settings.maxConnectionsPerAddress,
      ...(config.agents.length > 0 ? { maxPerAgent: settings.maxConnectionsPerAgent } : {}),
    });
    this.#connections.attach(this.#server);
    services.agentUsage = agentUsage(config, this.#connections, this.#sessions);
    // requestTimeout bounds receiving a request (headers and body), not the answer: long
    // execute_code calls stream over their response unaffected. The body deadline proper is
    // readBody's (a clear 408); this is the backstop for requests nobody reads.
    this.#server.headersTimeout = settings.headersTimeoutSeconds * 1000;
    this.#server.requestTimeout = (settings.headersTimeoutSeconds + settings.bodyTimeoutSeconds + 5) * 1000;
    this.#server.keepAliveTimeout = settings.keepAliveSeconds * 1000;
  }

  /** Open HTTP connections (for /healthz and tests). */
  get connectionCount(): number {
    return this.#connections.open;
  }

  get sessionCount(): number {
    return this.#sessions.size;
  }

  /** Binds the configured host and port (0 = any free port). */
  async listen(): Promise<ListenInfo> {
    if (this.#bound) return this.#bound;
    const { host, port } = this.#services.config;
    const problem = bindProblem(this.#services.config);
    if (problem) throw new StartupError(problem);
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, host, () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    const address = this.#server.address() as AddressInfo;
    const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return { host: address.address, port: address.port, url: `http://${shownHost}:${address.port}${MCP_PATH}` };
  }

  /** Stop accepting, let calls in flight finish for up to `drainMs`, then end every session. */
  shutdown(drainMs: number): Promise<void> {
    this.#shutdown ??= (async () => {
      const { logger, recorder } = this.#services;
      this.#draining = true;
      this.#server.close();
      this.#server.closeIdleConnections();
      logger.info({ in_flight: recorder.inFlight, drain_ms: drainMs }, 'draining');
      // A call is done when its answer has been written, not when its handler returns.
      const drained = await this.#posts.waitIdle(drainMs);
      if (!drained) logger.warn({ in_flight: recorder.inFlight, requests: this.#posts.count }, 'drain time over; cancelling the calls still running');
      const answered = (await this.#sessions.closeAll('shutdown', SHUTDOWN_ANSWER)) + (await this.#stateless.answerOpen(SHUTDOWN_ANSWER));
      await this.#stateless.close();
      if (answered > 0) logger.info({ answered }, 'answered the calls cancelled by shutdown');
      // Let those answers reach their clients before the connections go.
      await this.#posts.waitIdle(1000);
      this.#server.closeAllConnections();
    })();
    return this.#shutdown;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.#connections.isRefused(req.socket)) {
      this.#refuse(res, 'connections', 503, { error: this.#connections.refusalMessage(req.socket) }, { 'Retry-After': '5', Connection: 'close' });
      res.once('finish', () => req.socket.destroy());
      return;
    }
    this.#connections.track(req, res);
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (this.#draining) {
      return this.#refuse(res, 'draining', 503, { error: 'the daemon is shutting down; reconnect when it is back' }, { Connection: 'close' });
    }
    const hostProblem = this.#hosts.checkHost(req.headers.host);
    if (hostProblem) return this.#refuse(res, 'host', 403, { error: hostProblem });
    const originProblem = this.#hosts.checkOrigin(req.headers.origin);
    if (originProblem) return this.#refuse(res, 'origin', 403, { error: originProblem });
    // An origin that passed the check (loopback or allowedOrigins) may read what it gets: CORS.
    if (typeof req.headers.origin === 'string') {
      for (const [name, value] of Object.entries(corsHeaders(req.headers.origin))) res.setHeader(name, value);
      if (req.method === 'OPTIONS') {
        res.writeHead(204, CORS_PREFLIGHT_HEADERS);
        res.end();
        return;
      }
    }

    if (path === '/healthz') {
      if (req.method !== 'GET' && req.method !== 'HEAD') return this.#refuse(res, 'method', 405, { error: 'use GET /healthz' }, { Allow: 'GET, HEAD' });
      // Anyone learns whether the daemon serves; the figures need the operator's token (health.ts).
      const caller = this.#agents.authenticate(req.headers.authorization);
      const operator = isOperator(caller.ok ? caller.agent : undefined);
      const health = healthReport(this.#services, { sessions: this.#sessions.size, connections: this.#connections.open, draining: this.#draining, operator, authRequired: this.#agents.authRequired });
      return sendJson(res, health.status, health.body, { 'Cache-Control': 'no-store' });
    }
    if (path !== '/metrics' && path !== MCP_PATH) {
      return this.#refuse(res, 'not_found', 404, { error: `no such endpoint ${path}; MCP is at ${MCP_PATH}, health at /healthz, metrics at /metrics` });
    }
    const auth = this.#agents.authenticate(req.headers.authorization);
    if (!auth.ok) {
      const what = auth.reason === 'missing' ? 'this daemon needs a bearer token' : auth.reason === 'malformed' ? 'the Authorization header must be "Bearer <token>"' : 'the bearer token is not valid';
      const fix = 'send "Authorization: Bearer <token>" with a token from the daemon configuration';
      // error="invalid_token" (also for a missing token) and no resource_metadata parameter: an
      // OAuth-aware MCP client then reports the missing header instead of starting an OAuth flow
      // this daemon has no authorization server for (MCP authorization: a client discovers one
      // from resource_metadata or /.well-known/oauth-protected-resource, which answers 404 here).
      return this.#refuse(res, 'auth', 401, { error: `${what}; ${fix}` }, {
        'WWW-Authenticate': `Bearer realm="code-execution-mcp", error="invalid_token", error_description="${what}; ${fix.replace(/"/g, "'")}"`,
      });
    }
    const overShare = this.#connections.claim(req, auth.agent.name);
    if (overShare !== undefined) {
      this.#refuse(res, 'connections', 503, { error: overShare }, { 'Retry-After': '5', Connection: 'close' });
      res.once('finish', () => req.socket.destroy());
      return;
    }
    if (path === '/metrics') {
      if (req.method !== 'GET') return this.#refuse(res, 'method', 405, { error: 'use GET /metrics' }, { Allow: 'GET' });
      const denied = metricsDenied(auth.agent);
      if (denied) return this.#refuse(res, 'forbidden', 403, { error: denied });
      const text = this.#metrics();
      res.writeHead(200, { 'Content-Type': PROMETHEUS_CONTENT_TYPE, 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    return this.#mcp(req, res, auth.agent);
  }

  async #mcp(req: IncomingMessage, res: ServerResponse, agent: AgentIdentity): Promise<void> {
    const sessionId = header(req, 'mcp-session-id');
    if (req.method === 'POST') return this.#post(req, res, agent, sessionId);
    if (req.method !== 'GET' && req.method !== 'DELETE') {
      return this.#refuse(res, 'method', 405, jsonRpcError(-32000, `method ${req.method ?? '?'} is not supported on ${MCP_PATH}; use POST, GET or DELETE`), { Allow: 'POST, GET, DELETE' });
    }
    const session = this.#lookup(res, agent, sessionId);
    if (!session) return;
    await this.#forward(session, req, res, undefined);
  }

  async #post(req: IncomingMessage, res: ServerResponse, agent: AgentIdentity, sessionId: string | undefined): Promise<void> {
    const settings = serverSettings(this.#services.config);
    const body = await readBody(req, this.#services.config.maxBodyBytes, { totalMs: settings.bodyTimeoutSeconds * 1000, idleMs: Math.min(BODY_IDLE_MS, settings.bodyTimeoutSeconds * 1000) });
    if (!body.ok) {
      if (!body.tooLarge && body.timedOut) {
        this.#refuse(res, 'body_timeout', 408, jsonRpcError(-32600, `request body too slow: ${body.error} (server.bodyTimeoutSeconds = ${settings.bodyTimeoutSeconds}); send the whole body at once`), { Connection: 'close' });
        res.once('finish', () => req.socket.destroy());
        return;
      }
      if (body.tooLarge) {
        return this.#refuse(res, 'body_too_large', 413, jsonRpcError(-32600, `request body is larger than ${this.#services.config.maxBodyBytes} bytes (maxBodyBytes); put large data in a workspace file instead`), { Connection: 'close' });
      }
      return this.#refuse(res, 'parse', 400, jsonRpcError(-32700, `could not read the request body: ${body.error}`));
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.text);
    } catch (error) {
      return this.#refuse(res, 'parse', 400, jsonRpcError(-32700, `Parse error: the body is not valid JSON (${error instanceof Error ? error.message : String(error)})`));
    }
    // Revision 2026-07-28: no session, the version in the header and _meta (src/mcp/router/).
    if (sessionId === undefined && classify(parsed, header(req, 'mcp-protocol-version')) === 'stateless') return this.#statelessPost(req, res, agent, parsed as Record<string, unknown>);
    const messages = Array.isArray(parsed) ? (parsed as unknown[]) : [parsed];
    const isInitialize = messages.some((m) => isRecord(m) && m['method'] === 'initialize');

    let session: HttpSession | undefined;
    if (sessionId === undefined) {
      if (!isInitialize) {
        return this.#refuse(res, 'session', 400, jsonRpcError(-32000, 'Bad Request: no Mcp-Session-Id header; a session starts with an initialize request, and later requests carry the session id it returned'));
      }
      // Without agents every client is the one local agent: only the global cap applies.
      const perAgent = settings.maxSessionsPerAgent;
      // In a cluster the limit holds across daemons (counts published with each heartbeat).
      const local = this.#sessions.countFor(agent.name);
      const held = this.#services.config.agents.length > 0 && this.#services.clusterSessions ? await this.#services.clusterSessions.sessionsOf(agent.name, local) : local;
      if (this.#services.config.agents.length > 0 && held >= perAgent) {
        return this.#refuse(
          res,
          'agent_sessions',
          429,
          jsonRpcError(-32000, `agent "${agent.name}" already holds ${held} open sessions (server.maxSessionsPerAgent = ${perAgent}); close sessions it no longer uses (HTTP DELETE with their Mcp-Session-Id) or wait for idle ones to expire (server.sessionIdleSeconds)`),
          { 'Retry-After': '5' },
        );
      }
      const overBudget = this.#sessions.bytesRefusal(agent.name);
      if (overBudget !== undefined) return this.#refuse(res, 'agent_sessions', 429, jsonRpcError(-32000, overBudget), { 'Retry-After': '5' });
      if (this.#sessions.size >= settings.maxSessions) {
        return this.#refuse(res, 'overloaded', 503, jsonRpcError(-32000, `too many open sessions (server.maxSessions = ${settings.maxSessions}); close unused sessions (HTTP DELETE) or retry later`), { 'Retry-After': '5' });
      }
      session = await this.#sessions.create(agent);
    } else {
      session = this.#lookup(res, agent, sessionId);
      if (!session) return;
    }
    const ids = messages.filter((m): m is { id: RequestId } => isRecord(m) && typeof m['method'] === 'string' && (typeof m['id'] === 'string' || typeof m['id'] === 'number')).map((m) => m.id);
    // The transport maps each request id to the response that awaits it: a second request with an
    // id still open would take the first one's place, and the first would never be answered.
    const duplicate = ids.find((id, i) => session.claimedIds.has(id) || session.observed.isOpen(id) || ids.indexOf(id) !== i);
    if (duplicate !== undefined) {
      this.#refuse(res, 'duplicate_id', 400, { jsonrpc: '2.0', id: duplicate, error: { code: DUPLICATE_ID_CODE, message: duplicateIdMessage(duplicate) } });
      if (sessionId === undefined) await this.#sessions.close(session.id, 'transport-closed');
      return;
    }
    for (const id of ids) session.claimedIds.add(id);
    res.once('close', () => {
      for (const id of ids) session.claimedIds.delete(id);
    });
    await this.#forward(session, req, res, parsed);
    if (sessionId === undefined && session.transport.sessionId === undefined) await this.#sessions.close(session.id, 'transport-closed');
  }

  async #statelessPost(req: IncomingMessage, res: ServerResponse, agent: AgentIdentity, message: Record<string, unknown>): Promise<void> {
    const endPost = this.#posts.begin();
    res.once('close', endPost);
    const reply = new StatelessReply(req, res);
    const problem = headerProblem(req, message);
    const answer = problem !== null
      ? { status: 400, message: errorAnswer(message['id'], HEADER_MISMATCH, problem) }
      : await this.#stateless.answer(message, agent, { notify: reply.notify, onCancel: (cancel) => res.once('close', () => !res.writableFinished && cancel()) });
    if (answer === null) {
      res.writeHead(202).end();
      return;
    }
    if (answer.status >= 400) this.#refused.set('stateless', (this.#refused.get('stateless') ?? 0) + 1);
    reply.finish(answer.status, answer.message);
  }

  #lookup(res: ServerResponse, agent: AgentIdentity, sessionId: string | undefined): HttpSession | undefined {
    if (sessionId === undefined) {
      this.#refuse(res, 'session', 400, jsonRpcError(-32000, 'Bad Request: no Mcp-Session-Id header; start a session with an initialize POST'));
      return undefined;
    }
    const session = this.#sessions.get(sessionId);
    if (!session || session.agent.name !== agent.name) {
      if (session) this.#services.logger.warn({ session: sessionId, agent: agent.name, owner: session.agent.name }, 'session used with another agent token');
      this.#refuse(res, 'session', 404, jsonRpcError(-32001, 'Session not found: it ended, expired or belongs to another token; start a new session with initialize'));
      return undefined;
    }
    return session;
  }

  async #forward(session: HttpSession, req: IncomingMessage, res: ServerResponse, parsed: unknown): Promise<void> {
    const isPost = req.method === 'POST';
    const endPost = isPost ? this.#posts.begin() : undefined;
    if (isPost) session.activeRequests++;
    session.lastActivityMs = this.#services.now();
    // A dropped connection does not cancel what it asked for: streams are resumable, and the
    // call's answer waits in the session's event store for a GET with Last-Event-ID. A call ends
    // by notifications/cancelled, DELETE of the session, idle expiry, shutdown or its own
    // timeout_seconds, and keeps counting against its agent's in-flight limit until then.
    res.once('close', () => {
      endPost?.();
      if (isPost) session.activeRequests--;
      session.lastActivityMs = this.#services.now();
    });
    await session.transport.handleRequest(req, res, parsed);
  }

  #refuse(res: ServerResponse, reason: HttpRefusal, status: number, body: unknown, headers: Record<string, string> = {}): void {
    this.#refused.set(reason, (this.#refused.get(reason) ?? 0) + 1);
    if (reason !== 'draining') this.#services.logger.warn({ reason, status }, 'http request refused');
    sendJson(res, status, body, headers);
  }

  #metrics(): string {
    return renderMetrics({
      recorder: this.#services.recorder,
      pool: this.#services.executor.stats(),
      sessionsOpen: this.#sessions.size,
      sessionsCreated: this.#sessions.createdTotal,
      // The guards' own reasons are counted under their names too (the label set stays bounded).
      refused: this.#refused as ReadonlyMap<string, number> as ReadonlyMap<RefusalReason, number>,
      uptimeSeconds: (this.#services.now() - this.#services.startedAtMs) / 1000,
      version: this.#services.version,
      health: this.#services.executor.health(),
      processes: (this.#services.executor as { processes?: () => { kind: string; pid: number | undefined }[] }).processes?.() ?? [],
      ...(this.#services.upstream ? { upstream: this.#services.upstream.status() } : {}),
    });
  }
}

/** What a browser page of an allowed origin may send to the daemon (preflight answer). */
const CORS_PREFLIGHT_HEADERS = {
  'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
  'Access-Control-Allow-Headers': 'Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID',
  'Access-Control-Max-Age': '600',
} as const;

/** Headers every answer to an allowed origin carries, so its page can read the session id. */
function corsHeaders(origin: string): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Expose-Headers': 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate',
    Vary: 'Origin',
  };
}
