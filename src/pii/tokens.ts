// Token format and derivation. A token is `[TYPE_xxxxxxxx]`: eight hex digits of an HMAC-SHA256
// keyed by a per-agent secret, so a token says nothing about its value to anyone without the
// secret (unlike an unsalted hash of a phone number, which a brute force reverses), is stable
// within an agent's vault and unlinkable across agents. A collision takes the next candidate
// (vault-store.ts), so two values of one vault never share a token.

import { createHmac } from 'node:crypto';
import type { PiiType } from './pii-types.js';

/** Hex digits in a token. */
export const TOKEN_HEX_CHARS = 8;

/** A token of any known type; group 1 is the type, group 2 the hex digest. */
export const TOKEN_RE = /\[(EMAIL|PHONE|SSN|CREDIT_CARD|IP_ADDRESS|IBAN|API_KEY)_([0-9a-f]{8})\]/g;

/** Every token-shaped string in text, in order, repeats included. */
export function tokensIn(text: string): string[] {
  if (!text.includes('[')) return [];
  return Array.from(text.matchAll(TOKEN_RE), (m) => m[0]);
}

export function formatToken(type: PiiType, hex: string): string {
  return `[${type}_${hex}]`;
}

/**
 * The token for a value on a given attempt (0 first, then 1, 2, ... after collisions), so the
 * fallback is deterministic too. The HMAC input is `TYPE \0 attempt \0 value`: neither the
 * type nor the attempt can contain \0, so distinct (type, attempt, value) never share an input.
 */
export function tokenCandidate(secret: Uint8Array, type: PiiType, value: string, attempt: number): string {
  const digest = createHmac('sha256', secret).update(`${type}\0${attempt}\0`).update(value).digest('hex');
  return formatToken(type, digest.slice(0, TOKEN_HEX_CHARS));
}
