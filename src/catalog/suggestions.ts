// "Did you mean" for unknown tool and category names: edit distance first (typos), then the
// search index (other words for the same thing), so a wrong name still leads somewhere.
import { editDistance } from '../util/edit-distance.js';

export interface Candidate {
  /** What is shown ('github.get_issue'). */
  label: string;
  /** What the typed name is compared with ('get_issue'); several keys may point at one label. */
  keys: readonly string[];
}

/**
 * Up to `count` labels closest to `input`, in three tiers: clear typos first (edit distance at
 * most 20% of the input, at least 1), then the `related` labels (search hits, in their order),
 * then other near names (distance at most 40% of the longer word, at least 2; or containing
 * the input). Ties are broken by label so the answer is stable.
 */
export function closestNames(input: string, candidates: Iterable<Candidate>, related: readonly string[] = [], count = 3): string[] {
  const needle = input.toLowerCase();
  const typo = Math.max(1, Math.floor(needle.length * 0.2));
  const scored: { label: string; distance: number }[] = [];
  for (const candidate of candidates) {
    let best = Number.POSITIVE_INFINITY;
    for (const key of candidate.keys) {
      const k = key.toLowerCase();
      const max = Math.max(2, Math.floor(Math.max(k.length, needle.length) * 0.4));
      const d = editDistance(needle, k, max);
      // A name that contains the input (or the reverse) is a near miss too: 'issue' -> 'get_issue'.
      const contained = needle.length >= 3 && (k.includes(needle) || needle.includes(k)) ? max : Number.POSITIVE_INFINITY;
      best = Math.min(best, d <= max ? d : contained);
    }
    if (Number.isFinite(best)) scored.push({ label: candidate.label, distance: best });
  }
  scored.sort((x, y) => x.distance - y.distance || (x.label < y.label ? -1 : x.label > y.label ? 1 : 0));
  const typos = scored.filter((s) => s.distance <= typo).map((s) => s.label);
  const out: string[] = [];
  for (const label of [...typos, ...related, ...scored.map((s) => s.label)]) {
    if (!out.includes(label)) out.push(label);
    if (out.length === count) break;
  }
  return out;
}
