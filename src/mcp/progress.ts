// Progress of a long execute_code call, for clients that sent a progress token: a tick every
// interval with the elapsed time, and one notification per output line as the code prints it.
// Progress is elapsed seconds (strictly increasing, as the protocol requires); total is the timeout.

import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';

/** Output lines streamed per call; past it, ticks report how many more were held back. */
export const MAX_STREAMED_LINES = 1000;
/** Longest line sent in one notification, characters. */
export const MAX_LINE_CHARS = 2000;
/** How long the end of a call waits for lines still being made safe (PII boundary), ms. */
export const FLUSH_LIMIT_MS = 2000;

export interface ProgressOptions {
  token: string | number;
  intervalMs: number;
  totalSeconds: number;
  send: (notification: ServerNotification) => Promise<void>;
  now: () => number;
  /** Applied to each streamed line before it leaves (PII boundary); lines still leave in order. */
  transformLine?: (line: string) => Promise<string>;
}

export class ProgressReporter {
  readonly #options: ProgressOptions;
  readonly #started: number;
  #lastMs = 0;
  #lines = 0;
  #timer: NodeJS.Timeout | undefined;
  /** The call ended: no more lines are taken; those taken still leave (stop()). */
  #closing = false;
  #stopped = false;
  /** Transformed lines leave one after another, in the order the code printed them. */
  #lineChain: Promise<void> = Promise.resolve();

  constructor(options: ProgressOptions) {
    this.#options = options;
    this.#started = options.now();
  }

  start(): void {
    this.#timer = setInterval(() => this.#tick(), this.#options.intervalMs);
    this.#timer.unref();
  }

  /** An output line was written by the code. */
  line(text: string): void {
    if (this.#closing) return;
    this.#lines++;
    if (this.#lines > MAX_STREAMED_LINES) return;
    const line = text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)}…` : text;
    const transform = this.#options.transformLine;
    if (!transform) return this.#emit(line);
    this.#lineChain = this.#lineChain.then(async () => {
      try {
        const safe = await transform(line);
        if (!this.#stopped) this.#emit(safe);
      } catch {
        // A line that cannot be made safe (shared store down) is not streamed; the result says why.
      }
    });
  }

  /**
   * Ends the ticks. Lines the code printed before the end still go out, in order and before the
   * result (a line's PII check can outlast the call on a loaded machine); after FLUSH_LIMIT_MS the
   * rest is dropped.
   */
  async stop(): Promise<void> {
    this.#closing = true;
    if (this.#timer) clearInterval(this.#timer);
    let limit: NodeJS.Timeout | undefined;
    await Promise.race([this.#lineChain, new Promise<void>((resolve) => (limit = setTimeout(resolve, FLUSH_LIMIT_MS)))]);
    clearTimeout(limit);
    this.#stopped = true;
  }

  #tick(): void {
    if (this.#closing) return;
    const elapsed = (this.#options.now() - this.#started) / 1000;
    const held = this.#lines - MAX_STREAMED_LINES;
    const more = held > 0 ? `, ${held} output lines not streamed` : '';
    this.#emit(`running for ${elapsed.toFixed(1)} s of ${this.#options.totalSeconds} s, ${this.#lines} output lines${more}`);
  }

  #emit(message: string): void {
    // whole milliseconds, so each value is strictly above the last even after JSON round trips
    const progressMs = Math.max(Math.round(this.#options.now() - this.#started), this.#lastMs + 1);
    this.#lastMs = progressMs;
    this.#options
      .send({
        method: 'notifications/progress',
        params: { progressToken: this.#options.token, progress: progressMs / 1000, total: this.#options.totalSeconds, message },
      })
      .catch(() => {
        // the client went away; the call itself is cancelled through its signal
      });
  }
}
