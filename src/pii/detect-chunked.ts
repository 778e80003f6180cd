// PII detection of texts of any size without holding the coordinator's event loop: a long text is
// detected in CHUNK_CHARS slices, each on the PII helper thread (pii-helper.ts) and one at a time,
// so other agents' calls run in between and their own detection takes turns with this one. Each
// slice is widened by left context (the detectors' look-behinds and back-scans) and by an overlap
// longer than the longest match (a PEM key, 64 KiB), and keeps the matches that start inside it:
// the result equals findPii on the whole text.

import { findPiiOffLoop } from './pii-helper.js';
import { sortTypes } from './detectors.js';
import type { PiiMatch, PiiType } from './pii-types.js';

/** Texts longer than this are detected in slices of this size, characters. */
export const CHUNK_CHARS = 128 * 1024;
/** Characters before a slice that detectors may look back at (look-behinds, email and key back-scans). */
const LEFT_CONTEXT_CHARS = 1024;
/** Characters after a slice, longer than the longest match (PEM bodies stop at 64 KiB). */
const OVERLAP_CHARS = 80 * 1024;

/** findPii, off the event loop and in slices for a long text; `turn`: whose turn its slices take (an agent). */
export async function findPiiYielding(text: string, turn?: string): Promise<readonly PiiMatch[]> {
  if (text.length <= CHUNK_CHARS) return findPiiOffLoop(text, turn);
  const out: PiiMatch[] = [];
  let keptEnd = 0;
  for (let start = 0; start < text.length; start += CHUNK_CHARS) {
    const from = Math.max(0, start - LEFT_CONTEXT_CHARS);
    const to = Math.min(text.length, start + CHUNK_CHARS + OVERLAP_CHARS);
    for (const m of await findPiiOffLoop(text.slice(from, to), turn)) {
      const matchStart = m.start + from;
      if (matchStart < start || matchStart >= start + CHUNK_CHARS || matchStart < keptEnd) continue;
      out.push({ type: m.type, start: matchStart, end: m.end + from, value: m.value });
      keptEnd = m.end + from;
    }
  }
  return out;
}

/** The distinct PII types in a text of any size, in PII_TYPES order (flow checks), off the event loop. */
export async function piiTypesInYielding(text: string, turn?: string): Promise<PiiType[]> {
  return sortTypes(new Set((await findPiiYielding(text, turn)).map((m) => m.type)));
}
