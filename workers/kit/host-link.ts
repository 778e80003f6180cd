// A worker thread's one channel to the coordinator: every call of every runtime comes to the
// thread on it (LinkRun), and its output, its answer and the host calls a guest awaits go back on
// it, without the sandbox process's main thread. The link is a Unix socket in a folder only the
// daemon's user can enter, and the first line a thread sends is its process's secret (given to the
// process by the coordinator, never to guest code): the coordinator routes what a link carries to
// that process only, and only for the call it sent on that link.
//
// Calls the guest waits for synchronously (files, skills) are the one exception: the thread is
// blocked in Atomics.wait then and cannot read a socket, so they go through its process's main
// thread (call-scope.ts). There is no other way in or out: a thread whose link does not open fails
// to start, and one whose link closes asks to be replaced (serve-link.ts).

import { isAscii } from 'node:buffer';
import net from 'node:net';
import { LineReader } from './line-reader.js';
import { HOST_LINK_WELCOME } from './protocol.js';
import type { HostLinkInfo, LinkDone, LinkHostCall, LinkOutput, LinkRun, LinkServing, ToThread } from './protocol.js';

/** The longest line a thread accepts, bytes (a call with its context_vars, a read_file answer). */
const MAX_REPLY_BYTES = 512 * 1024 * 1024;

export class WorkerHostLink {
  readonly #socket: net.Socket;
  #up = false;
  /** Settles once the coordinator welcomed this thread; rejects if the link closed or failed first. */
  readonly ready: Promise<void>;
  /** Where host replies go: the call running on this thread, which drops those of other calls. */
  onReply: ((reply: ToThread) => void) | undefined;
  /** Calls the coordinator writes to this thread; held until the serve loop takes them. */
  #onCall: ((frame: LinkRun) => void) | undefined;
  readonly #early: LinkRun[] = [];
  /** Called once when the link closes after it was up. */
  onClosed: (() => void) | undefined;

  constructor(info: HostLinkInfo, threadId: number) {
    let welcomed: () => void = () => {};
    let failed: (err: Error) => void = () => {};
    this.ready = new Promise<void>((resolve, reject) => {
      welcomed = resolve;
      failed = reject;
    });
    // Whoever waits for it hears of a failure; nobody else must see an unhandled rejection.
    this.ready.catch(() => {});
    const reader = new LineReader(MAX_REPLY_BYTES, (line) => {
      if (line === HOST_LINK_WELCOME) {
        this.#up = true;
        welcomed();
        return;
      }
      let frame: ToThread | LinkRun;
      try {
        frame = JSON.parse(line) as ToThread | LinkRun;
      } catch {
        // A line that is not JSON: nothing in this process sent it; ignore it.
        return;
      }
      if (frame.kind === 'run') {
        const deliver = (run: LinkRun): void => {
          if (this.#onCall) this.#onCall(run);
          else this.#early.push(run);
        };
        const raw = frame.raw ?? [];
        if (raw.length === 0) return deliver(frame);
        let total = 0;
        for (const [, bytes] of raw) total += bytes;
        const expected = reader.expect(total, (bytes) => {
          // ASCII (most JSON text) decodes as Latin-1: a copy, no UTF-8 decoding.
          const encoding = isAscii(bytes) ? 'latin1' : 'utf8';
          let at = 0;
          frame.request.contextStrings = raw.map(([name, length]) => [name, bytes.toString(encoding, at, (at += length))]);
          deliver(frame);
        });
        if (!expected) this.#socket.destroy();
      } else {
        this.onReply?.(frame);
      }
    });
    this.#socket = net.createConnection(info.path);
    this.#socket.unref();
    this.#socket.once('connect', () => {
      // Not up yet: until the coordinator says HOST_LINK_WELCOME (it may refuse an unknown secret,
      // or its hello timer may fire while it is stalled), nothing written here would be heard.
      this.#socket.write(`${JSON.stringify({ hello: info.secret, thread: threadId })}\n`);
    });
    this.#socket.on('data', (chunk: Buffer) => {
      if (!reader.push(chunk)) this.#socket.destroy();
    });
    this.#socket.on('error', (err) => failed(new Error(`the host link could not open: ${err.message}`)));
    this.#socket.on('close', () => {
      failed(new Error('the host link closed before the coordinator welcomed this thread'));
      const wasUp = this.#up;
      this.#up = false;
      if (wasUp) this.onClosed?.();
    });
  }

  /** Takes the calls the coordinator sends this thread (and any that came before). */
  serve(onCall: (frame: LinkRun) => void): void {
    this.#onCall = onCall;
    for (const frame of this.#early.splice(0)) onCall(frame);
  }

  /** Sends one frame; false when the link is not up (the frame is lost: the coordinator answers for its call). */
  send(msg: LinkHostCall | LinkDone | LinkOutput | LinkServing): boolean {
    if (!this.#up || this.#socket.destroyed) return false;
    let line: string;
    try {
      line = `${JSON.stringify(msg)}\n`;
    } catch {
      return false;
    }
    this.#socket.write(line);
    return true;
  }

  /** Settles once everything written so far has left this thread (before it asks to be ended). */
  flushed(): Promise<void> {
    if (this.#socket.destroyed || this.#socket.writableLength === 0) return Promise.resolve();
    return new Promise((resolve) => this.#socket.write('', () => resolve()));
  }
}
