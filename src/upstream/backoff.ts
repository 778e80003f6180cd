// Reconnection delays: exponential from `initialMs` to `maxMs`, with ±20% jitter so a fleet of
// daemons (or servers behind one host) does not retry in lockstep.
import type { UpstreamBackoffOptions } from './upstream-types.js';

export const DEFAULT_BACKOFF: Readonly<UpstreamBackoffOptions> = Object.freeze({
  initialMs: 250,
  maxMs: 30_000,
  resetAfterMs: 60_000,
});

const JITTER_RATIO = 0.2;
/** Past this many doublings the delay is at its cap anyway; keeps 2 ** n finite. */
const MAX_DOUBLINGS = 30;

export class Backoff {
  readonly #options: UpstreamBackoffOptions;
  readonly #random: () => number;
  #attempt = 0;

  constructor(options: UpstreamBackoffOptions, random: () => number = Math.random) {
    this.#options = options;
    this.#random = random;
  }

  /** The delay before the next attempt, ms; each call doubles the base delay. */
  next(): number {
    const { initialMs, maxMs } = this.#options;
    const base = Math.min(maxMs, initialMs * 2 ** Math.min(this.#attempt, MAX_DOUBLINGS));
    this.#attempt++;
    const jitter = 1 - JITTER_RATIO + 2 * JITTER_RATIO * this.#random();
    return Math.max(0, Math.min(maxMs, Math.round(base * jitter)));
  }

  reset(): void {
    this.#attempt = 0;
  }
}
