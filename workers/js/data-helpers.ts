// The seed's data helpers, with the seed's semantics, for guest code that wants a one-liner
// instead of a loop. They only read guest data and return fresh arrays and objects.

import { makeError } from '../kit/call-scope.js';
import { toJsonSafe } from '../kit/serialize.js';

/** Items of `data` whose `field` equals `value` (deep equality for objects, as Python's ==). */
export function filterByField(data: unknown, field: unknown, value: unknown): unknown[] {
  const list = asList(data, 'filter_by_field');
  if (typeof field !== 'string' && typeof field !== 'number') throw makeError('TypeError', 'filter_by_field(data, field, value): field must be a string');
  const key = String(field);
  const wanted = value !== null && typeof value === 'object' ? JSON.stringify(toJsonSafe(value)) : undefined;
  return list.filter((item) => {
    if (item === null || typeof item !== 'object') return false;
    const v = own(item, key);
    if (wanted === undefined) return v === value;
    return v !== null && typeof v === 'object' && JSON.stringify(toJsonSafe(v)) === wanted;
  });
}

/** `{count, sample}`: how many items, and the first `limit` of them. */
export function summarizeList(data: unknown, limit: unknown = 10): { count: number; sample: unknown[] } {
  const list = asList(data, 'summarize_list');
  const n = limit === undefined ? 10 : Number(limit);
  if (!Number.isInteger(n) || n < 0) throw makeError('TypeError', 'summarize_list(data, limit): limit must be a non-negative integer');
  return { count: list.length, sample: list.slice(0, n) };
}

/**
 * `{count, FIELD_sum, FIELD_avg, FIELD_min, FIELD_max}` for each numeric field. Fields default to
 * the numeric ones of the first item; an item missing a field counts as 0, as in the seed.
 */
export function aggregateStats(data: unknown, numericFields?: unknown): Record<string, number> {
  const list = asList(data, 'aggregate_stats');
  const out: Record<string, number> = { count: list.length };
  if (list.length === 0) return out;
  let fields: string[];
  if (numericFields === undefined || numericFields === null) {
    const first = list[0];
    fields = first !== null && typeof first === 'object' && !Array.isArray(first)
      ? Object.keys(first).filter((k) => typeof (first as Record<string, unknown>)[k] === 'number')
      : [];
  } else if (Array.isArray(numericFields) && numericFields.every((f) => typeof f === 'string')) {
    fields = numericFields as string[];
  } else {
    throw makeError('TypeError', 'aggregate_stats(data, numeric_fields): numeric_fields must be a list of field names');
  }
  for (const field of fields) {
    let sum = 0;
    let min = Infinity;
    let max = -Infinity;
    let n = 0;
    for (const item of list) {
      if (item === null || typeof item !== 'object') continue;
      const raw = own(item, field);
      const v = raw === undefined ? 0 : raw;
      if (typeof v !== 'number' || !Number.isFinite(v)) continue;
      sum += v;
      if (v < min) min = v;
      if (v > max) max = v;
      n++;
    }
    if (n === 0) continue;
    out[`${field}_sum`] = sum;
    out[`${field}_avg`] = sum / n;
    out[`${field}_min`] = min;
    out[`${field}_max`] = max;
  }
  return out;
}

/** Pretty JSON of `data`, cut to `max_chars` (default 5000). */
export function formatOutput(data: unknown, maxChars: unknown = 5000): string {
  const n = maxChars === undefined ? 5000 : Number(maxChars);
  if (!Number.isInteger(n) || n < 0) throw makeError('TypeError', 'format_output(data, max_chars): max_chars must be a non-negative integer');
  const text = JSON.stringify(toJsonSafe(data, { chars: Math.max(n * 2, 1024), cut: false }), null, 2) ?? 'null';
  return text.slice(0, n);
}

/** A record's own field: `constructor` or `toString` of a record without them is missing, as in a dict. */
function own(item: object, key: string): unknown {
  return Object.hasOwn(item, key) ? (item as Record<string, unknown>)[key] : undefined;
}

function asList(data: unknown, fn: string): unknown[] {
  if (!Array.isArray(data)) {
    throw makeError('TypeError', `${fn}(data, ...): data must be an array (a list of records), got ${data === null ? 'null' : typeof data}`);
  }
  return data;
}
