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
    const keep = Math.max(0, budget - 2);
    return { result: value.slice(0, keep), preview: { type: 'string', total: value.length, kept: keep, json_chars: jsonChars } };
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

/** The same value in at most `room` characters, or undefined if not even a cut of it fits. */
function fit(value: unknown, room: number): { value: unknown; chars: number } | undefined {
  const json = JSON.stringify(value) ?? 'null';
  if (json.length <= room) return { value, chars: json.length };
  if (room < MIN_NESTED_CHARS) return undefined;
  if (typeof value === 'string') {
    const s = value.slice(0, room - 2);
    return { value: s, chars: (JSON.stringify(s) ?? '').length };
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
