// The coordinator's end of the worker threads' host links (workers/kit/host-link.ts): one
// Unix socket in a fresh folder only this user can enter. Each sandbox process is registered
// with a random secret it gets at spawn; a connection that does not open with a registered
// secret within a second is closed unheard. What a connection carries is handed to the process
// that owns its secret, which serves only calls running on it (sandbox-process.ts), and answers
// go back on the connection the call came from.

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LineReader } from '../../workers/kit/line-reader.js';
import { HOST_LINK_WELCOME } from '../../workers/kit/protocol.js';
import type { HostLinkInfo, HostReply } from '../../workers/kit/protocol.js';
import type { Logger } from '../util/logger.js';

/** A host call as a link carries it. */
export interface LinkCall {
  id: number;
  /** The call's secret (RunRequest.callKey), checked by the process that owns the link. */
  key: string;
  callId: number;
  method: string;
  args: unknown[];
}

export type LinkHandler = (call: LinkCall, reply: (r: HostReply) => void, conn: LinkConnection) => void;

/** One worker thread's connection, as its process sees it (the direct path: sandbox-process.ts). */
export interface LinkConnection {
  /** The thread's id within its process, as its hello said. */
  readonly thread: number;
  /** Writes one frame (JSON, no newline) and the raw texts it announces, as UTF-8; false once the connection is gone. */
  write(frame: string, raw?: readonly string[]): boolean;
}

/** What a process hears of its threads' connections besides host calls (the direct path). */
export interface LinkEvents {
  /** A frame that is not a host call: 'serving', and a call's 'done' and 'output'. */
  frame(conn: LinkConnection, frame: Record<string, unknown>): void;
  closed(conn: LinkConnection): void;
}

/**
 * Connections that have not named a process yet, at most, at once. Worker threads name theirs at
 * once, but many starting together (processes x threads) may all be accepted in one turn before
 * any hello is read: the bound is well above that, and well below a default 1024 descriptors.
 */
const MAX_UNNAMED = 256;
/** How long a new connection may take to name its process, ms. */
const HELLO_MS = 1_000;
/**
 * The longest first line (the hello: a 32-character secret in JSON), bytes. Until a connection has
 * named its process it may not make the coordinator buffer and parse a call-sized frame (tens of
 * MB, `maxLineBytes`): without this bound any local connection could, unauthenticated, hold that
 * much of the coordinator's memory for a second each and make it JSON.parse it.
 */
const HELLO_MAX_BYTES = 1024;

export class HostLinkServer {
  readonly #server: net.Server;
  readonly #dir: string;
  readonly #handlers = new Map<string, LinkHandler>();
  readonly #events = new Map<string, LinkEvents>();
  readonly #connections = new Map<string, Set<net.Socket>>();
  readonly #limits = new Map<string, number>();
  /** Connections that have not (yet) named a process. */
  #unnamed = 0;
  readonly #maxLineBytes: number;
  readonly #log: Logger;
  readonly path: string;
  /** Host calls received over links (for tests and stats). */
  calls = 0;

  private constructor(dir: string, maxLineBytes: number, log: Logger) {
    this.#dir = dir;
    this.path = path.join(dir, 'host.sock');
    this.#maxLineBytes = maxLineBytes;
    this.#log = log;
    this.#server = net.createServer((socket) => this.#accept(socket));
  }

  /** Listens on a socket in a new private folder. `maxLineBytes` bounds one call's frame. */
  static async open(maxLineBytes: number, log: Logger): Promise<HostLinkServer> {
    // mkdtemp makes the folder 0700: no other user can reach the socket inside.
    const dir = await mkdtemp(path.join(tmpdir(), 'cem-host-'));
    const server = new HostLinkServer(dir, maxLineBytes, log);
    await new Promise<void>((resolve, reject) => {
      server.#server.once('error', reject);
      server.#server.listen(server.path, () => {
        server.#server.off('error', reject);
        resolve();
      });
    });
    server.#server.unref();
    return server;
  }

  /**
   * A new process's place on the link; `drop` closes its connections and forgets its secret. At
   * most `maxConnections` connections may name it at once (its threads, and some slack for
   * replaced ones still closing): a process that escaped its sandbox holds its secret, and could
   * otherwise open connections until the coordinator ran out of file descriptors.
   */
  register(handler: LinkHandler, maxConnections = Number.POSITIVE_INFINITY, events?: LinkEvents): { info: HostLinkInfo; drop: () => void } {
    const secret = randomBytes(24).toString('base64url');
    this.#handlers.set(secret, handler);
    if (events) this.#events.set(secret, events);
    this.#limits.set(secret, maxConnections);
    return {
      info: { path: this.path, secret },
      drop: () => {
        this.#handlers.delete(secret);
        this.#events.delete(secret);
        this.#limits.delete(secret);
        for (const socket of this.#connections.get(secret) ?? []) socket.destroy();
        this.#connections.delete(secret);
      },
    };
  }

  async close(): Promise<void> {
    for (const sockets of this.#connections.values()) for (const s of sockets) s.destroy();
    this.#connections.clear();
    this.#handlers.clear();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    await rm(this.#dir, { recursive: true, force: true });
  }

  #accept(socket: net.Socket): void {
    // Connections that have not named a process yet are capped as well: each holds a descriptor
    // for up to HELLO_MS, and anyone who can reach the socket can open them.
    if (this.#unnamed >= MAX_UNNAMED) {
      socket.destroy();
      return;
    }
    this.#unnamed++;
    let unnamed = true;
    const named = (): void => {
      if (unnamed) this.#unnamed--;
      unnamed = false;
    };
    let secret: string | undefined;
    let refused = false;
    const hello = setTimeout(() => socket.destroy(), HELLO_MS);
    const write = (line: string, raw: readonly string[] = []): boolean => {
      if (socket.destroyed) return false;
      socket.write(line);
      for (const text of raw) socket.write(text, 'utf8');
      return true;
    };
    const conn: { -readonly [K in keyof LinkConnection]: LinkConnection[K] } = { thread: 0, write: (frame, raw) => write(`${frame}\n`, raw) };
    const reader = new LineReader(HELLO_MAX_BYTES, (line) => {
      if (refused) return;
      if (secret === undefined) {
        clearTimeout(hello);
        named();
        secret = this.#greet(line, socket);
        refused = secret === undefined;
        conn.thread = threadOf(line);
        // Named: from the next line on, frames may be as long as one call's arguments.
        if (!refused) reader.setLimit(this.#maxLineBytes);
        // Told so: the thread sends calls over the link only from then on (host-link.ts).
        if (!refused) write(`${HOST_LINK_WELCOME}\n`);
        return;
      }
      const handler = this.#handlers.get(secret);
      if (!handler) return;
      let frame: unknown;
      try {
        frame = JSON.parse(line);
      } catch {
        return;
      }
      const call = asCall(frame);
      if (call) {
        this.calls++;
        handler(call, (reply) => void write(`${JSON.stringify({ ...reply, id: call.id })}\n`), conn);
      } else if (typeof frame === 'object' && frame !== null && !Array.isArray(frame)) {
        this.#events.get(secret)?.frame(conn, frame as Record<string, unknown>);
      }
    });
    socket.on('data', (chunk: Buffer) => {
      if (!reader.push(chunk)) {
        this.#log.warn({ code: 'HOST_LINK_FRAME_TOO_LARGE' }, 'a host link sent a frame over the size limit; closing it');
        socket.destroy();
      }
    });
    socket.on('error', () => undefined);
    socket.once('close', () => {
      clearTimeout(hello);
      named();
      if (secret !== undefined && this.#connections.get(secret)?.delete(socket)) this.#events.get(secret)?.closed(conn);
    });
  }

  /** The secret a connection's first line names, or undefined after closing it. */
  #greet(line: string, socket: net.Socket): string | undefined {
    let secret: unknown;
    try {
      secret = (JSON.parse(line) as { hello?: unknown }).hello;
    } catch {
      secret = undefined;
    }
    if (typeof secret !== 'string' || !this.#handlers.has(secret)) {
      this.#log.warn({ code: 'HOST_LINK_REFUSED' }, 'a connection to the host link did not name a sandbox process; closed');
      socket.destroy();
      return undefined;
    }
    let set = this.#connections.get(secret);
    if (!set) this.#connections.set(secret, (set = new Set()));
    if (set.size >= (this.#limits.get(secret) ?? 0)) {
      // Its threads fall back to the pool host for as long as the link is refused.
      this.#log.warn({ code: 'HOST_LINK_TOO_MANY' }, 'a sandbox process opened more host links than it has threads; closed');
      socket.destroy();
      return undefined;
    }
    set.add(socket);
    return secret;
  }
}

/** The thread id a hello names (0 when it names none). */
function threadOf(hello: string): number {
  try {
    const t = (JSON.parse(hello) as { thread?: unknown }).thread;
    return typeof t === 'number' && Number.isSafeInteger(t) && t > 0 ? t : 0;
  } catch {
    return 0;
  }
}

function asCall(frame: unknown): LinkCall | undefined {
  if (typeof frame !== 'object' || frame === null) return undefined;
  const m = frame as Partial<LinkCall> & { kind?: unknown };
  if (m.kind !== 'host-call' || typeof m.id !== 'number' || typeof m.key !== 'string' || typeof m.callId !== 'number' || typeof m.method !== 'string' || !Array.isArray(m.args)) return undefined;
  return { id: m.id, key: m.key, callId: m.callId, method: m.method, args: m.args };
}
