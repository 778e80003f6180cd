// "Did you mean" for unknown server and tool names: a small edit-distance ranking, tolerant of
// case and of `-` / `_` / `.` spelled differently (get-sum vs get_sum), enough for a name list.
import { editDistance } from '../util/edit-distance.js';

const MAX_SUGGESTIONS = 3;

function normalize(name: string): string {
  return name.toLowerCase().replace(/[-_.\s]+/g, '_');
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
