// PII detection of large texts without holding the coordinator's event loop: the text is detected
// in CHUNK_CHARS slices with a turn of the event loop between them, so other agents' calls run in
// between. Each slice is widened by left context (the detectors' look-behinds and back-scans) and
// by an overlap longer than the longest match (a PEM key, 64 KiB), and keeps the matches that start
// inside it: the result equals findPii on the whole text.

import { findPii } from './detectors.js';
import type { PiiMatch } from './pii-types.js';

/** Texts longer than this are detected in slices of this size, characters. */
export const CHUNK_CHARS = 128 * 1024;
/** Characters before a slice that detectors may look back at (look-behinds, email and key back-scans). */
const LEFT_CONTEXT_CHARS = 1024;
/** Characters after a slice, longer than the longest match (PEM bodies stop at 64 KiB). */
const OVERLAP_CHARS = 80 * 1024;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** findPii, yielding to the event loop between slices of a long text. */
export async function findPiiYielding(text: string): Promise<readonly PiiMatch[]> {
  if (text.length <= CHUNK_CHARS) return findPii(text);
  const out: PiiMatch[] = [];
  let keptEnd = 0;
  for (let start = 0; start < text.length; start += CHUNK_CHARS) {
    if (start > 0) await nextTurn();
    const from = Math.max(0, start - LEFT_CONTEXT_CHARS);
    const to = Math.min(text.length, start + CHUNK_CHARS + OVERLAP_CHARS);
    for (const m of findPii(text.slice(from, to))) {
      const matchStart = m.start + from;
      if (matchStart < start || matchStart >= start + CHUNK_CHARS || matchStart < keptEnd) continue;
      out.push({ type: m.type, start: matchStart, end: m.end + from, value: m.value });
      keptEnd = m.end + from;
    }
  }
  return out;
}
