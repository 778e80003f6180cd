// console.log formatting for guest values. Host util.inspect must never see a guest value (a
// `nodejs.util.inspect.custom` method would run on the host stack with host objects as arguments),
// so this is a small formatter that only reads plain properties, under a size budget.

import { describeError, newBudget, toJsonSafe } from './serialize.js';

/** Longest single console line kept, characters. */
export const MAX_LINE_CHARS = 10_000;

export function formatArgs(args: readonly unknown[]): string {
  let line = '';
  for (let i = 0; i < args.length; i++) {
    if (i > 0) line += ' ';
    let text: string;
    try {
      text = formatOne(args[i]);
    } catch (err) {
      // `instanceof` on a revoked Proxy throws: logging it must not fail the call.
      text = `[Unprintable: ${describeError(err)}]`;
    }
    line += text;
    if (line.length > MAX_LINE_CHARS) return `${line.slice(0, MAX_LINE_CHARS)}...[line truncated]`;
  }
  return line;
}

function formatOne(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || v === null || v === undefined) return String(v);
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'symbol') return describeError(v);
  if (typeof v === 'function') {
    let name = '';
    try {
      name = typeof v.name === 'string' ? v.name : '';
    } catch {
      // a Proxy's get trap may throw
    }
    return `[Function: ${name || 'anonymous'}]`;
  }
  if (v instanceof Error) {
    return describeError(v);
  }
  try {
    const data = toJsonSafe(v, newBudget(MAX_LINE_CHARS));
    return JSON.stringify(data);
  } catch (err) {
    return `[Unprintable: ${describeError(err)}]`;
  }
}
