// Progress of a long execute_code call, for clients that sent a progress token: a tick every
// interval with the elapsed time, and one notification per output line as the code prints it.
// Progress is elapsed seconds (strictly increasing, as the protocol requires); total is the timeout.

import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';

/** Output lines streamed per call; past it, ticks report how many more were held back. */
export const MAX_STREAMED_LINES = 1000;
/** Longest line sent in one notification, characters. */
export const MAX_LINE_CHARS = 2000;

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
    if (this.#stopped) return;
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

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
  }

  #tick(): void {
    if (this.#stopped) return;
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
