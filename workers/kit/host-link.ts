// A worker thread's own connection to the coordinator, for the host calls a guest awaits
// (upstream tools, fetch). Without it every such call and its answer went worker → pool host's
// main thread → IPC → coordinator and back, waking the relay thread twice per call. The link is a
// Unix socket in a folder only the daemon's user can enter, and the first line a thread sends is
// its process's secret (given to the process by the coordinator, never to guest code): the
// coordinator routes what a link carries to that process only, and only for calls running there.
//
// Calls the guest waits for synchronously (files, skills) still go through the pool host: this
// thread is blocked in Atomics.wait then and cannot read a socket. If the link is not up (still
// connecting, refused, closed), async calls take that same path, so a link problem costs speed,
// never a call.

import net from 'node:net';
import { LineReader } from './line-reader.js';
import { HOST_LINK_WELCOME } from './protocol.js';
import type { HostLinkInfo, LinkDone, LinkOutput, ToLinkThread, ToThread, WorkerMessage } from './protocol.js';

/** The longest reply line a thread accepts, bytes (a read_file answer is at most maxFileBytes). */
const MAX_REPLY_BYTES = 512 * 1024 * 1024;

export class WorkerHostLink {
  readonly #socket: net.Socket;
  #up = false;
  /** Where replies go: the call running on this thread, which drops those of other calls. */
  onReply: ((reply: ToThread) => void) | undefined;
  /** Direct path: calls (and cancels) the coordinator writes to this thread; held until a server takes them. */
  #onCall: ((frame: ToLinkThread) => void) | undefined;
  readonly #early: ToLinkThread[] = [];

  constructor(info: HostLinkInfo, threadId: number) {
    const reader = new LineReader(MAX_REPLY_BYTES, (line) => {
      if (line === HOST_LINK_WELCOME) {
        this.#up = true;
        if (this.#onCall) this.#announce();
        return;
      }
      let frame: ToThread | ToLinkThread;
      try {
        frame = JSON.parse(line) as ToThread | ToLinkThread;
      } catch {
        // A line that is not JSON: nothing in this process sent it; ignore it.
        return;
      }
      if (frame.kind === 'run' || frame.kind === 'cancel') {
        if (this.#onCall) this.#onCall(frame);
        else this.#early.push(frame);
      } else {
        this.onReply?.(frame);
      }
    });
    this.#socket = net.createConnection(info.path);
    this.#socket.unref();
    this.#socket.once('connect', () => {
      this.#socket.write(`${JSON.stringify({ hello: info.secret, thread: threadId })}\n`);
      // Not up yet: a call written now would be lost if the coordinator refused the hello (an
      // unknown secret, or its hello timer fired while it was stalled), and the guest would wait
      // for it until its time limit. Calls go over the link once the coordinator says HOST_LINK_WELCOME.
    });
    this.#socket.on('data', (chunk: Buffer) => {
      if (!reader.push(chunk)) this.#socket.destroy();
    });
    this.#socket.on('error', () => {
      this.#up = false;
    });
    this.#socket.on('close', () => {
      this.#up = false;
    });
  }

  /** Direct path: takes the calls the coordinator sends this thread (and any that came before). */
  serve(onCall: (frame: ToLinkThread) => void): void {
    this.#onCall = onCall;
    for (const frame of this.#early.splice(0)) onCall(frame);
    if (this.#up) this.#announce();
  }

  /** Tells the coordinator this thread takes calls now: until then it sends it none. */
  #announce(): void {
    if (!this.#socket.destroyed) this.#socket.write('{"kind":"serving"}\n');
  }

  /** Whether calls may be sent to this thread over its link (it is up and serving). */
  get serving(): boolean {
    return this.#onCall !== undefined && this.#up && !this.#socket.destroyed;
  }

  /** Sends a host call, a call's output or its answer; false when the link is not up (the caller uses the pool host instead). */
  send(msg: WorkerMessage | LinkDone | LinkOutput): boolean {
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
}
