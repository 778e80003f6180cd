// Tokens an execute_code call pulled in from tools, fetch and files: what the model was spared.
// A payload is counted a loop turn after it arrives, once its answer is on its way to the guest,
// so a real tokenizer (tens of microseconds per result) stays off the host call's critical path.
// One payload is counted per turn of the event loop (at most TIME_BUDGET_MS and a few samples,
// see util/tokens.ts), so a guest that pulls in thousands of payloads does not hold the loop for
// its whole call budget in one piece; `total()` counts whatever is still waiting (bounded by
// CALL_BUDGET_MS per call, past which sizes are estimated from length).

import type { CountBudget, TokenCount } from '../util/tokens.js';

export type CountTokens = (value: unknown, budget?: CountBudget) => number | TokenCount;

/** Adds `count` to `total` (an estimate makes the total an estimate). */
export function addCount(total: TokenCount, count: number | TokenCount): TokenCount {
  if (typeof count === 'number') total.tokens += count;
  else {
    total.tokens += count.tokens;
    total.estimated ||= count.estimated;
  }
  return total;
}

export class IncomingTokens {
  readonly #count: CountTokens | undefined;
  readonly #total: TokenCount = { tokens: 0, estimated: false };
  /** One call's counting time: past CALL_BUDGET_MS the rest is estimated from length. */
  readonly #budget: CountBudget = { spentMs: 0 };
  #waiting: unknown[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(count: CountTokens | undefined) {
    this.#count = count;
  }

  add(payload: unknown): void {
    if (!this.#count) return;
    this.#waiting.push(payload);
    this.#timer ??= setTimeout(() => this.#countOne(), 0);
  }

  addEstimate(tokens: number): void {
    addCount(this.#total, { tokens, estimated: true });
  }

  total(): TokenCount {
    this.#countWaiting();
    return this.#total;
  }

  /** Counts the oldest waiting payload, and comes back next turn for the rest. */
  #countOne(): void {
    this.#timer = undefined;
    const payload = this.#waiting.shift();
    if (this.#count && payload !== undefined) addCount(this.#total, this.#count(payload, this.#budget));
    if (this.#waiting.length > 0) this.#timer = setTimeout(() => this.#countOne(), 0);
  }

  #countWaiting(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const waiting = this.#waiting;
    this.#waiting = [];
    if (this.#count) for (const payload of waiting) addCount(this.#total, this.#count(payload, this.#budget));
  }
}
