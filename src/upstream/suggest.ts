// "Did you mean" for unknown server and tool names: a small edit-distance ranking, tolerant of
// case and of `-` / `_` / `.` spelled differently (get-sum vs get_sum), enough for a name list.

const MAX_SUGGESTIONS = 3;

function normalize(name: string): string {
  return name.toLowerCase().replace(/[-_.\s]+/g, '_');
}

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions). */
function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  let prevPrev: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, (prevPrev[j - 2] ?? 0) + 1);
      }
      row.push(best);
    }
    prevPrev = prev;
    prev = row;
  }
  return prev[b.length] ?? 0;
}

/** Up to three candidates close to `name`, closest first; [] when nothing is close. */
export function closestNames(name: string, candidates: Iterable<string>, limit = MAX_SUGGESTIONS): string[] {
  const wanted = normalize(name);
  const scored: { candidate: string; score: number }[] = [];
  for (const candidate of candidates) {
    const have = normalize(candidate);
    let score = editDistance(wanted, have);
    const allowed = Math.max(2, Math.floor(Math.max(wanted.length, have.length) / 3));
    // A name that contains the other (read vs read_graph) is a good hint even when far in edits.
    if (wanted.length >= 3 && (have.includes(wanted) || wanted.includes(have))) score = Math.min(score, allowed);
    if (score <= allowed) scored.push({ candidate, score });
  }
  scored.sort((x, y) => x.score - y.score || x.candidate.localeCompare(y.candidate));
  return scored.slice(0, limit).map((s) => s.candidate);
}
