// Caps on open HTTP connections: in all, per remote address, and per agent, so one client cannot
// hold every file descriptor or lock the other agents out. On loopback every local agent comes
// from 127.0.0.1, so there the per-address cap does not apply and the per-agent cap does the work:
// a connection belongs to the agent whose token its last request carried, and an agent holds at
// most `maxPerAgent` of them (its request over that is refused 503, naming the option). When the
// total is reached, a new connection makes room by closing an idle one: first one that never
// carried an authenticated request (an idle or slow connection that only holds a slot), then an
// idle keep-alive connection of the agent holding the most. Only when every connection is busy
// is a new one answered 503 with Retry-After on its first request (or closed after a moment if it
// sends none); it never reaches the daemon's handler.

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How long a refused connection may take to send a request line before it is closed, ms. */
const REFUSED_GRACE_MS = 1000;

export interface ConnectionLimits {
  max: number;
  maxPerAddress: number;
  /** Connections one agent may hold; undefined without configured agents (every client is the one local agent). */
  maxPerAgent?: number;
}

interface Held {
  address: string;
  /** The agent of its last authenticated request; undefined until one came. */
  agent: string | undefined;
  /** Requests in progress on it (an SSE stream counts until it ends). */
  busy: number;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export class ConnectionLimiter {
  readonly #limits: ConnectionLimits;
  readonly #byAddress = new Map<string, number>();
  readonly #byAgent = new Map<string, number>();
  /** Open connections, oldest first (Maps keep insertion order). */
  readonly #held = new Map<Socket, Held>();
  readonly #refused = new WeakSet<Socket>();
  #refusedTotal = 0;
  #evictedTotal = 0;

  constructor(limits: ConnectionLimits) {
    this.#limits = limits;
  }

  get open(): number {
    return this.#held.size;
  }

  get refusedTotal(): number {
    return this.#refusedTotal;
  }

  /** Idle connections closed to make room for new ones. */
  get evictedTotal(): number {
    return this.#evictedTotal;
  }

  /** Connections `agent` holds. */
  countFor(agent: string): number {
    return this.#byAgent.get(agent) ?? 0;
  }

  /** Connections per agent (those with none are absent). */
  countsByAgent(): ReadonlyMap<string, number> {
    return this.#byAgent;
  }

  get maxPerAgent(): number | undefined {
    return this.#limits.maxPerAgent;
  }

  /** Counts every connection of `server`; makes room or marks those over a cap. */
  attach(server: Server): void {
    server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress ?? 'unknown';
      const fromAddress = this.#byAddress.get(address) ?? 0;
      const addressFull = !LOOPBACK.has(address) && fromAddress >= this.#limits.maxPerAddress;
      if (addressFull || (this.#held.size >= this.#limits.max && !this.#evictIdle())) {
        this.#refusedTotal++;
        this.#refused.add(socket);
        const timer = setTimeout(() => socket.destroy(), REFUSED_GRACE_MS);
        timer.unref();
        socket.once('close', () => clearTimeout(timer));
        return;
      }
      this.#held.set(socket, { address, agent: undefined, busy: 0 });
      this.#byAddress.set(address, fromAddress + 1);
      socket.once('close', () => this.#release(socket));
    });
  }

  /** Whether `socket` came in over a cap (its request must be refused). */
  isRefused(socket: Socket): boolean {
    return this.#refused.has(socket);
  }

  /** The refusal's text, naming the limit to raise. */
  refusalMessage(socket: Socket): string {
    const address = socket.remoteAddress ?? 'unknown';
    return !LOOPBACK.has(address) && (this.#byAddress.get(address) ?? 0) >= this.#limits.maxPerAddress
      ? `too many open connections from ${address} (server.maxConnectionsPerAddress = ${this.#limits.maxPerAddress}); close idle connections or retry later`
      : `too many open connections, all busy (server.maxConnections = ${this.#limits.max}); retry later`;
  }

  /** A request on `req`'s connection: busy (never closed to make room) until its answer ends. */
  track(req: IncomingMessage, res: ServerResponse): void {
    const held = this.#held.get(req.socket);
    if (!held) return;
    held.busy++;
    res.once('close', () => {
      held.busy--;
    });
  }

  /**
   * An authenticated request of `agent` on `req`'s connection: the connection is the agent's from
   * now on. Returns a refusal naming the option when the agent already holds its share (after
   * closing one of its own idle connections, if it has one).
   */
  claim(req: IncomingMessage, agent: string): string | undefined {
    const held = this.#held.get(req.socket);
    if (!held || held.agent === agent) return undefined;
    const max = this.#limits.maxPerAgent;
    if (max !== undefined && this.countFor(agent) >= max && !this.#evictIdle(agent)) {
      return `agent "${agent}" already holds ${this.countFor(agent)} open connections (server.maxConnectionsPerAgent = ${max}); reuse keep-alive connections, close idle ones, or retry later`;
    }
    this.#setAgent(held, agent);
    return undefined;
  }

  #setAgent(held: Held, agent: string | undefined): void {
    if (held.agent !== undefined) this.#count(this.#byAgent, held.agent, -1);
    held.agent = agent;
    if (agent !== undefined) this.#count(this.#byAgent, agent, 1);
  }

  #count(map: Map<string, number>, key: string, delta: number): void {
    const n = (map.get(key) ?? 0) + delta;
    if (n <= 0) map.delete(key);
    else map.set(key, n);
  }

  #release(socket: Socket): void {
    const held = this.#held.get(socket);
    if (!held) return;
    this.#held.delete(socket);
    this.#count(this.#byAddress, held.address, -1);
    this.#setAgent(held, undefined);
  }

  /**
   * Closes one idle connection to make room: of `agent` when given; otherwise the oldest that never
   * carried an authenticated request, else the oldest idle one of the agent holding the most.
   */
  #evictIdle(agent?: string): boolean {
    let victim: Socket | undefined;
    if (agent === undefined) {
      for (const [socket, held] of this.#held) {
        if (held.busy === 0 && held.agent === undefined) {
          victim = socket;
          break;
        }
      }
    }
    if (victim === undefined) {
      let target = agent;
      if (target === undefined) {
        let most = 0;
        for (const [name, n] of this.#byAgent) if (n > most && this.#hasIdle(name)) [target, most] = [name, n];
      }
      if (target !== undefined) {
        for (const [socket, held] of this.#held) {
          if (held.busy === 0 && held.agent === target) {
            victim = socket;
            break;
          }
        }
      }
    }
    if (victim === undefined) return false;
    this.#evictedTotal++;
    this.#release(victim);
    victim.destroy();
    return true;
  }

  #hasIdle(agent: string): boolean {
    for (const held of this.#held.values()) if (held.busy === 0 && held.agent === agent) return true;
    return false;
  }
}
