// Tokens an execute_code call pulled in from tools, fetch and files: what the model was spared.
// A payload is counted a loop turn after it arrives, once its answer is on its way to the guest,
// so a real tokenizer (tens of microseconds per result) stays off the host call's critical path;
// `total()` counts whatever is still waiting.

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
    this.#timer ??= setTimeout(() => this.#countWaiting(), 0);
  }

  addEstimate(tokens: number): void {
    addCount(this.#total, { tokens, estimated: true });
  }

  total(): TokenCount {
    this.#countWaiting();
    return this.#total;
  }

  #countWaiting(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const waiting = this.#waiting;
    this.#waiting = [];
    if (this.#count) for (const payload of waiting) addCount(this.#total, this.#count(payload, this.#budget));
  }
}
