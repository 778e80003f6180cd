// What an SSE stream sent, kept so a client whose connection dropped can reconnect with
// Last-Event-ID and receive what it missed (Streamable HTTP resumability): a long execute_code
// survives a dropped connection. One store per MCP session, so a Last-Event-ID can only ever
// replay the events of the session it is presented to; every store draws on one byte budget, so
// sessions together hold a bounded amount. Past a bound the oldest events go first, and a resume
// from an event that is gone is refused (the client then knows it missed something), never
// silently partial. It implements the SDK's EventStore interface, which a shared store (Redis,
// for daemons behind a load balancer) can implement as well.

import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export interface EventStoreLimits {
  /** Events one stream keeps (its newest). */
  maxEventsPerStream: number;
  /** Bytes one session's streams keep together. */
  maxBytesPerSession: number;
  /** Streams one session keeps (one per POST): past it the oldest is forgotten whole. */
  maxStreamsPerSession: number;
}

export const DEFAULT_EVENT_LIMITS: Readonly<EventStoreLimits> = Object.freeze({ maxEventsPerStream: 1_000, maxBytesPerSession: 8 * 1024 * 1024, maxStreamsPerSession: 1_000 });

/** One session's event store: the SDK's EventStore, freed when the session ends. */
export interface SessionEvents extends EventStore {
  close(): void;
}

/** Where sessions keep their events: this process (the default) or a shared store (Redis). */
export interface SessionEventsFactory {
  readonly kind: 'memory' | 'redis';
  create(sessionId: string): SessionEvents;
}

/** The embedded factory: every session's events in memory, under one byte budget. */
export class MemoryEventStores implements SessionEventsFactory {
  readonly kind = 'memory' as const;
  readonly #budget: EventBudget;
  readonly #limits: EventStoreLimits;

  constructor(budget: EventBudget, limits: EventStoreLimits = DEFAULT_EVENT_LIMITS) {
    this.#budget = budget;
    this.#limits = limits;
  }

  create(): SessionEvents {
    return new SessionEventStore(this.#budget, this.#limits);
  }
}

/** Bytes all sessions' events may hold together. */
export class EventBudget {
  #used = 0;
  constructor(readonly maxBytes: number) {}

  get used(): number {
    return this.#used;
  }

  take(bytes: number): boolean {
    if (this.#used + bytes > this.maxBytes) return false;
    this.#used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.#used = Math.max(0, this.#used - bytes);
  }
}

interface StoredEvent {
  seq: number;
  message: JSONRPCMessage;
  bytes: number;
}

interface Stream {
  events: StoredEvent[];
  /** Sequence numbers at or below this were dropped from this stream (bounds). */
  droppedThrough: number;
}

/** Event ids are `<streamId>.<n>`: the SDK's stream ids are random UUIDs, n counts per session. */
const SEPARATOR = '.';

export class SessionEventStore implements SessionEvents {
  readonly #streams = new Map<StreamId, Stream>();
  readonly #budget: EventBudget;
  readonly #limits: EventStoreLimits;
  #seq = 0;
  #bytes = 0;
  #closed = false;

  constructor(budget: EventBudget, limits: EventStoreLimits = DEFAULT_EVENT_LIMITS) {
    this.#budget = budget;
    this.#limits = limits;
  }

  /** Bytes this session's events hold. */
  get bytes(): number {
    return this.#bytes;
  }

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const seq = ++this.#seq;
    const id = `${streamId}${SEPARATOR}${seq}`;
    if (this.#closed) return id;
    let stream = this.#streams.get(streamId);
    if (!stream) {
      stream = { events: [], droppedThrough: 0 };
      this.#streams.set(streamId, stream);
      // Maps keep insertion order: the first stream is the oldest.
      for (const [oldest, old] of this.#streams) {
        if (this.#streams.size <= this.#limits.maxStreamsPerSession) break;
        while (old.events.length > 0) this.#dropOldest(old);
        this.#streams.delete(oldest);
      }
    }
    const bytes = JSON.stringify(message).length * 2;
    // Make room: this stream's oldest past its count, then the session's oldest past its bytes
    // or past what the shared budget has left.
    while (stream.events.length >= this.#limits.maxEventsPerStream) this.#dropOldest(stream);
    while (this.#bytes + bytes > this.#limits.maxBytesPerSession && this.#dropAnyOldest());
    let taken = this.#bytes + bytes <= this.#limits.maxBytesPerSession && this.#budget.take(bytes);
    while (!taken && this.#dropAnyOldest()) taken = this.#budget.take(bytes);
    if (!taken) {
      // More than this session may hold: not kept, and a resume from before it is refused.
      stream.droppedThrough = seq;
      return id;
    }
    stream.events.push({ seq, message, bytes });
    this.#bytes += bytes;
    return id;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    const streamId = streamOf(eventId);
    return streamId !== undefined && this.#streams.has(streamId) ? streamId : undefined;
  }

  async replayEventsAfter(lastEventId: EventId, { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> }): Promise<StreamId> {
    const streamId = streamOf(lastEventId);
    const stream = streamId === undefined ? undefined : this.#streams.get(streamId);
    const after = seqOf(lastEventId);
    if (streamId === undefined || !stream || after === undefined) throw new Error(`unknown Last-Event-ID "${lastEventId.slice(0, 80)}" for this session`);
    // Events between the client's last one and the oldest kept were dropped: say so rather than
    // replay a stream with a hole in it.
    if (stream.droppedThrough > after) {
      throw new Error(`the events after ${lastEventId.slice(0, 80)} are no longer kept (the session's event store bound was reached); repeat the request`);
    }
    for (const e of stream.events) {
      // The priming event ({}) only carries an id; there is nothing to replay in it.
      if (e.seq > after && Object.keys(e.message).length > 0) await send(`${streamId}${SEPARATOR}${e.seq}`, e.message);
    }
    return streamId;
  }

  /** Frees everything (the session ended). */
  close(): void {
    this.#closed = true;
    this.#budget.give(this.#bytes);
    this.#bytes = 0;
    this.#streams.clear();
  }

  #dropOldest(stream: Stream): void {
    const e = stream.events.shift();
    if (!e) return;
    stream.droppedThrough = Math.max(stream.droppedThrough, e.seq);
    this.#bytes -= e.bytes;
    this.#budget.give(e.bytes);
  }

  /** Drops the oldest event of the session; false when there is none. */
  #dropAnyOldest(): boolean {
    let oldest: Stream | undefined;
    for (const s of this.#streams.values()) {
      const first = s.events[0];
      if (first && (!oldest || first.seq < (oldest.events[0] as StoredEvent).seq)) oldest = s;
    }
    if (!oldest) return false;
    this.#dropOldest(oldest);
    return true;
  }
}

export function streamOf(eventId: EventId): StreamId | undefined {
  const at = eventId.lastIndexOf(SEPARATOR);
  return at > 0 ? eventId.slice(0, at) : undefined;
}

export function seqOf(eventId: EventId): number | undefined {
  const n = Number(eventId.slice(eventId.lastIndexOf(SEPARATOR) + 1));
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}
