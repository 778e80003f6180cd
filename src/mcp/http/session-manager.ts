// The HTTP daemon's MCP sessions: one Streamable HTTP transport and one McpServer per session,
// bound to the agent that opened it. Sessions end on DELETE, on idle expiry, or at shutdown;
// ending one aborts its calls in flight and drops its PII vault and its stored SSE events. Each
// session's streams are resumable: events carry ids, streams tell the client when to retry, and
// the session's own event store (event-store.ts) replays what a reconnecting client missed.

import { randomUUID } from 'node:crypto';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { McpSession } from '../create-server.js';
import { createMcpSession } from '../create-server.js';
import type { AgentIdentity, McpServices } from '../mcp-types.js';
import type { ObservedTransport } from '../observed-transport.js';
import { serverSettings } from '../../config/defaults.js';
import { NodeStreamableHttpTransport } from './node-transport.js';
import { DEFAULT_EVENT_LIMITS, EVENT_BUDGET_BYTES, EventBudget, SessionEventStores } from './event-store.js';
import type { EventStoreLimits, SessionEvents, SessionEventsFactory } from './event-store.js';

/** How long a client whose SSE stream dropped waits before it reconnects (the SSE `retry` field), ms. */
export const SSE_RETRY_MS = 1_000;

export interface HttpSession {
  readonly id: string;
  readonly agent: AgentIdentity;
  readonly transport: NodeStreamableHttpTransport;
  readonly observed: ObservedTransport;
  readonly mcp: McpSession;
  readonly abort: AbortController;
  /** What this session's SSE streams sent, for clients that reconnect with Last-Event-ID. */
  readonly events: SessionEvents;
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
  #created = 0;
  #sweeper: NodeJS.Timeout | undefined;

  readonly #eventStores: SessionEventsFactory;
  /** With agents configured, each agent's sessions are charged on its byte share (without, only server.maxSessions applies). */
  readonly #perAgent: boolean;

  constructor(services: McpServices, options: { idleSeconds: number; eventBudgetBytes?: number; eventLimits?: EventStoreLimits }) {
    this.#services = services;
    // The composition root may hand over a shared store (Redis); the bounded in-memory one otherwise.
    this.#eventStores = services.eventStores ?? new SessionEventStores(new EventBudget(options.eventBudgetBytes ?? EVENT_BUDGET_BYTES, serverSettings(services.config).sessionBytesPerAgent), options.eventLimits ?? DEFAULT_EVENT_LIMITS);
    this.#perAgent = services.config.agents.length > 0;
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

  /** Open sessions by agent name (those with none are absent). */
  countsByAgent(): ReadonlyMap<string, number> {
    return this.#byAgent;
  }

  /** Stored SSE events of `agent`'s sessions and its share, for get_execution_stats. */
  eventUsage(agent: string): Record<string, number> {
    return this.#eventStores.usage(agent);
  }

  /** Why `agent` may not open one more session (server.sessionBytesPerAgent), or undefined. */
  bytesRefusal(agent: string): string | undefined {
    return this.#perAgent ? this.#eventStores.sessionRefusal(agent) : undefined;
  }

  get(id: string): HttpSession | undefined {
    return this.#sessions.get(id);
  }

  /** A new session for `agent`; it is registered when its initialize request is handled. */
  async create(agent: AgentIdentity): Promise<HttpSession> {
    const id = this.#services.mintSessionId?.() ?? randomUUID();
    const abort = new AbortController();
    const events = this.#eventStores.create(id, agent.name);
    if (this.#perAgent) this.#eventStores.chargeSession(agent.name, 1);
    const transport = new NodeStreamableHttpTransport({
      sessionId: id,
      eventStore: events,
      retryInterval: SSE_RETRY_MS,
      onsessionclosed: (closedId) => {
        void this.close(closedId, 'deleted');
      },
    });
    const mcp = createMcpSession(this.#services, { sessionId: id, agent, transport: 'http', signal: abort.signal });
    const observed = await mcp.connect(transport);
    const session: HttpSession = { id, agent, transport, observed, mcp, abort, events, lastActivityMs: this.#services.now(), activeRequests: 0, claimedIds: new Set() };
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
    try {
      await this.#services.pii?.dropSession({ sessionId: id, agent: session.agent.name });
    } catch (error) {
      // Redis down: the vault then expires after its idle TTL.
      this.#services.logger.warn({ err: error, session: id }, 'could not drop the session PII vault');
    }
    session.events.close();
    if (this.#perAgent) this.#eventStores.chargeSession(session.agent.name, -1);
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
