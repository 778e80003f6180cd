// Puts each detected value's token in its place, for both vault stores (in memory and in Redis).

import { sortTypes } from './detectors.js';
import type { PiiMatch, PiiType, TokenizeResult } from './pii-types.js';

/** `text` with every match replaced by `tokenOf(match)`; `matches` are in order and do not overlap. */
export function replaceMatches(text: string, matches: readonly PiiMatch[], tokenOf: (match: PiiMatch) => string): TokenizeResult {
  const first = matches[0];
  if (matches.length === 1 && first !== undefined) {
    // The common case of a short record with one value: no sets, no joins.
    return { text: text.slice(0, first.start) + tokenOf(first) + text.slice(first.end), found: 1, types: [first.type] };
  }
  let out = '';
  let at = 0;
  const distinct = new Set<string>();
  const types = new Set<PiiType>();
  for (const m of matches) {
    const token = tokenOf(m);
    out += text.slice(at, m.start) + token;
    distinct.add(token);
    types.add(m.type);
    at = m.end;
  }
  out += text.slice(at);
  return { text: out, found: distinct.size, types: sortTypes(types) };
}
