// The registry of per-session vaults. A session's vault is created on first use and dropped when
// the session ends, when it has been idle past the TTL, or when too many sessions are open (least
// recently used first). Stats report counts only, never values.

import { LRUCache } from 'lru-cache';
import type { PiiVaultsOptions, PiiVaultsStats } from './pii-types.js';
import { DEFAULT_MAX_TOKENS, PiiVault } from './vault.js';

/** Sessions kept by default. */
export const DEFAULT_MAX_SESSIONS = 10_000;
/** Idle seconds before a vault is dropped, by default. */
export const DEFAULT_SESSION_TTL_SECONDS = 3_600;
/** How long a token restores after it was last issued, by default: a day. */
export const DEFAULT_TOKEN_TTL_SECONDS = 86_400;

function checkPositive(name: string, value: number, integer: boolean): number {
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isSafeInteger(value))) {
    throw new RangeError(`${name} must be a positive ${integer ? 'integer' : 'number'}, got ${value}`);
  }
  return value;
}

export class PiiVaults {
  readonly #maxTokensPerSession: number;
  readonly #tokenTtlMs: number | undefined;
  readonly #epochNow: (() => number) | undefined;
  readonly #vaults: LRUCache<string, PiiVault>;

  constructor(options: PiiVaultsOptions = {}) {
    this.#maxTokensPerSession = checkPositive('maxTokensPerSession', options.maxTokensPerSession ?? DEFAULT_MAX_TOKENS, true);
    const maxSessions = checkPositive('maxSessions', options.maxSessions ?? DEFAULT_MAX_SESSIONS, true);
    const ttlSeconds = checkPositive('sessionTtlSeconds', options.sessionTtlSeconds ?? DEFAULT_SESSION_TTL_SECONDS, false);
    const now = options.now;
    this.#tokenTtlMs = options.tokenTtlMs;
    this.#epochNow = options.epochNow;
    this.#vaults = new LRUCache<string, PiiVault>({
      max: maxSessions,
      ttl: ttlSeconds * 1000,
      updateAgeOnGet: true,
      // Resolution 0: read the clock on every check, so an injected clock is obeyed exactly.
      ttlResolution: 0,
      // lru-cache reads a start time of 0 as "no TTL"; the offset keeps a clock that starts at 0 honest.
      ...(now !== undefined ? { perf: { now: () => now() + 1 } } : {}),
      dispose: (vault) => vault.clear(),
    });
  }

  /** The session's vault, created on first use; using it resets its idle timer. */
  vault(sessionId: string): PiiVault {
    if (typeof sessionId !== 'string' || sessionId.length === 0) throw new TypeError('sessionId must be a non-empty string');
    return this.#vaults.get(sessionId) ?? this.create(sessionId);
  }

  /** A new, empty vault under the key (with a journal's secret when it is read back from disk). */
  create(key: string, secret?: Uint8Array): PiiVault {
    const vault = new PiiVault({
      maxEntries: this.#maxTokensPerSession,
      ...(secret !== undefined ? { secret } : {}),
      ...(this.#tokenTtlMs !== undefined ? { ttlMs: this.#tokenTtlMs } : {}),
      ...(this.#epochNow !== undefined ? { now: this.#epochNow } : {}),
      turn: key,
    });
    this.#vaults.set(key, vault);
    return vault;
  }

  /** The key's vault if held, without creating one or resetting its timer. */
  peek(key: string): PiiVault | undefined {
    return this.#vaults.peek(key);
  }

  /** Whether a live vault exists for the session (does not create one or reset its timer). */
  has(sessionId: string): boolean {
    return this.#vaults.has(sessionId, { updateAgeOnHas: false });
  }

  /** Forgets the session's vault and every token in it. Dropping an unknown session is a no-op. */
  drop(sessionId: string): void {
    this.#vaults.delete(sessionId);
  }

  /** Forgets every vault. */
  clear(): void {
    this.#vaults.clear();
  }

  /** Live sessions and the tokens they hold; counts only. */
  stats(): PiiVaultsStats {
    this.#vaults.purgeStale();
    let tokens = 0;
    for (const vault of this.#vaults.values()) tokens += vault.size;
    return { sessions: this.#vaults.size, tokens };
  }
}
