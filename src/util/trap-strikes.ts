// Strikes against agents whose code traps a parser every agent shares (the TypeScript stripper in
// the sandbox threads, detection's helper thread and the skill store's). A trap is contained (the
// instance is thrown away, its successor loaded in the same call) but not free: about 0.1 s of a
// shared thread and a reload's transient memory. An agent whose calls keep trapping it gets a
// cool-down in which its TypeScript is refused at once, with a message saying why and for how
// long, so its flood costs the shared threads nothing and cannot make them recycle for everyone.
// One register per process (`stripperStrikes`), like the helper threads it protects.

import { NESTED_TOO_DEEPLY, tooDeepForStripper } from '../../workers/js/strip-types.js';

/** Strikes within STRIKE_WINDOW_MS that start a cool-down. */
export const STRIKES_BEFORE_COOL_DOWN = 5;
/** How long a strike counts, ms. */
export const STRIKE_WINDOW_MS = 60_000;
/** How long an agent's TypeScript is refused once it reached its strikes, ms. */
export const COOL_DOWN_MS = 30_000;
/** Agents remembered at most (configured agents are far fewer; past it the oldest is forgotten). */
const MAX_AGENTS = 10_000;

interface AgentStrikes {
  /** When each strike within the window was made, oldest first. */
  strikes: number[];
  /** Refused until this time (ms), 0 when not cooling down. */
  coolUntil: number;
}

export interface TrapStrikesOptions {
  strikes?: number;
  windowMs?: number;
  coolDownMs?: number;
  /** The clock, ms (tests). */
  now?: () => number;
}

export class TrapStrikes {
  readonly #what: string;
  readonly #strikes: number;
  readonly #windowMs: number;
  readonly #coolDownMs: number;
  readonly #now: () => number;
  readonly #agents = new Map<string, AgentStrikes>();

  /** `what`: the shared component, as the refusal names it ("the type stripper"). */
  constructor(what: string, options: TrapStrikesOptions = {}) {
    this.#what = what;
    this.#strikes = options.strikes ?? STRIKES_BEFORE_COOL_DOWN;
    this.#windowMs = options.windowMs ?? STRIKE_WINDOW_MS;
    this.#coolDownMs = options.coolDownMs ?? COOL_DOWN_MS;
    this.#now = options.now ?? Date.now;
  }

  /** Charges one trap to `agent`; its last allowed strike starts the cool-down. */
  strike(agent: string): void {
    const now = this.#now();
    const record = this.#live(agent, now) ?? { strikes: [], coolUntil: 0 };
    this.#agents.delete(agent);
    record.strikes.push(now);
    if (record.strikes.length >= this.#strikes) {
      record.coolUntil = now + this.#coolDownMs;
      record.strikes = [];
    }
    this.#agents.set(agent, record);
    if (this.#agents.size > MAX_AGENTS) this.#agents.delete(this.#agents.keys().next().value as string);
  }

  /** Why `agent` may not use the component now (its cool-down), or undefined when it may. */
  refusal(agent: string): string | undefined {
    const now = this.#now();
    const record = this.#live(agent, now);
    if (!record || record.coolUntil <= now) return undefined;
    const seconds = Math.ceil((record.coolUntil - now) / 1000);
    return (
      `TypeScript refused for this agent for ${seconds} s more: its code trapped ${this.#what} ${this.#strikes} times within ${this.#windowMs / 1000} s ` +
      `(each trap costs a thread every agent shares a fresh instance). Split long chains into statements, or pass language "javascript" if the code has no types`
    );
  }

  /** The agent's record with expired strikes dropped; undefined (and forgotten) when nothing is left. */
  #live(agent: string, now: number): AgentStrikes | undefined {
    const record = this.#agents.get(agent);
    if (!record) return undefined;
    while (record.strikes.length > 0 && (record.strikes[0] as number) <= now - this.#windowMs) record.strikes.shift();
    if (record.strikes.length > 0 || record.coolUntil > now) return record;
    this.#agents.delete(agent);
    return undefined;
  }
}

/** The process's register for the TypeScript stripper: the executor, detection and skill saves charge and consult it. */
export const stripperStrikes = new TrapStrikes('the type stripper');

/** Whether a stripper's message says it trapped (a fresh instance was loaded): the nesting guard's refusal costs nothing and is no strike. */
export function isStripperTrap(message: string): boolean {
  return tooDeepForStripper(message) && !message.startsWith(NESTED_TOO_DEEPLY);
}
