// Maps every string inside JSON-shaped data, object keys included (a result grouped by email has
// emails as keys): how a vault tokenizes or restores a whole value. Numbers, booleans and null
// are kept; an object is copied as a plain object of its own enumerable properties; a cycle
// becomes '[Circular]'.

export function mapStrings(value: unknown, mapString: (s: string) => string): unknown {
  return walk(value, mapString, new Set());
}

/** Every string mapStrings would visit, keys included, in visiting order. */
export function stringsIn(value: unknown): string[] {
  const found: string[] = [];
  walk(value, (s) => {
    found.push(s);
    return s;
  }, new Set());
  return found;
}

function walk(value: unknown, mapString: (s: string) => string, ancestors: Set<object>): unknown {
  if (typeof value === 'string') return mapString(value);
  if (typeof value !== 'object' || value === null) return value;
  if (ancestors.has(value)) return '[Circular]';
  ancestors.add(value);
  try {
    if (Array.isArray(value)) return value.map((item: unknown) => walk(item, mapString, ancestors));
    const toJSON: unknown = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return walk(toJSON.call(value), mapString, ancestors);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      // defineProperty, not assignment: a "__proto__" key must stay data, not a prototype.
      Object.defineProperty(out, mapString(k), {
        value: walk(v, mapString, ancestors),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  } finally {
    ancestors.delete(value);
  }
}
