// The HTTP daemon's MCP sessions: one Streamable HTTP transport and one McpServer per session,
// bound to the agent that opened it. Sessions end on DELETE, on idle expiry, or at shutdown;
// ending one aborts its calls in flight and drops its PII vault.

import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { McpSession } from '../create-server.js';
import { createMcpSession } from '../create-server.js';
import type { AgentIdentity, McpServices } from '../mcp-types.js';
import type { ObservedTransport } from '../observed-transport.js';

export interface HttpSession {
  readonly id: string;
  readonly agent: AgentIdentity;
  readonly transport: StreamableHTTPServerTransport;
  readonly observed: ObservedTransport;
  readonly mcp: McpSession;
  readonly abort: AbortController;
  lastActivityMs: number;
  /** POST requests of this session being answered right now. */
  activeRequests: number;
  /** Request ids of POSTs being answered: a second request with one of them is refused. */
  readonly claimedIds: Set<RequestId>;
}

export type SessionEndReason = 'deleted' | 'idle' | 'shutdown' | 'transport-closed';

export class SessionManager {
  readonly #services: McpServices;
  readonly #sessions = new Map<string, HttpSession>();
  readonly #byAgent = new Map<string, number>();
  readonly #maxBodyBytes: number;
  #created = 0;
  #sweeper: NodeJS.Timeout | undefined;

  constructor(services: McpServices, options: { idleSeconds: number; maxBodyBytes: number }) {
    this.#services = services;
    this.#maxBodyBytes = options.maxBodyBytes;
    const idleMs = options.idleSeconds * 1000;
    this.#sweeper = setInterval(() => this.#sweep(idleMs), Math.max(250, Math.min(idleMs / 2, 30_000)));
    this.#sweeper.unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  get createdTotal(): number {
    return this.#created;
  }

  /** Sessions `agent` holds open. */
  countFor(agent: string): number {
    return this.#byAgent.get(agent) ?? 0;
  }

  get(id: string): HttpSession | undefined {
    return this.#sessions.get(id);
  }

  /** A new session for `agent`; it is registered when its initialize request is handled. */
  async create(agent: AgentIdentity): Promise<HttpSession> {
    const id = randomUUID();
    const abort = new AbortController();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      maxRequestBodySize: this.#maxBodyBytes,
      onsessionclosed: (closedId) => {
        void this.close(closedId, 'deleted');
      },
    });
    const mcp = createMcpSession(this.#services, { sessionId: id, agent, transport: 'http', signal: abort.signal });
    const observed = await mcp.connect(transport);
    const session: HttpSession = { id, agent, transport, observed, mcp, abort, lastActivityMs: this.#services.now(), activeRequests: 0, claimedIds: new Set() };
    observed.onclose = chain(observed.onclose, () => {
      if (this.#sessions.get(id) === session) void this.close(id, 'transport-closed');
    });
    this.#sessions.set(id, session);
    this.#byAgent.set(agent.name, this.countFor(agent.name) + 1);
    this.#created++;
    this.#services.logger.info({ session: id, agent: agent.name }, 'session opened');
    return session;
  }

  async close(id: string, reason: SessionEndReason): Promise<void> {
    const session = this.#sessions.get(id);
    if (!session) return;
    this.#sessions.delete(id);
    const left = this.countFor(session.agent.name) - 1;
    if (left > 0) this.#byAgent.set(session.agent.name, left);
    else this.#byAgent.delete(session.agent.name);
    session.abort.abort(new Error(`session ${reason}`));
    try {
      await session.mcp.close();
    } catch (error) {
      this.#services.logger.warn({ err: error, session: id }, 'session close failed');
    }
    this.#services.pii?.drop(id);
    this.#services.logger.info({ session: id, agent: session.agent.name, reason }, 'session closed');
  }

  /**
   * Ends every session. With `answer`, requests still open are first answered with that message
   * (a JSON-RPC error), so a drain that ran out of time leaves no client waiting.
   */
  async closeAll(reason: SessionEndReason, answer?: string): Promise<number> {
    if (this.#sweeper) clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    const sessions = [...this.#sessions.values()];
    const answered = answer === undefined ? [] : await Promise.all(sessions.map((s) => s.observed.answerOpen(answer)));
    await Promise.all(sessions.map((s) => this.close(s.id, reason)));
    return answered.reduce((a, b) => a + b, 0);
  }

  #sweep(idleMs: number): void {
    const now = this.#services.now();
    for (const session of this.#sessions.values()) {
      const busy = session.activeRequests > 0 || session.observed.pendingCalls().length > 0;
      if (!busy && now - session.lastActivityMs > idleMs) void this.close(session.id, 'idle');
    }
  }
}

function chain(first: (() => void) | undefined, second: () => void): () => void {
  return () => {
    first?.();
    second();
  };
}
