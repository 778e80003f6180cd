// Turns any guest value into plain JSON data inside the worker. Guest values may be cyclic,
// Proxies, getters that throw or loop, functions, Symbols or BigInts; structured clone crashes the
// worker on several of these, so nothing guest-made crosses a thread boundary without this.

import type { Json } from './protocol.js';

/** Deepest nesting kept; deeper values are described. */
export const MAX_DEPTH = 64;

export interface Budget {
  /** Characters (approximate JSON size) still allowed. */
  chars: number;
  /** Set when anything was cut for budget. */
  cut: boolean;
}

export function newBudget(chars: number): Budget {
  return { chars, cut: false };
}

/** Plain JSON data for `value`; never throws. */
export function toJsonSafe(value: unknown, budget: Budget = newBudget(Number.MAX_SAFE_INTEGER)): Json {
  return convert(value, budget, new Set<object>(), 0);
}

function convert(value: unknown, budget: Budget, ancestors: Set<object>, depth: number): Json {
  if (budget.chars <= 0) {
    budget.cut = true;
    return '[truncated]';
  }
  switch (typeof value) {
    case 'undefined':
      budget.chars -= 4;
      return null;
    case 'boolean':
      budget.chars -= 5;
      return value;
    case 'number':
      budget.chars -= 8;
      return Number.isFinite(value) ? value : null;
    case 'bigint': {
      const s = value.toString();
      budget.chars -= s.length + 2;
      return s;
    }
    case 'string':
      return cutString(value, budget);
    case 'symbol':
      return cutString(safeString(() => value.toString(), 'Symbol()'), budget);
    case 'function':
      return cutString(`[Function: ${safeString(() => (value as { name?: unknown }).name as string, '') || 'anonymous'}]`, budget);
    default:
      break;
  }
  if (value === null) {
    budget.chars -= 4;
    return null;
  }
  const obj = value as object;
  if (ancestors.has(obj)) {
    budget.chars -= 10;
    return '[Circular]';
  }
  if (depth >= MAX_DEPTH) {
    budget.cut = true;
    return '[Object: too deep]';
  }
  ancestors.add(obj);
  try {
    return convertObject(obj, budget, ancestors, depth);
  } catch (err) {
    // A Proxy trap, a getter or toJSON threw: describe instead of failing the whole result.
    return cutString(`[Unserializable: ${describeError(err)}]`, budget);
  } finally {
    ancestors.delete(obj);
  }
}

function convertObject(obj: object, budget: Budget, ancestors: Set<object>, depth: number): Json {
  if (Array.isArray(obj)) return convertList(obj, budget, ancestors, depth);
  if (obj instanceof Date) {
    const t = obj.getTime();
    return Number.isNaN(t) ? null : cutString(obj.toISOString(), budget);
  }
  if (obj instanceof Map) {
    const out: Record<string, Json> = {};
    let primitiveKeys = true;
    for (const k of obj.keys()) if (k !== null && typeof k === 'object') primitiveKeys = false;
    if (!primitiveKeys) {
      return convertList([...obj.entries()], budget, ancestors, depth);
    }
    for (const [k, v] of obj) {
      if (budget.chars <= 0) {
        budget.cut = true;
        break;
      }
      const key = String(k);
      budget.chars -= key.length + 4;
      setKey(out, key, convert(v, budget, ancestors, depth + 1));
    }
    return out;
  }
  if (obj instanceof Set) return convertList([...obj], budget, ancestors, depth);
  if (obj instanceof Error) {
    return { name: cutString(safeString(() => obj.name, 'Error'), budget), message: cutString(safeString(() => obj.message, ''), budget) };
  }
  if (obj instanceof RegExp) return cutString(safeString(() => obj.toString(), '/(?:)/'), budget);
  if (ArrayBuffer.isView(obj)) {
    if (obj instanceof DataView) return `[DataView ${obj.byteLength} bytes]`;
    // Indexed in place, never copied: a typed array may be gigabytes.
    return convertList(obj as unknown as ArrayLike<number | bigint>, budget, ancestors, depth);
  }
  if (obj instanceof ArrayBuffer) return `[ArrayBuffer ${obj.byteLength} bytes]`;
  if (obj instanceof Promise) return '[Promise]';
  if (obj instanceof WeakMap || obj instanceof WeakSet) return `[${obj instanceof WeakMap ? 'WeakMap' : 'WeakSet'}]`;
  const toJSON = (obj as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') {
    const replaced: unknown = toJSON.call(obj);
    if (replaced !== obj) return convert(replaced, budget, ancestors, depth + 1);
  }
  const out: Record<string, Json> = {};
  for (const key of Object.keys(obj)) {
    if (budget.chars <= 0) {
      budget.cut = true;
      break;
    }
    budget.chars -= key.length + 4;
    let v: unknown;
    try {
      v = (obj as Record<string, unknown>)[key];
    } catch (err) {
      setKey(out, key, `[Getter threw: ${describeError(err)}]`);
      continue;
    }
    setKey(out, key, convert(v, budget, ancestors, depth + 1));
  }
  return out;
}

/**
 * Sets an own data property whatever the key. Assignment would fail on `constructor`, `toString`
 * and the like (lockdown freezes Object.prototype, so inherited read-only properties refuse it) and
 * would set the prototype for `__proto__` (a key JSON.parse makes as an own property).
 */
function setKey(out: Record<string, Json>, key: string, value: Json): void {
  Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
}

function convertList(list: ArrayLike<unknown>, budget: Budget, ancestors: Set<object>, depth: number): Json[] {
  const out: Json[] = [];
  const n = list.length;
  for (let i = 0; i < n; i++) {
    if (budget.chars <= 0) {
      budget.cut = true;
      out.push(`[... ${n - i} more items]`);
      break;
    }
    budget.chars -= 1;
    out.push(convert(list[i], budget, ancestors, depth + 1));
  }
  return out;
}

function cutString(s: string, budget: Budget): string {
  budget.chars -= s.length + 2;
  if (budget.chars >= 0) return s;
  budget.cut = true;
  const keep = Math.max(0, s.length + budget.chars);
  return `${s.slice(0, keep)}...[truncated ${s.length - keep} chars]`;
}

function safeString(get: () => string, fallback: string): string {
  try {
    const s = get();
    return typeof s === 'string' ? s : fallback;
  } catch {
    return fallback;
  }
}

/** `Name: message` of a thrown value, without running more guest code than reading two fields. */
export function describeError(err: unknown): string {
  if (err !== null && typeof err === 'object') {
    const name = safeString(() => (err as { name: string }).name, 'Error');
    const message = safeString(() => (err as { message: string }).message, '');
    return message ? `${name}: ${message}` : name;
  }
  return safeString(() => String(err), 'unknown error');
}
