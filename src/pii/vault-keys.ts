// How a PII vault lives in the shared store: the keys of one agent's vault (named by a hash of
// the agent), the `TYPE \0 value` pair each token key holds, and putting tokens in and out of
// text. Kept apart from vault-store.ts, which holds the rules.

import type { PiiMatch, PiiType } from './pii-types.js';
import { TOKEN_RE } from './tokens.js';

export interface VaultKeys {
  secret: string;
  bytes: string;
  tokens: string;
  token(t: string): string;
  issued(t: string): string;
}

/** The store keys of vault `id` (a hash of its agent). */
export function keys(id: string): VaultKeys {
  return {
    secret: `pii:${id}:secret`,
    bytes: `pii:${id}:bytes`,
    tokens: `pii:${id}:tokens`,
    token: (t) => `pii:${id}:t:${t}`,
    issued: (t) => `pii:${id}:x:${t}`,
  };
}

export function pairKey(type: PiiType, value: string): string {
  return `${type}\0${value}`;
}

export function splitPair(pair: string): { type: PiiType; value: string } {
  const at = pair.indexOf('\0');
  return { type: pair.slice(0, at) as PiiType, value: pair.slice(at + 1) };
}

/** The token of a match from the tokens resolved for it (every detected value has one). */
export function tokenIn(tokens: ReadonlyMap<string, string>): (m: PiiMatch) => string {
  return (m) => {
    const token = tokens.get(pairKey(m.type, m.value));
    if (token === undefined) throw new Error('internal: a detected value has no token');
    return token;
  };
}

export function restore(text: string, known: ReadonlyMap<string, { type: PiiType; value: string }>, unknown: Set<string>, types: Set<PiiType>): string {
  if (!text.includes('[')) return text;
  return text.replace(TOKEN_RE, (token) => {
    const entry = known.get(token);
    if (entry === undefined) {
      unknown.add(token);
      return token;
    }
    types.add(entry.type);
    return entry.value;
  });
}
