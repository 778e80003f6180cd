// Resumable-stream events in Redis (the SDK's EventStore), for daemons behind a load balancer:
// what an SSE stream sent outlives this process's memory bounds and can be replayed from any
// daemon that holds the session. One list per stream under the session's keys, trimmed to the
// newest events, expiring with the session's idle time. Events carry results (data an agent may
// not want anyone else to read), so each is sealed like PII values: AES-256-GCM under the
// cluster's key, bound to its session and stream. Events are an aid to reconnection, not a
// record: when Redis is down an event is sent but not kept, and a resume from it is then refused
// with a clear message (as when a bound dropped it), never replayed with a hole.

import type { EventId, StreamId } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { RedisConnection } from '../../cluster/redis-connection.js';
import type { Logger } from '../../util/logger.js';
import { DEFAULT_EVENT_LIMITS, seqOf, streamOf } from './event-store.js';
import type { SessionEvents, SessionEventsFactory } from './event-store.js';

/** Largest event kept, bytes of JSON; a larger one is sent but cannot be resumed from. */
export const MAX_STORED_EVENT_BYTES = 1024 * 1024;

export interface RedisEventStoresOptions {
  redis: RedisConnection;
  logger: Logger;
  /** Seconds a session's events outlive its last event (the session idle time). */
  ttlSeconds: number;
  /** Events one stream keeps (its newest). */
  maxEventsPerStream?: number;
}

export class RedisEventStores implements SessionEventsFactory {
  readonly kind = 'redis' as const;
  readonly #options: Required<RedisEventStoresOptions>;
  #warned = false;

  constructor(options: RedisEventStoresOptions) {
    this.#options = { maxEventsPerStream: DEFAULT_EVENT_LIMITS.maxEventsPerStream, ...options };
  }

  create(sessionId: string): SessionEvents {
    return new RedisSessionEvents(sessionId, this.#options, () => {
      if (this.#warned) return;
      this.#warned = true;
      this.#options.logger.warn({ code: 'EVENTS_NOT_KEPT' }, 'SSE events could not be kept in Redis; clients that reconnect may have to repeat a request');
    });
  }
}

interface Stored {
  seq: number;
  message: JSONRPCMessage;
}

class RedisSessionEvents implements SessionEvents {
  readonly #sessionId: string;
  readonly #options: Required<RedisEventStoresOptions>;
  readonly #onLost: () => void;
  readonly #streams = new Set<StreamId>();
  /** Only the daemon holding the session writes its events, so the sequence can live here. */
  #seq = 0;
  #closed = false;

  constructor(sessionId: string, options: Required<RedisEventStoresOptions>, onLost: () => void) {
    this.#sessionId = sessionId;
    this.#options = options;
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
    this.#streams.add(streamId);
    const key = this.#key(streamId);
    const sealed = this.#options.redis.sealer.seal(json, this.#place(streamId));
    const { maxEventsPerStream, ttlSeconds } = this.#options;
    try {
      await this.#options.redis.run('the SSE event store', (client) => client.multi().rPush(key, sealed).lTrim(key, -maxEventsPerStream, -1).expire(key, ttlSeconds).exec());
    } catch {
      this.#onLost();
    }
    return id;
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
    const keys = [...this.#streams].map((s) => this.#key(s));
    this.#streams.clear();
    if (keys.length === 0) return;
    // Best effort: what is not deleted now expires with the TTL.
    this.#options.redis.run('the SSE event store', (client) => client.del(keys)).catch(() => {});
  }
}
