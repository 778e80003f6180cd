// A sandbox process's worker threads as the coordinator reaches them: each thread's own host link
// (host-link-server.ts), the one channel of every call of every runtime. A call goes out on a free
// thread's link and its output and answer come back there, without the process's main thread
// (workers/kit/serve-link.ts). A call is tied to the link it was sent on and to its key: a frame
// about it from any other link, or without its key, is dropped. A thread is free once it says
// 'serving' and until it is sent a call; it runs one at a time, and is free again when it answers
// (or, for work after its answer, when it says 'serving' again). There is no queue here: a call
// waits in the pool's fair queue until a thread is free. When a link closes with a call on it, the
// process's main thread answers that call (it ended the thread, or saw it crash); if no answer
// comes within LINK_LOST_MS, the call fails with a clear error instead of hanging.

import type { LinkConnection } from './host-link-server.js';
import type { LinkRun, Outcome, RunRequest } from '../../workers/kit/protocol.js';

/** How long a call whose thread's link closed waits for its process to answer for it, ms. */
export const LINK_LOST_MS = 2_000;

interface Link {
  conn: LinkConnection;
  /** Takes a call now. */
  serving: boolean;
  /** Never again (its thread is being ended or replaced): a later 'serving' from it is not believed. */
  retired: boolean;
  /** The call on this thread, with its key. */
  call: { id: number; key: string } | undefined;
  /** A bound interpreter's growth: a call with a smaller memory_mb needs a pristine one (LinkServing). */
  minMemoryMb: number;
}

export interface ThreadLinkEvents {
  done(id: number, outcome: Outcome): void;
  output(id: number, lines: string[]): void;
  /** The call's link closed and its process did not answer for it in time. */
  lost(id: number): void;
  /** A thread is free to take a call (it started serving, or finished one). */
  free(): void;
}

export class ThreadLinks {
  readonly #links = new Map<LinkConnection, Link>();
  readonly #events: ThreadLinkEvents;
  /** Calls by id: which link carries each. */
  readonly #calls = new Map<number, Link>();

  constructor(events: ThreadLinkEvents) {
    this.#events = events;
  }

  /** Threads serving and free. */
  get free(): number {
    let n = 0;
    for (const l of this.#links.values()) if (l.serving) n++;
    return n;
  }

  /** Threads that said they serve once, busy or not (a process is ready when all have). */
  get started(): number {
    let n = 0;
    for (const l of this.#links.values()) if (!l.retired) n++;
    return n;
  }

  /** Whether a thread (free now or later) may take a call with this memory_mb (false: the process must be recycled first). */
  fits(memoryMb: number): boolean {
    for (const l of this.#links.values()) if (!l.retired && l.minMemoryMb <= memoryMb) return true;
    return false;
  }

  /** Sends a call to a free thread that fits it; false when none may take it. */
  send(id: number, request: RunRequest): boolean {
    const frame = runFrame(id, request);
    for (const link of this.#links.values()) {
      if (!link.serving || link.minMemoryMb > request.memoryMb) continue;
      link.serving = false;
      if (!link.conn.write(frame.json, frame.raw)) {
        link.retired = true;
        continue;
      }
      link.call = { id, key: request.callKey ?? '' };
      this.#calls.set(id, link);
      return true;
    }
    return false;
  }

  /** Whether `conn` carries call `id` now: a host call from any other link is not the call's. */
  carries(conn: LinkConnection, id: number): boolean {
    return this.#calls.get(id)?.conn === conn;
  }

  /** The call is over (its process answered for it: its thread was ended, and its link takes nothing more). */
  release(id: number): void {
    const link = this.#calls.get(id);
    if (!link) return;
    this.#calls.delete(id);
    link.call = undefined;
    link.retired = true;
    link.serving = false;
  }

  /** Every thread now is about to be replaced (a recycle): none takes a call until its successor says 'serving'. */
  retireAll(): void {
    for (const link of this.#links.values()) {
      link.retired = true;
      link.serving = false;
    }
  }

  frame(conn: LinkConnection, frame: Record<string, unknown>): void {
    let link = this.#links.get(conn);
    if (frame.kind === 'serving') {
      if (!link) this.#links.set(conn, (link = { conn, serving: false, retired: false, call: undefined, minMemoryMb: 0 }));
      if (link.retired || link.call) return;
      link.serving = true;
      link.minMemoryMb = typeof frame.minMemoryMb === 'number' ? frame.minMemoryMb : 0;
      this.#events.free();
      return;
    }
    const call = link?.call;
    if (!link || !call || frame.id !== call.id || frame.key !== call.key) return;
    if (frame.kind === 'output' && Array.isArray(frame.lines)) {
      this.#events.output(call.id, frame.lines.filter((l): l is string => typeof l === 'string'));
    } else if (frame.kind === 'done' && isOutcome(frame.outcome)) {
      this.#calls.delete(call.id);
      link.call = undefined;
      // Free at once, or once the work after its answer is over (its next 'serving').
      link.serving = frame.busy !== true && !link.retired;
      this.#events.done(call.id, frame.outcome);
      if (link.serving) this.#events.free();
    }
  }

  closed(conn: LinkConnection): void {
    const link = this.#links.get(conn);
    this.#links.delete(conn);
    const call = link?.call;
    if (!link || !call) return;
    setTimeout(() => {
      if (this.#calls.get(call.id) !== link) return;
      this.#calls.delete(call.id);
      this.#events.lost(call.id);
    }, LINK_LOST_MS).unref();
  }

  /** The process is gone: forget every link and call. */
  clear(): void {
    this.#links.clear();
    this.#calls.clear();
  }
}

/**
 * A call's frame: its long context strings after it as raw UTF-8 (LinkRun.raw), not inside its
 * JSON; the socket encodes them as it writes them (no copy made here).
 */
function runFrame(id: number, request: RunRequest): { json: string; raw?: string[] } {
  const strings = request.contextStrings;
  if (!strings || strings.length === 0) return { json: JSON.stringify({ kind: 'run', id, request } satisfies LinkRun) };
  const raw: LinkRun['raw'] = strings.map(([name, text]) => [name, Buffer.byteLength(text, 'utf8')]);
  const frame: LinkRun = { kind: 'run', id, request: { ...request, contextStrings: undefined }, raw };
  return { json: JSON.stringify(frame), raw: strings.map(([, text]) => text) };
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
