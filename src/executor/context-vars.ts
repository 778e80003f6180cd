// How a call's context_vars travel to its sandbox: one JSON text, and for runtimes whose row asks
// for it (RuntimeRow.contextStrings) the long string values apart, as they are. The common large
// context is megabytes of JSON text the guest parses itself (`data = json.loads(raw)`): inside one
// JSON text it would be escaped once more and decoded once more on its way, for nothing.

import type { RunRequest } from '../../workers/kit/protocol.js';

/** String values at least this long travel apart (the Python worker hands them over as UTF-8 bytes). */
export const LONG_CONTEXT_CHARS = 32 * 1024;

/** No lone surrogate (String.prototype.isWellFormed: Node 20 has it, TypeScript's ES2023 lib does not). */
function wellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

/**
 * The request's context fields: `contextJson` (the whole of context_vars as JSON, already made and
 * checked against the size limit) as is, or, when `apart`, without its long string values, which
 * go in `contextStrings`. A string with a lone surrogate stays in the JSON (UTF-8 cannot carry it).
 */
export function contextForRun(contextJson: string | undefined, vars: Record<string, unknown> | undefined, apart: boolean): Pick<RunRequest, 'contextJson' | 'contextStrings'> {
  if (contextJson === undefined || vars === undefined || !apart || contextJson.length < LONG_CONTEXT_CHARS) return { contextJson };
  const rest: Record<string, unknown> = {};
  const strings: [string, string][] = [];
  for (const [name, value] of Object.entries(vars)) {
    if (typeof value === 'string' && value.length >= LONG_CONTEXT_CHARS && wellFormed(value)) strings.push([name, value]);
    else rest[name] = value;
  }
  return strings.length === 0 ? { contextJson } : { contextJson: JSON.stringify(rest), contextStrings: strings };
}
