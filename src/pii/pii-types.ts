// The PII subsystem's contract: the types the detectors report, the shapes the vault returns, and
// the options callers pass. Kept apart from the implementation so callers and tests share it.

/**
 * Kinds of personal data the detectors report. The names appear verbatim in tokens
 * (`[EMAIL_3f9a1c2b]`) and in `pii_types`, so they are part of the product contract.
 */
export type PiiType = 'EMAIL' | 'PHONE' | 'SSN' | 'CREDIT_CARD' | 'IP_ADDRESS' | 'IBAN' | 'API_KEY';

/** Every PiiType in its canonical order; results that list types use this order. */
export const PII_TYPES: readonly PiiType[] = Object.freeze([
  'EMAIL',
  'PHONE',
  'SSN',
  'CREDIT_CARD',
  'IP_ADDRESS',
  'IBAN',
  'API_KEY',
]);

/** One detected value: `text.slice(start, end) === value`. */
export interface PiiMatch {
  type: PiiType;
  /** UTF-16 offset of the first character. */
  start: number;
  /** UTF-16 offset just past the last character. */
  end: number;
  value: string;
}

export interface TokenizeResult {
  /** The input with every detected value replaced by its token. */
  text: string;
  /** Distinct values replaced (a value seen twice counts once). */
  found: number;
  /** Distinct types replaced, in PII_TYPES order. */
  types: PiiType[];
}

export interface DetokenizeResult {
  /** The input with every token this vault knows replaced by its value. */
  text: string;
  /** Token-shaped strings this vault does not know (forged, foreign or evicted), left in place; distinct, in order of appearance. */
  unknown: string[];
  /** Why each of `unknown` did not restore, where the store can tell (never anything of another agent's vault). */
  reasons?: Record<string, UnrestorableReason>;
  /** Types of the values restored, in PII_TYPES order; what a flow check needs. */
  types: PiiType[];
}

/**
 * Why a token did not restore: never made by this agent (or forgotten), or past its time. Another
 * agent's token is 'unknown' too: a restore is never an oracle for what other vaults hold.
 */
export type UnrestorableReason = 'unknown' | 'expired';

export interface DetokenizeValueResult {
  value: unknown;
  unknown: string[];
  reasons?: Record<string, UnrestorableReason>;
  types: PiiType[];
}

export interface PiiVaultOptions {
  /** Tokens kept before the least recently used are dropped. Default 100,000. */
  maxEntries?: number;
  /**
   * HMAC key, at least 32 bytes. Default: 32 random bytes. Only tests should pass one: a shared
   * key would make tokens linkable across sessions.
   */
  secret?: Uint8Array;
  /** How long a token lasts after it was last issued, milliseconds. Default: no limit. */
  ttlMs?: number;
  /** Clock in epoch milliseconds, for tests. Default Date.now. */
  now?: () => number;
  /** Whose turn this vault's detection takes on the PII helper thread (its owner): owners take turns. */
  turn?: string;
}

export interface PiiVaultsOptions {
  /** Tokens kept per session before the least recently used are dropped. Default 100,000. */
  maxTokensPerSession?: number;
  /** Sessions kept before the least recently used vault is dropped. Default 10,000. */
  maxSessions?: number;
  /** Idle time after which a session's vault is dropped, seconds. Default 3,600. */
  sessionTtlSeconds?: number;
  /** How long each token restores after it was last issued, milliseconds. Default: as long as its vault lives. */
  tokenTtlMs?: number;
  /** Epoch clock in milliseconds for token expiry, for tests. Default Date.now. */
  epochNow?: () => number;
  /** Clock in milliseconds, for tests. Default performance.now(). */
  now?: () => number;
}

export interface PiiVaultsStats {
  sessions: number;
  tokens: number;
}

/** Outcome of a flow check: allowed, or refused with the rule and the type that refused it. */
export type FlowDecision<Rule> =
  | { allowed: true }
  | { allowed: false; rule: Rule; type: string; message: string };
