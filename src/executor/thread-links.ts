// A sandbox process's worker threads as the coordinator reaches them on the direct path: each
// thread's own host link (host-link-server.ts), over which calls go out and their output and
// answers come back, without the process's main thread (workers/js/direct-server.ts). A call
// is tied to the link it was sent on and to its key: a frame about it from any other link, or
// without its key, is dropped. A thread takes calls once it says 'serving', and runs one at a
// time; one more call of the same agent may be sent ahead to wait on the thread behind the running
// one (the thread queues it), so the thread never idles for a round trip to the coordinator.
// When a link closes with a call on it, the process's main thread answers that call (it ended the
// thread, or saw it crash); if no answer comes within LINK_LOST_MS, the call fails with a clear
// error instead of hanging.

import type { LinkConnection } from './host-link-server.js';
import type { Outcome, RunRequest } from '../../workers/kit/protocol.js';

/** How long a call whose thread's link closed waits for its process to answer for it, ms. */
export const LINK_LOST_MS = 2_000;

interface LinkCall {
  id: number;
  key: string;
  agent: string;
}

interface Link {
  conn: LinkConnection;
  serving: boolean;
  /** The calls on this thread, with their keys: the running one first, then at most one sent ahead. */
  calls: LinkCall[];
}

/** Calls one thread may hold: the running one and one sent ahead. */
const CALLS_PER_THREAD = 2;

export interface ThreadLinkEvents {
  done(id: number, outcome: Outcome): void;
  output(id: number, lines: string[]): void;
  /** The call's link closed and its process did not answer for it in time. */
  lost(id: number): void;
  /** A call that waited here for a free thread was sent to one. */
  started(id: number): void;
  /** A thread is free to take a call (it started serving, or answered one). */
  free(): void;
}

export class ThreadLinks {
  readonly #links = new Map<LinkConnection, Link>();
  readonly #events: ThreadLinkEvents;
  /** Calls by id: which link carries each. */
  readonly #calls = new Map<number, Link>();
  /** Calls accepted while no thread was free, sent in order as threads free. */
  readonly #pending: { id: number; request: RunRequest }[] = [];

  constructor(events: ThreadLinkEvents) {
    this.#events = events;
  }

  /** Threads serving and free, less the calls already waiting for one. */
  get free(): number {
    return Math.max(0, this.#idle() - this.#pending.length);
  }

  /** Threads that said they serve, busy or not. */
  get serving(): number {
    let n = 0;
    for (const l of this.#links.values()) if (l.serving) n++;
    return n;
  }

  #idle(): number {
    let n = 0;
    for (const l of this.#links.values()) if (l.serving && l.calls.length === 0) n++;
    return n;
  }

  /** Busy threads that may take one call sent ahead (of their running call's agent only). */
  get aheadRoom(): number {
    let n = 0;
    for (const l of this.#links.values()) if (l.serving && l.calls.length > 0 && l.calls.length < CALLS_PER_THREAD) n++;
    return Math.max(0, n - this.#pending.length);
  }

  /**
   * Sends a call to a free thread, or ahead to a busy one, or keeps it until one frees: true when
   * it started now (a call sent ahead starts when the call before it answers: the 'started' event).
   */
  submit(id: number, request: RunRequest): boolean {
    if (this.#pending.length === 0 && this.send(id, request)) return this.running(id);
    this.#pending.push({ id, request });
    return false;
  }

  /** Whether call `id` runs on its thread now (not waiting there behind another). */
  running(id: number): boolean {
    return this.#calls.get(id)?.calls[0]?.id === id;
  }

  /** Takes back a call that is still waiting here; false when it was sent (or is unknown). */
  withdraw(id: number): boolean {
    const i = this.#pending.findIndex((p) => p.id === id);
    if (i < 0) return false;
    this.#pending.splice(i, 1);
    return true;
  }

  #sendPending(): void {
    while (this.#pending.length > 0 && this.#idle() > 0) {
      const next = this.#pending[0] as { id: number; request: RunRequest };
      if (!this.send(next.id, next.request)) return;
      this.#pending.shift();
      if (this.running(next.id)) this.#events.started(next.id);
    }
  }

  /**
   * Sends a call to a free thread, or else ahead to a thread running a call of the same agent
   * (never behind another agent's call: its long call would hold this one up); false when none may
   * take it.
   */
  send(id: number, request: RunRequest): boolean {
    return this.#sendTo(id, request, (l) => l.calls.length === 0) || this.#sendTo(id, request, (l) => l.calls.length < CALLS_PER_THREAD && l.calls.every((c) => c.agent === request.agent));
  }

  #sendTo(id: number, request: RunRequest, fits: (link: Link) => boolean): boolean {
    for (const link of this.#links.values()) {
      if (!link.serving || !fits(link)) continue;
      const call: LinkCall = { id, key: request.callKey ?? '', agent: request.agent };
      link.calls.push(call);
      if (!link.conn.write(JSON.stringify({ kind: 'run', id, request }))) {
        link.calls.splice(link.calls.indexOf(call), 1);
        link.serving = false;
        continue;
      }
      this.#calls.set(id, link);
      return true;
    }
    return false;
  }

  /** Whether call `id` travels on a link (the direct path). */
  has(id: number): boolean {
    return this.#calls.has(id);
  }

  /** Whether `conn` carries call `id` now: a host call from any other link is not the call's. */
  carries(conn: LinkConnection, id: number): boolean {
    return this.#calls.get(id)?.conn === conn;
  }

  /**
   * The call is over whatever answered it: its link is free again (if still open), unless its
   * thread was ended (`retired`): its link closes soon, and no call may be sent to it meanwhile.
   */
  release(id: number, retired = false): void {
    const link = this.#calls.get(id);
    if (!link) return;
    this.#calls.delete(id);
    const i = link.calls.findIndex((c) => c.id === id);
    if (i >= 0) link.calls.splice(i, 1);
    if (retired) link.serving = false;
  }

  /** Tells the thread not to start `id` if it has not yet (its process's main thread stops it otherwise). */
  cancel(id: number, reason: string): void {
    this.#calls.get(id)?.conn.write(JSON.stringify({ kind: 'cancel', id, reason }));
  }

  frame(conn: LinkConnection, frame: Record<string, unknown>): void {
    let link = this.#links.get(conn);
    if (frame.kind === 'serving') {
      if (!link) this.#links.set(conn, (link = { conn, serving: false, calls: [] }));
      link.serving = true;
      this.#sendPending();
      this.#events.free();
      return;
    }
    const call = link?.calls.find((c) => c.id === frame.id);
    if (!link || !call || frame.key !== call.key) return;
    const id = call.id;
    if (frame.kind === 'output' && Array.isArray(frame.lines)) {
      this.#events.output(id, frame.lines.filter((l): l is string => typeof l === 'string'));
    } else if (frame.kind === 'done' && isOutcome(frame.outcome)) {
      const wasRunning = link.calls[0] === call;
      this.release(id);
      this.#events.done(id, frame.outcome);
      // The call sent ahead runs now.
      const next = link.calls[0];
      if (wasRunning && next) this.#events.started(next.id);
      this.#sendPending();
      this.#events.free();
    }
  }

  closed(conn: LinkConnection): void {
    const link = this.#links.get(conn);
    this.#links.delete(conn);
    if (!link) return;
    for (const { id } of link.calls.splice(0)) {
      setTimeout(() => {
        if (this.#calls.get(id) !== link) return;
        this.#calls.delete(id);
        this.#events.lost(id);
      }, LINK_LOST_MS).unref();
    }
  }

  /** The process is gone: forget every link and call. */
  clear(): void {
    this.#links.clear();
    this.#calls.clear();
    this.#pending.length = 0;
  }
}

function isOutcome(v: unknown): v is Outcome {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as { ok?: unknown; output?: unknown; error?: unknown };
  if (!Array.isArray(o.output)) return false;
  if (o.ok === true) return true;
  if (o.ok !== false || typeof o.error !== 'object' || o.error === null) return false;
  const e = o.error as { type?: unknown; message?: unknown };
  return typeof e.type === 'string' && typeof e.message === 'string';
}
