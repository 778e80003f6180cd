// What a detector emits before overlaps are resolved, and the loop every regex detector shares.

import type { PiiMatch } from './pii-types.js';

/** A match with the weight it carries when it overlaps another match of the same length. */
export interface Candidate extends PiiMatch {
  /** Higher wins a tie on length: a format with a checksum beats a looser shape. */
  priority: number;
}

/** Priorities: checksummed and prefixed formats above loose shapes. */
export const PRIORITY = {
  PEM: 100,
  PROVIDER_KEY: 90,
  JWT: 85,
  CREDIT_CARD: 80,
  IBAN: 75,
  SSN: 70,
  EMAIL: 65,
  IP_ADDRESS: 60,
  KEY_VALUE: 50,
  PHONE: 40,
} as const;

/**
 * Runs a global regex over text and hands each match to `accept`, which returns where the
 * accepted value ends, or -1. The search resumes there, or one character after a rejected
 * match's start rather than past its end, so a valid value that starts inside a rejected or
 * partly used candidate is still found; patterns are bounded, so this stays linear.
 */
export function scan(re: RegExp, text: string, accept: (m: RegExpExecArray) => number): void {
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const end = accept(m);
    re.lastIndex = end > m.index ? end : m.index + 1;
  }
}
