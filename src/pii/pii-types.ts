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
  /** Why each of `unknown` did not restore, where the store can tell (never another agent's value). */
  reasons?: Record<string, UnrestorableReason>;
  /** Types of the values restored, in PII_TYPES order; what a flow check needs. */
  types: PiiType[];
}

/** Why a token did not restore: never made by this agent (another agent's reads so too), or past its time. */
export type UnrestorableReason = 'unknown' | 'expired';

export interface DetokenizeValueResult {
  value: unknown;
  unknown: string[];
  reasons?: Record<string, UnrestorableReason>;
  types: PiiType[];
}

export interface PiiVaultsStats {
  /** Agents whose vaults this process served recently. */
  sessions: number;
  /** Tokens those vaults issued within the token lifetime. */
  tokens: number;
  /** Bytes charged to those vaults (values and per-token overhead) within the token lifetime. */
  bytes: number;
  /** Each agent's budget, bytes (pii.maxVaultBytesPerAgent). */
  max_bytes_per_agent: number;
}

/** Outcome of a flow check: allowed, or refused with the rule and the type that refused it. */
export type FlowDecision<Rule> =
  | { allowed: true }
  | { allowed: false; rule: Rule; type: string; message: string };
