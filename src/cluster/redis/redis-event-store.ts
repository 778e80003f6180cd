// Resumable-stream events in Redis (the SDK's EventStore), for daemons behind a load balancer:
// what an SSE stream sent outlives this process's memory bounds and can be replayed from any
// daemon that holds the session. One list per stream under the session's keys, trimmed to the
// newest events, expiring with the session's idle time. Events carry results (data an agent may
// not want anyone else to read), so each is sealed like PII values: AES-256-GCM under the
// cluster's key, bound to its session and stream. Events are an aid to reconnection, not a
// record: when Redis is down an event is sent but not kept, and a resume from it is then refused
// with a clear message (as when a bound dropped it), never replayed with a hole.
//
// Bounds: events per stream, bytes per session and bytes per agent (all of an agent's sessions on
// this daemon), counted here (only the daemon holding a session writes its events), oldest
// dropped first with LPOP; so event data in Redis is at most maxBytesPerAgent per agent per
// daemon, and never grows into the room PII vaults need. Redis itself should run with
// `maxmemory-policy noeviction` (docs/redis-memory.md): under an allkeys-* policy Redis evicts any
// key, a PII vault included, whatever the daemons bound.

import type { EventId, StreamId } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { RedisConnection } from './redis-connection.js';
import type { Logger } from '../../util/logger.js';
import { DEFAULT_EVENT_LIMITS, seqOf, streamOf } from '../../mcp/http/event-store.js';
import type { SessionEvents, SessionEventsFactory } from '../../mcp/http/event-store.js';

/** Largest event kept, bytes of JSON; a larger one is sent but cannot be resumed from. */
export const MAX_STORED_EVENT_BYTES = 1024 * 1024;

export interface RedisEventStoresOptions {
  redis: RedisConnection;
  logger: Logger;
  /** Seconds a session's events outlive its last event (the session idle time). */
  ttlSeconds: number;
  /** Events one stream keeps (its newest). */
  maxEventsPerStream?: number;
  /** Bytes of sealed events one session keeps in Redis (its newest). */
  maxBytesPerSession?: number;
  /** Bytes of sealed events one agent's sessions on this daemon keep in Redis together. */
  maxBytesPerAgent?: number;
}

/** Default bytes per session and per agent kept in Redis (the in-memory store's session bound, and four sessions' worth). */
export const DEFAULT_REDIS_EVENT_BYTES = { perSession: DEFAULT_EVENT_LIMITS.maxBytesPerSession, perAgent: 4 * DEFAULT_EVENT_LIMITS.maxBytesPerSession };

/** One stored event's place in the accounting: dropped by its stream's bound or the session's. */
interface Kept {
  streamId: StreamId;
  bytes: number;
  alive: boolean;
}

export class RedisEventStores implements SessionEventsFactory {
  readonly kind = 'redis' as const;
  readonly #options: Required<RedisEventStoresOptions>;
  /** Bytes each agent's sessions keep in Redis from this daemon. */
  readonly #agentBytes = new Map<string, number>();
  #warned = false;
  #policyChecked = false;

  constructor(options: RedisEventStoresOptions) {
    this.#options = {
      maxEventsPerStream: DEFAULT_EVENT_LIMITS.maxEventsPerStream,
      maxBytesPerSession: DEFAULT_REDIS_EVENT_BYTES.perSession,
      maxBytesPerAgent: DEFAULT_REDIS_EVENT_BYTES.perAgent,
      ...options,
    };
  }

  create(sessionId: string, agent = ''): SessionEvents {
    this.#checkPolicy();
    const account: AgentAccount = {
      bytes: () => this.#agentBytes.get(agent) ?? 0,
      add: (delta) => {
        const n = (this.#agentBytes.get(agent) ?? 0) + delta;
        if (n <= 0) this.#agentBytes.delete(agent);
        else this.#agentBytes.set(agent, n);
      },
    };
    return new RedisSessionEvents(sessionId, this.#options, account, () => {
      if (this.#warned) return;
      this.#warned = true;
      this.#options.logger.warn({ code: 'EVENTS_NOT_KEPT' }, 'SSE events could not be kept in Redis; clients that reconnect may have to repeat a request');
    });
  }

  usage(agent: string): { event_bytes: number; max_event_bytes: number } {
    return { event_bytes: this.#agentBytes.get(agent) ?? 0, max_event_bytes: this.#options.maxBytesPerAgent };
  }

  /** Once: warns when Redis may evict PII vaults to make room (docs/shared-budgets.md). */
  #checkPolicy(): void {
    if (this.#policyChecked) return;
    this.#policyChecked = true;
    this.#options.redis
      .run('the SSE event store', (client) => client.configGet('maxmemory-policy'))
      .then((reply) => {
        const policy = String((reply as Record<string, unknown>)['maxmemory-policy'] ?? '');
        if (policy !== '' && policy !== 'noeviction') {
          this.#options.logger.warn({ code: 'REDIS_EVICTION_POLICY', policy }, `Redis runs with maxmemory-policy ${policy}: under memory pressure it may evict PII vaults; set maxmemory-policy noeviction (docs/shared-budgets.md)`);
        }
      })
      .catch(() => {
        // CONFIG is often disabled on managed Redis: nothing to check then.
      });
  }
}

interface AgentAccount {
  bytes(): number;
  add(delta: number): void;
}

interface Stored {
  seq: number;
  message: JSONRPCMessage;
}

class RedisSessionEvents implements SessionEvents {
  readonly #sessionId: string;
  readonly #options: Required<RedisEventStoresOptions>;
  readonly #onLost: () => void;
  readonly #account: AgentAccount;
  /** Each stream's kept events, oldest first. */
  readonly #streams = new Map<StreamId, Kept[]>();
  /** Every kept event of the session, oldest first (dropped ones are skipped lazily). */
  #order: Kept[] = [];
  #bytes = 0;
  /** Only the daemon holding the session writes its events, so the sequence and the sizes can live here. */
  #seq = 0;
  #closed = false;

  constructor(sessionId: string, options: Required<RedisEventStoresOptions>, account: AgentAccount, onLost: () => void) {
    this.#sessionId = sessionId;
    this.#options = options;
    this.#account = account;
    this.#onLost = onLost;
  }

  #key(streamId: StreamId): string {
    return `${this.#options.redis.prefix}events:${this.#sessionId}:${streamId}`;
  }

  #place(streamId: StreamId): string {
    return `events\0${this.#sessionId}\0${streamId}`;
  }

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const seq = ++this.#seq;
    const id = `${streamId}.${seq}`;
    if (this.#closed) return id;
    const json = JSON.stringify({ seq, message } satisfies Stored);
    if (json.length > MAX_STORED_EVENT_BYTES) return id;
    const key = this.#key(streamId);
    const sealed = this.#options.redis.sealer.seal(json, this.#place(streamId));
    const { maxEventsPerStream, maxBytesPerSession, maxBytesPerAgent, ttlSeconds } = this.#options;
    const bytes = sealed.length;
    let stream = this.#streams.get(streamId);
    if (!stream) {
      stream = [];
      this.#streams.set(streamId, stream);
    }
    // Make room, oldest first: this stream past its count, then the session past its bytes or
    // the agent past its share. What cannot be made room for is not kept (a resume from before
    // it is then refused, never replayed with a hole).
    const drops: StreamId[] = [];
    while (stream.length >= maxEventsPerStream) drops.push(this.#drop(stream.shift()));
    while (this.#bytes + bytes > maxBytesPerSession || this.#account.bytes() + bytes > maxBytesPerAgent) {
      const oldest = this.#oldest();
      if (!oldest) break;
      this.#streams.get(oldest.streamId)?.shift();
      drops.push(this.#drop(oldest));
    }
    const keep = this.#bytes + bytes <= maxBytesPerSession && this.#account.bytes() + bytes <= maxBytesPerAgent;
    if (keep) {
      const kept: Kept = { streamId, bytes, alive: true };
      stream.push(kept);
      this.#order.push(kept);
      this.#bytes += bytes;
      this.#account.add(bytes);
    }
    if (!keep && drops.length === 0) return id;
    try {
      await this.#options.redis.run('the SSE event store', (client) => {
        const multi = client.multi();
        for (const dropped of drops) multi.lPop(this.#key(dropped));
        if (keep) multi.rPush(key, sealed).expire(key, ttlSeconds);
        return multi.exec();
      });
    } catch {
      this.#onLost();
    }
    return id;
  }

  /** Forgets one kept event in the accounting; returns its stream (whose oldest it was). */
  #drop(kept: Kept | undefined): StreamId {
    if (!kept) return '';
    kept.alive = false;
    this.#bytes -= kept.bytes;
    this.#account.add(-kept.bytes);
    return kept.streamId;
  }

  #oldest(): Kept | undefined {
    while (this.#order.length > 0 && this.#order[0]?.alive === false) this.#order.shift();
    return this.#order.shift();
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    const streamId = streamOf(eventId);
    return streamId !== undefined && this.#streams.has(streamId) ? streamId : undefined;
  }

  async replayEventsAfter(lastEventId: EventId, { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> }): Promise<StreamId> {
    const streamId = streamOf(lastEventId);
    const after = seqOf(lastEventId);
    if (streamId === undefined || after === undefined || !this.#streams.has(streamId)) throw new Error(`unknown Last-Event-ID "${lastEventId.slice(0, 80)}" for this session`);
    const raw = await this.#options.redis.run('the SSE event store', (client) => client.lRange(this.#key(streamId), 0, -1));
    const place = this.#place(streamId);
    const events = raw.map((sealed) => JSON.parse(this.#options.redis.sealer.open(sealed, place).toString('utf8')) as Stored);
    const at = events.findIndex((e) => e.seq === after);
    if (at < 0) throw new Error(`the events after ${lastEventId.slice(0, 80)} are no longer kept (bound reached or the shared store was down); repeat the request`);
    for (const e of events.slice(at + 1)) {
      if (Object.keys(e.message).length > 0) await send(`${streamId}.${e.seq}`, e.message);
    }
    return streamId;
  }

  close(): void {
    this.#closed = true;
    const keys = [...this.#streams.keys()].map((s) => this.#key(s));
    this.#streams.clear();
    this.#order = [];
    this.#account.add(-this.#bytes);
    this.#bytes = 0;
    if (keys.length === 0) return;
    // Best effort: what is not deleted now expires with the TTL.
    this.#options.redis.run('the SSE event store', (client) => client.del(keys)).catch(() => {});
  }
}
