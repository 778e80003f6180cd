// What an SSE stream sent, kept so a client whose connection dropped can reconnect with
// Last-Event-ID and receive what it missed (Streamable HTTP resumability): a long execute_code
// survives a dropped connection. One store per MCP session, so a Last-Event-ID can only ever
// replay the events of the session it is presented to. The events themselves live in the shared
// store (src/store/): this process's memory, or Redis for daemons behind a load balancer, where
// they are sealed and expire with the session's idle time. The accounting lives here, written
// once for every store, because only the daemon holding a session writes its events: every
// session draws on one byte budget per daemon, so sessions together hold a bounded amount, and
// each agent on its share of it: an agent holds at most maxBytesPerAgent, and when the budget is
// full an agent under its fair share (the budget over the agents holding events) takes room from
// the agent most over it, oldest events first, so one agent cannot fill the budget and leave the
// others' streams unresumable. Past a bound the oldest events go first, and a resume from an
// event that is gone (dropped by a bound, or never kept because the store was down) is refused
// (the client then knows it missed something), never silently partial. With agents configured,
// each open session is charged SESSION_BYTES on the same per-agent share (server.sessionBytesPerAgent):
// the agent's own oldest events make room for a new session, and past that the session is refused.

import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { MemoryStore } from '../../store/memory-store.js';
import type { SharedStore } from '../../store/shared-store.js';

export interface EventStoreLimits {
  /** Events one stream keeps (its newest). */
  maxEventsPerStream: number;
  /** Bytes one session's streams keep together. */
  maxBytesPerSession: number;
  /** Streams one session keeps (one per POST): past it the oldest is forgotten whole. */
  maxStreamsPerSession: number;
}

/** Bytes all sessions' stored events may hold together (here, not in session-manager.ts: the cluster's wiring needs it without the MCP server). */
export const EVENT_BUDGET_BYTES = 128 * 1024 * 1024;
/** 8 MiB per session; with the daemon's budget of 128 MiB (a quarter per agent), what a daemon keeps in a shared store is bounded as in memory. */
export const DEFAULT_EVENT_LIMITS: Readonly<EventStoreLimits> = Object.freeze({ maxEventsPerStream: 1_000, maxBytesPerSession: 8 * 1024 * 1024, maxStreamsPerSession: 1_000 });

/** What one open session is charged on its agent's share: an idle session costs about 300 KB of the daemon's memory (measured). */
export const SESSION_BYTES = 256 * 1024;

/** One session's event store: the SDK's EventStore, freed when the session ends. */
export interface SessionEvents extends EventStore {
  close(): void;
}

/** Where sessions keep their events, and under which budget. */
export interface SessionEventsFactory {
  readonly kind: 'memory' | 'redis';
  create(sessionId: string, agent?: string): SessionEvents;
  /** Bytes one agent's sessions and events hold here, and its share (for get_execution_stats). */
  usage(agent: string): { event_bytes: number; session_bytes: number; max_session_bytes: number };
  /** Why `agent` may not open one more session (its share is full once its own events made room), or undefined. */
  sessionRefusal(agent: string): string | undefined;
  /** Charges (`+1`) or frees (`-1`) one open session of `agent`. */
  chargeSession(agent: string, change: 1 | -1): void;
}

/** Where the events of sessions go: a shared store, and how long they outlive their last event there. */
export interface EventPlace {
  store: SharedStore;
  /** Seconds a session's events outlive its last event (the session idle time). */
  ttlSeconds: number;
}

/** Every session's events in one shared store (in memory by default), under one byte budget. */
export class SessionEventStores implements SessionEventsFactory {
  readonly kind: 'memory' | 'redis';
  readonly #budget: EventBudget;
  readonly #limits: EventStoreLimits;
  readonly #place: EventPlace;
  #sessions = 0;

  constructor(budget: EventBudget, limits: EventStoreLimits = DEFAULT_EVENT_LIMITS, place: EventPlace = { store: new MemoryStore(), ttlSeconds: 86_400 }) {
    this.#budget = budget;
    this.#limits = limits;
    this.#place = place;
    this.kind = place.store.kind;
  }

  create(sessionId = `session-${++this.#sessions}`, agent = ''): SessionEvents {
    return new SessionEventStore(this.#budget, this.#limits, agent, { ...this.#place, sessionId });
  }

  usage(agent: string): { event_bytes: number; session_bytes: number; max_session_bytes: number } {
    return { event_bytes: this.#budget.usedBy(agent), session_bytes: this.#budget.sessionsOf(agent) * SESSION_BYTES, max_session_bytes: this.#budget.maxBytesPerAgent };
  }

  sessionRefusal(agent: string): string | undefined {
    return this.#budget.sessionRefusal(agent);
  }

  chargeSession(agent: string, change: 1 | -1): void {
    this.#budget.chargeSession(agent, change);
  }
}

interface AgentShare {
  /** Bytes of its events. */
  bytes: number;
  /** Its open sessions, each charged SESSION_BYTES. */
  sessions: number;
  stores: Set<SessionEventStore>;
}

/** Bytes all sessions' events may hold together, and each agent's share of them. */
export class EventBudget {
  #used = 0;
  readonly #agents = new Map<string, AgentShare>();

  /** `maxBytesPerAgent`: one agent's sessions together; a quarter of the budget by default. */
  constructor(
    readonly maxBytes: number,
    readonly maxBytesPerAgent: number = Math.max(1, Math.floor(maxBytes / 4)),
  ) {}

  get used(): number {
    return this.#used;
  }

  /** Bytes `agent`'s events hold. */
  usedBy(agent: string): number {
    return this.#agents.get(agent)?.bytes ?? 0;
  }

  sessionsOf(agent: string): number {
    return this.#agents.get(agent)?.sessions ?? 0;
  }

  /** What `agent` holds on its share, with `more` bytes and `sessions` more sessions. */
  #held(mine: AgentShare, more: number, sessions = 0): number {
    return mine.bytes + more + (mine.sessions + sessions) * SESSION_BYTES;
  }

  /** Why `agent` may not open one more session, or undefined; its own oldest events make room first (an open session is not a cache). */
  sessionRefusal(agent: string): string | undefined {
    const mine = this.#agent(agent);
    while (this.#held(mine, 0, 1) > this.maxBytesPerAgent && this.#dropOldestOf(mine));
    if (this.#held(mine, 0, 1) <= this.maxBytesPerAgent) return undefined;
    return `agent "${agent}" holds ${mine.sessions} open sessions of ${SESSION_BYTES} bytes each; one more would pass its ${this.maxBytesPerAgent}-byte session budget (server.sessionBytesPerAgent); close sessions it no longer uses (HTTP DELETE with their Mcp-Session-Id) or wait for idle ones to expire (server.sessionIdleSeconds)`;
  }

  chargeSession(agent: string, change: 1 | -1): void {
    const mine = this.#agent(agent);
    mine.sessions = Math.max(0, mine.sessions + change);
    this.#forgetIfEmpty(agent, mine);
  }

  /**
   * Takes `bytes` for `agent`: false past its share, or when the budget is full and no agent over
   * its fair share has events to give back.
   */
  take(bytes: number, agent = ''): boolean {
    const mine = this.#agent(agent);
    if (this.#held(mine, bytes) > this.maxBytesPerAgent) return false;
    while (this.#used + bytes > this.maxBytes) if (!this.#reclaim(agent)) return false;
    this.#used += bytes;
    mine.bytes += bytes;
    return true;
  }

  give(bytes: number, agent = ''): void {
    this.#used = Math.max(0, this.#used - bytes);
    const mine = this.#agents.get(agent);
    if (mine) mine.bytes = Math.max(0, mine.bytes - bytes);
  }

  /** A store of `agent` that events may be taken back from. */
  register(agent: string, store: SessionEventStore): void {
    this.#agent(agent).stores.add(store);
  }

  unregister(agent: string, store: SessionEventStore): void {
    const mine = this.#agents.get(agent);
    if (!mine) return;
    mine.stores.delete(store);
    this.#forgetIfEmpty(agent, mine);
  }

  #forgetIfEmpty(agent: string, mine: AgentShare): void {
    if (mine.stores.size === 0 && mine.bytes === 0 && mine.sessions === 0) this.#agents.delete(agent);
  }

  /** Drops the oldest event of `mine`'s fullest store; false when it holds none. */
  #dropOldestOf(mine: AgentShare): boolean {
    let fullest: SessionEventStore | undefined;
    for (const store of mine.stores) if (store.bytes > 0 && (!fullest || store.bytes > fullest.bytes)) fullest = store;
    return fullest !== undefined && fullest.dropOldestEvent();
  }

  #agent(agent: string): AgentShare {
    let entry = this.#agents.get(agent);
    if (!entry) {
      entry = { bytes: 0, sessions: 0, stores: new Set() };
      this.#agents.set(agent, entry);
    }
    return entry;
  }

  /** Drops the oldest event of the agent most over its fair share, for `requester` under it. */
  #reclaim(requester: string): boolean {
    let holders = 0;
    for (const [name, a] of this.#agents) if (a.bytes > 0 || name === requester) holders++;
    const fair = this.maxBytes / Math.max(1, holders);
    if (this.usedBy(requester) >= fair) return false;
    let richest: AgentShare | undefined;
    for (const [name, a] of this.#agents) if (name !== requester && a.bytes > fair && (!richest || a.bytes > richest.bytes)) richest = a;
    return richest !== undefined && this.#dropOldestOf(richest);
  }
}

/** One kept event in the accounting (its message is in the shared store). */
interface KeptEvent {
  seq: number;
  bytes: number;
}

interface Stream {
  events: KeptEvent[];
  /** Sequence numbers at or below this were dropped from this stream (bounds), or never kept. */
  droppedThrough: number;
}

/** Event ids are `<streamId>.<n>`: the SDK's stream ids are random UUIDs, n counts per session. */
const SEPARATOR = '.';
let anonymous = 0;

export class SessionEventStore implements SessionEvents {
  readonly #streams = new Map<StreamId, Stream>();
  readonly #budget: EventBudget;
  readonly #limits: EventStoreLimits;
  readonly #agent: string;
  readonly #store: SharedStore;
  readonly #ttlMs: number;
  readonly #prefix: string;
  #seq = 0;
  #bytes = 0;
  #closed = false;

  constructor(budget: EventBudget, limits: EventStoreLimits = DEFAULT_EVENT_LIMITS, agent = '', place?: EventPlace & { sessionId: string }) {
    this.#budget = budget;
    this.#limits = limits;
    this.#agent = agent;
    this.#store = place?.store ?? new MemoryStore();
    this.#ttlMs = (place?.ttlSeconds ?? 86_400) * 1000;
    this.#prefix = `events:${place?.sessionId ?? `anonymous-${++anonymous}`}:`;
    budget.register(agent, this);
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
        while (old.events.length > 0) this.#dropOldest(oldest, old);
        this.#streams.delete(oldest);
        void this.#store.delete([this.#key(oldest)]).catch(() => {});
      }
    }
    const json = JSON.stringify(message);
    const bytes = json.length * 2;
    // Make room: this stream's oldest past its count, then the session's oldest past its bytes
    // or past what the shared budget has left.
    while (stream.events.length >= this.#limits.maxEventsPerStream) this.#dropOldest(streamId, stream);
    while (this.#bytes + bytes > this.#limits.maxBytesPerSession && this.#dropAnyOldest());
    let taken = this.#bytes + bytes <= this.#limits.maxBytesPerSession && this.#budget.take(bytes, this.#agent);
    while (!taken && this.#dropAnyOldest()) taken = this.#budget.take(bytes, this.#agent);
    if (!taken) {
      // More than this session may hold: not kept, and a resume from before it is refused.
      stream.droppedThrough = seq;
      return id;
    }
    const kept: KeptEvent = { seq, bytes };
    stream.events.push(kept);
    this.#bytes += bytes;
    try {
      await this.#store.append(this.#key(streamId), { id: seq, value: json }, this.#ttlMs);
    } catch {
      // The store is down: sent but not kept, so a resume from before it is refused.
      const at = stream.events.indexOf(kept);
      if (at >= 0) stream.events.splice(at, 1);
      this.#release(bytes);
      stream.droppedThrough = Math.max(stream.droppedThrough, seq);
    }
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
    const gone = (): Error => new Error(`the events after ${lastEventId.slice(0, 80)} are no longer kept (a bound was reached: ${this.#limits.maxBytesPerSession} bytes or ${this.#limits.maxEventsPerStream} events per stream per session, or the agent's share, server.sessionBytesPerAgent; or the shared store was down); repeat the request`);
    // Events between the client's last one and the oldest kept were dropped: say so rather than
    // replay a stream with a hole in it.
    if (stream.droppedThrough > after) throw gone();
    const expected = stream.events.filter((e) => e.seq > after).map((e) => e.seq);
    const entries = await this.#store.readAfter(this.#key(streamId), after);
    // The store lost what was kept (a shared store restarted, or its keys expired): a hole.
    if (expected.some((seq) => !entries.some((e) => e.id === seq))) throw gone();
    for (const e of entries) {
      if (!expected.includes(e.id)) continue;
      const message = JSON.parse(e.value) as JSONRPCMessage;
      // The priming event ({}) only carries an id; there is nothing to replay in it.
      if (Object.keys(message).length > 0) await send(`${streamId}${SEPARATOR}${e.id}`, message);
    }
    return streamId;
  }

  /** Frees everything (the session ended). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#budget.give(this.#bytes, this.#agent);
    this.#bytes = 0;
    const keys = [...this.#streams.keys()].map((s) => this.#key(s));
    this.#streams.clear();
    this.#budget.unregister(this.#agent, this);
    // Best effort: what is not deleted now expires with the TTL.
    if (keys.length > 0) void this.#store.delete(keys).catch(() => {});
  }

  /** Gives back this session's oldest event (another agent under its fair share needs room). */
  dropOldestEvent(): boolean {
    return this.#dropAnyOldest();
  }

  #key(streamId: StreamId): string {
    return `${this.#prefix}${streamId}`;
  }

  #release(bytes: number): void {
    this.#bytes -= bytes;
    this.#budget.give(bytes, this.#agent);
  }

  #dropOldest(streamId: StreamId, stream: Stream): void {
    const e = stream.events.shift();
    if (!e) return;
    stream.droppedThrough = Math.max(stream.droppedThrough, e.seq);
    this.#release(e.bytes);
    void this.#store.trim(this.#key(streamId), e.seq).catch(() => {});
  }

  /** Drops the oldest event of the session; false when there is none. */
  #dropAnyOldest(): boolean {
    let oldest: [StreamId, Stream] | undefined;
    for (const entry of this.#streams) {
      const first = entry[1].events[0];
      if (first && (!oldest || first.seq < (oldest[1].events[0] as KeptEvent).seq)) oldest = entry;
    }
    if (!oldest) return false;
    this.#dropOldest(oldest[0], oldest[1]);
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
