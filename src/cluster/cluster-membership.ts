// A daemon's place in its cluster: it announces the address the load balancer knows it by in
// Redis (a heartbeat every second), reads the other live daemons, and mints MCP session ids that
// nginx's consistent hash routes back to itself (nginx-chash.ts). Without peers, or with Redis
// down, it mints against the last ring it knew; a ring with servers nginx does not have (or that
// died) still routes right, because nginx skips dead servers' points just as if they were absent.

import { randomUUID } from 'node:crypto';
import type { Logger } from '../util/logger.js';
import { buildRing, serverFor } from './nginx-chash.js';
import type { ChashPoint } from './nginx-chash.js';
import type { RedisConnection } from './redis/redis-connection.js';

/** How often a daemon renews its presence, ms. */
export const HEARTBEAT_MS = 1_000;
/** A daemon not heard from this long is left out of the ring, ms. */
export const PEER_EXPIRY_MS = 10_000;
/**
 * A daemon once seen stays in this daemon's ring this long after it was last seen, ms. Minting
 * against a ring with extra (dead) servers still routes right; against a ring missing a live one
 * (a Redis restart empties the registry until every daemon's next heartbeat) it does not.
 */
export const PEER_FORGET_MS = 10 * 60_000;
/** Ids tried before giving up on routing and using a plain one (1 in N hits with N daemons). */
const MAX_MINT_ATTEMPTS = 10_000;

export class ClusterMembership {
  readonly #redis: RedisConnection;
  readonly #logger: Logger;
  readonly #key: string;
  #self: string | null = null;
  #peers: string[] = [];
  /** Every daemon seen, with when it was last seen alive in the registry (ms). */
  readonly #lastSeen = new Map<string, number>();
  #ring: ChashPoint[] = [];
  #timer: NodeJS.Timeout | undefined;
  #localCounts: () => ReadonlyMap<string, number> = () => new Map();

  constructor(redis: RedisConnection, logger: Logger) {
    this.#redis = redis;
    this.#logger = logger;
    this.#key = `${redis.prefix}daemons`;
  }

  /** The daemons in the ring, this one included. */
  get peers(): readonly string[] {
    return this.#peers;
  }

  /** Starts announcing `address` ("HOST:PORT" as in the load balancer's upstream list). */
  async join(address: string): Promise<void> {
    this.#self = address;
    this.#lastSeen.set(address, Date.now());
    this.#setPeers([address]);
    await this.#beat().catch(() => {});
    this.#timer = setInterval(() => void this.#beat().catch(() => {}), HEARTBEAT_MS);
    this.#timer.unref();
    this.#logger.info({ address, peers: this.#peers }, 'joined the cluster');
  }

  /** Where this daemon's open sessions per agent come from; published with every heartbeat. */
  reportSessions(counts: () => ReadonlyMap<string, number>): void {
    this.#localCounts = counts;
  }

  /**
   * Sessions `agent` holds open across the cluster: `local` (this daemon's, exact) plus what the
   * other live daemons published at their last heartbeat (at most a second old, so a burst of
   * initializes on several daemons at once can pass the limit by that much). With Redis down,
   * the local count alone.
   */
  async sessionsOf(agent: string, local: number): Promise<number> {
    const others = this.#peers.filter((p) => p !== this.#self);
    if (others.length === 0 || !this.#redis.up) return local;
    try {
      const counts = await this.#redis.run('cluster session counts', async (client) => {
        const multi = client.multi();
        for (const peer of others) multi.hGet(this.#sessionsKey(peer), agent);
        return (await multi.exec()) as unknown[];
      });
      return counts.reduce<number>((sum, n) => sum + (Number(n) || 0), local);
    } catch {
      return local;
    }
  }

  #sessionsKey(daemon: string): string {
    return `${this.#redis.prefix}sessions:${daemon}`;
  }

  /** A new session id that the load balancer's `hash $http_mcp_session_id consistent` routes here. */
  mintSessionId(): string {
    const self = this.#self;
    if (self === null || this.#peers.length < 2) return randomUUID();
    for (let i = 0; i < MAX_MINT_ATTEMPTS; i++) {
      const id = randomUUID();
      if (serverFor(this.#ring, id) === self) return id;
    }
    return randomUUID();
  }

  async #beat(): Promise<void> {
    const self = this.#self;
    if (self === null) return;
    const now = Date.now();
    const counts = [...this.#localCounts()].filter(([, n]) => n > 0).map(([agent, n]) => [agent, String(n)] as [string, string]);
    const sessionsKey = this.#sessionsKey(self);
    const live = await this.#redis.run('cluster membership', async (client) => {
      const multi = client.multi().del(sessionsKey);
      if (counts.length > 0) multi.hSet(sessionsKey, counts).pExpire(sessionsKey, PEER_EXPIRY_MS);
      const replies = (await multi
        .zAdd(this.#key, { score: now, value: self })
        .zRemRangeByScore(this.#key, 0, now - PEER_EXPIRY_MS * 6)
        .zRangeByScore(this.#key, now - PEER_EXPIRY_MS, '+inf')
        .exec()) as unknown[];
      const members = replies[replies.length - 1];
      return Array.isArray(members) ? members.filter((m): m is string => typeof m === 'string') : [];
    });
    if (!live.includes(self)) live.push(self);
    for (const peer of live) this.#lastSeen.set(peer, now);
    for (const [peer, seen] of this.#lastSeen) if (now - seen > PEER_FORGET_MS) this.#lastSeen.delete(peer);
    this.#setPeers([...this.#lastSeen.keys()]);
  }

  #setPeers(peers: string[]): void {
    const sorted = [...new Set(peers)].sort();
    if (sorted.join(',') === this.#peers.join(',')) return;
    this.#peers = sorted;
    this.#ring = buildRing(sorted);
  }

  /** Leaves the ring at once (a clean stop), so others stop minting around this daemon. */
  async leave(): Promise<void> {
    clearInterval(this.#timer);
    const self = this.#self;
    this.#self = null;
    if (self === null || !this.#redis.up) return;
    await this.#redis.run('cluster membership', (client) => client.multi().zRem(this.#key, self).del(this.#sessionsKey(self)).exec()).catch(() => {});
  }
}
