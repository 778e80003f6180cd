// How context_vars are packed (src/executor/context-vars.ts): long string values apart, everything
// else in the one JSON text, nothing lost, and
// the size limit counted on the whole as one JSON text however it travels.

import { describe, expect, it } from 'vitest';
import { LONG_CONTEXT_CHARS, MAX_CONTEXT_CHARS, packContext } from '../../src/executor/context-vars.js';
import type { ContextFields } from '../../src/executor/context-vars.js';

function packed(vars: Record<string, unknown>): ContextFields {
  const fields = packContext(vars);
  if (typeof fields === 'string') throw new Error(fields);
  return fields;
}

/** The context_vars a sandbox rebuilds from the request's fields. */
function rebuilt(fields: ContextFields): Record<string, unknown> {
  return { ...(JSON.parse(fields.contextJson ?? '{}') as Record<string, unknown>), ...Object.fromEntries(fields.contextStrings ?? []) };
}

describe('packContext', () => {
  const long = `{"a": "${'x'.repeat(LONG_CONTEXT_CHARS)}"} 😀`;
  const vars = { raw: long, n: 1, short: 'hi', nested: { text: 'y'.repeat(LONG_CONTEXT_CHARS) }, lone: `\ud800${'z'.repeat(LONG_CONTEXT_CHARS)}` };

  it('takes long, well-formed top-level strings apart', () => {
    const fields = packed(vars);
    expect(fields.contextStrings).toEqual([['raw', long]]);
    // Nested strings and a string with a lone surrogate stay in the JSON text.
    expect(Object.keys(JSON.parse(fields.contextJson as string) as object)).toEqual(['n', 'short', 'nested', 'lone']);
    expect(rebuilt(fields)).toEqual(vars);
  });

  it('makes one JSON text of short values, and nothing for an empty context', () => {
    expect(packed({ raw: 'short text' })).toEqual({ contextJson: '{"raw":"short text"}' });
    expect(packed({})).toEqual({});
  });

  it('drops what JSON drops (undefined, functions) exactly as the whole JSON text did', () => {
    const odd = { raw: 'r'.repeat(LONG_CONTEXT_CHARS), gone: undefined, fn: () => 1, keep: [1, undefined] };
    expect(rebuilt(packed(odd))).toEqual(JSON.parse(JSON.stringify(odd)));
    expect(packContext({ n: 1n })).toBe('context_vars must be JSON data');
  });

  it('counts the limit on the whole JSON text, strings apart or not, and names it', () => {
    // 6x its length would pass the limit; its JSON does not: accepted.
    const three = 'q'.repeat(3 * 1024 * 1024);
    expect(packed({ three }).contextStrings).toEqual([['three', three]]);
    // Quotes count twice in JSON: under the limit in characters, over it in JSON.
    const quotes = '"'.repeat(MAX_CONTEXT_CHARS / 2 + 10);
    expect(packContext({ quotes })).toBe(`context_vars is ${JSON.stringify({ quotes }).length} characters of JSON; the limit is ${MAX_CONTEXT_CHARS}`);
  });
});
