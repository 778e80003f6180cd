// How context_vars are packed for a runtime (src/executor/context-vars.ts): long string values
// apart for runtimes that ask, everything else in the one JSON text, and nothing lost either way.

import { describe, expect, it } from 'vitest';
import { LONG_CONTEXT_CHARS, contextForRun } from '../../src/executor/context-vars.js';

/** The context_vars a sandbox rebuilds from the request's fields. */
function rebuilt(fields: ReturnType<typeof contextForRun>): Record<string, unknown> {
  return { ...(JSON.parse(fields.contextJson ?? '{}') as Record<string, unknown>), ...Object.fromEntries(fields.contextStrings ?? []) };
}

describe('contextForRun', () => {
  const long = `{"a": "${'x'.repeat(LONG_CONTEXT_CHARS)}"} 😀`;
  const vars = { raw: long, n: 1, short: 'hi', nested: { text: 'y'.repeat(LONG_CONTEXT_CHARS) }, lone: `\ud800${'z'.repeat(LONG_CONTEXT_CHARS)}` };
  const json = JSON.stringify(vars);

  it('takes long, well-formed top-level strings apart when the runtime asks', () => {
    const fields = contextForRun(json, vars, true);
    expect(fields.contextStrings).toEqual([['raw', long]]);
    // Nested strings and a string with a lone surrogate stay in the JSON text.
    expect(Object.keys(JSON.parse(fields.contextJson as string) as object)).toEqual(['n', 'short', 'nested', 'lone']);
    expect(rebuilt(fields)).toEqual(vars);
  });

  it('leaves the JSON text as it is for runtimes that do not ask, and for short contexts', () => {
    expect(contextForRun(json, vars, false)).toEqual({ contextJson: json });
    const small = { raw: 'short text' };
    expect(contextForRun(JSON.stringify(small), small, true)).toEqual({ contextJson: JSON.stringify(small) });
    expect(contextForRun(undefined, undefined, true)).toEqual({ contextJson: undefined });
  });

  it('drops what JSON drops (undefined, functions) exactly as the whole JSON text did', () => {
    const odd = { raw: 'r'.repeat(LONG_CONTEXT_CHARS), gone: undefined, fn: () => 1, keep: [1, undefined] };
    const fields = contextForRun(JSON.stringify(odd), odd, true);
    expect(rebuilt(fields)).toEqual(JSON.parse(JSON.stringify(odd)));
  });
});
