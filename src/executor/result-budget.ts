// The output budget's cut of a result: the result keeps its JSON type (an array stays an array
// of its first items, an object keeps its first keys, a string its first characters), and a
// `preview` beside it says what it was and how much was kept. docs/results.md describes the shape.

/** What `preview` says of a cut result. */
export interface ResultPreview {
  /** The JSON type of the whole result: 'array', 'object' or 'string'. */
  type: 'array' | 'object' | 'string';
  /** Items, keys or characters in the whole result. */
  total: number;
  /** Items, keys or characters kept in `result` (the last kept one may itself be cut). */
  kept: number;
  /** Characters of the whole result as compact JSON. */
  json_chars: number;
}

/** Smallest room worth cutting a nested value into rather than leaving it out. */
const MIN_NESTED_CHARS = 16;

/**
 * `value` cut to about `budget` characters of compact JSON, keeping its type, with the preview;
 * undefined when it fits. Numbers, booleans and null always fit (they are never cut).
 */
export function cutResult(value: unknown, budget: number, jsonChars: number): { result: unknown; preview: ResultPreview } | undefined {
  if (jsonChars <= budget) return undefined;
  if (typeof value === 'string') {
    const kept = (fit(value, Math.max(budget, MIN_NESTED_CHARS))?.value as string | undefined) ?? '';
    return { result: kept, preview: { type: 'string', total: value.length, kept: kept.length, json_chars: jsonChars } };
  }
  if (Array.isArray(value)) {
    const { out, kept } = cutList(value, budget);
    return { result: out, preview: { type: 'array', total: value.length, kept, json_chars: jsonChars } };
  }
  if (value !== null && typeof value === 'object') {
    const { out, kept, total } = cutRecord(value as Record<string, unknown>, budget);
    return { result: out, preview: { type: 'object', total, kept, json_chars: jsonChars } };
  }
  return undefined;
}

/**
 * Compact JSON length of a JSON value, or `limit + 1` as soon as it is known to be longer: the
 * work is bounded by the limit, not the value (a value nested 64 deep around megabytes is not
 * measured again at every level on the coordinator's event loop).
 */
export function jsonLengthUpTo(value: unknown, limit: number): number {
  if (value === null || value === undefined) return 4;
  switch (typeof value) {
    case 'string':
      // Escapes only lengthen a string: a long one is over without being read.
      return value.length + 2 > limit ? limit + 1 : (JSON.stringify(value) as string).length;
    case 'number':
    case 'boolean':
      return String(value).length;
    case 'object':
      break;
    default:
      return 4;
  }
  let used = 2;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && used <= limit; i++) used += (i > 0 ? 1 : 0) + jsonLengthUpTo(value[i], limit - used);
  } else {
    let first = true;
    for (const key of Object.keys(value)) {
      if (used > limit) break;
      used += (first ? 0 : 1) + jsonLengthUpTo(key, limit - used) + 1;
      used += jsonLengthUpTo((value as Record<string, unknown>)[key], limit - used);
      first = false;
    }
  }
  return used > limit ? limit + 1 : used;
}

/** The same value in at most `room` characters, or undefined if not even a cut of it fits. */
function fit(value: unknown, room: number): { value: unknown; chars: number } | undefined {
  const size = jsonLengthUpTo(value, room);
  if (size <= room) return { value, chars: size };
  if (room < MIN_NESTED_CHARS) return undefined;
  if (typeof value === 'string') {
    // Escaped characters take more room than one: shorten until the JSON fits.
    let s = value.slice(0, room - 2);
    let chars = (JSON.stringify(s) as string).length;
    while (chars > room && s.length > 0) {
      s = s.slice(0, Math.max(0, s.length - (chars - room)));
      chars = (JSON.stringify(s) as string).length;
    }
    return { value: s, chars };
  }
  if (Array.isArray(value)) {
    const { out, chars } = cutList(value, room);
    return { value: out, chars };
  }
  if (value !== null && typeof value === 'object') {
    const { out, chars } = cutRecord(value as Record<string, unknown>, room);
    return { value: out, chars };
  }
  return undefined;
}

function cutList(list: readonly unknown[], room: number): { out: unknown[]; kept: number; chars: number } {
  const out: unknown[] = [];
  let used = 2;
  for (const item of list) {
    const left = room - used - (out.length > 0 ? 1 : 0);
    const cut = fit(item, left);
    if (!cut) break;
    out.push(cut.value);
    used += cut.chars + (out.length > 1 ? 1 : 0);
    if (cut.value !== item) break;
  }
  return { out, kept: out.length, chars: used };
}

function cutRecord(record: Record<string, unknown>, room: number): { out: Record<string, unknown>; kept: number; total: number; chars: number } {
  const out: Record<string, unknown> = {};
  const keys = Object.keys(record);
  let used = 2;
  let kept = 0;
  for (const key of keys) {
    const head = (JSON.stringify(key) ?? '').length + 1 + (kept > 0 ? 1 : 0);
    const item = record[key];
    const cut = fit(item, room - used - head);
    if (!cut) break;
    // Own data properties: `__proto__` and the like stay keys.
    Object.defineProperty(out, key, { value: cut.value, writable: true, enumerable: true, configurable: true });
    kept++;
    used += head + cut.chars;
    if (cut.value !== item) break;
  }
  return { out, kept, total: keys.length, chars: used };
}

/** The parts of a result the budget cuts (execute_code's result shape). */
export interface Budgeted {
  result: unknown;
  output: string[];
  truncated?: boolean;
  preview?: ResultPreview;
  output_file?: string;
}

/**
 * Cuts `r`'s result plus output to `budget` characters, in place: the result keeps its type
 * (with `preview`), output lines are kept from the first, and `spill` saves the whole first,
 * naming the file it wrote (undefined: it may not write one).
 */
export async function applyBudget(r: Budgeted, budget: number, spill: (whole: { result: unknown; output: string[] }) => Promise<string | undefined>): Promise<void> {
  const resultJson = JSON.stringify(r.result) ?? 'null';
  let outputChars = 0;
  for (const line of r.output) outputChars += line.length;
  if (resultJson.length + outputChars <= budget) return;

  const file = await spill({ result: r.result, output: r.output });
  if (file !== undefined) r.output_file = file;
  const resultShare = outputChars === 0 ? budget : Math.floor(budget * 0.75);
  const cut = cutResult(r.result, resultShare, resultJson.length);
  if (cut) {
    r.result = cut.result;
    r.preview = cut.preview;
  }
  let left = budget - Math.min(resultJson.length, resultShare);
  const kept: string[] = [];
  for (const line of r.output) {
    if (left <= 0) break;
    kept.push(line.length > left ? `${line.slice(0, left)}...` : line);
    left -= line.length;
  }
  if (kept.length < r.output.length || left < 0) {
    kept.push(`[output truncated: ${r.output.length} lines, ${outputChars} characters in all${r.output_file ? `; see ${r.output_file}` : ''}]`);
  }
  r.output = kept;
  r.truncated = true;
}
