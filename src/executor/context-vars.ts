// How a call's context_vars travel to its sandbox: one JSON text, and the long string values apart,
// as they are (every runtime takes them so). The common large
// context is megabytes of JSON text the guest parses itself (`data = json.loads(raw)`): inside one
// JSON text it would be escaped once more and decoded once more on its way, for nothing.

import type { RunRequest } from '../../workers/kit/protocol.js';

/** Largest context_vars, as characters of JSON (of the whole, however it travels). */
export const MAX_CONTEXT_CHARS = 16 * 1024 * 1024;
/** String values at least this long travel apart (JSON-escaped once, in the frame; Python gets them as UTF-8 bytes). */
export const LONG_CONTEXT_CHARS = 32 * 1024;

export type ContextFields = Pick<RunRequest, 'contextJson' | 'contextStrings'>;

/** No lone surrogate (String.prototype.isWellFormed: Node 20 has it, TypeScript's ES2023 lib does not). */
function wellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

/**
 * The request's context fields for `vars` (keys already checked), or the error text: `contextJson`,
 * with the long top-level string values in `contextStrings` instead. A string with a lone surrogate
 * stays in the JSON (UTF-8 cannot carry it), and so do strings inside structures.
 */
export function packContext(vars: Record<string, unknown>): ContextFields | string {
  if (Object.keys(vars).length === 0) return {};
  const rest: Record<string, unknown> = {};
  const strings: [string, string][] = [];
  for (const [name, value] of Object.entries(vars)) {
    if (typeof value === 'string' && value.length >= LONG_CONTEXT_CHARS && wellFormed(value)) strings.push([name, value]);
    else rest[name] = value;
  }
  let json: string;
  try {
    json = JSON.stringify(rest);
  } catch {
    return 'context_vars must be JSON data';
  }
  // The limit counts the whole as one JSON text. A character takes at most 6 in JSON (\uXXXX):
  // when even that bound fits, the exact size (as costly to make as the JSON itself) is not needed.
  let bound = json.length;
  for (const [name, value] of strings) bound += 6 * (name.length + value.length) + 6;
  if (bound > MAX_CONTEXT_CHARS) {
    const size = strings.length === 0 ? json.length : JSON.stringify(vars).length;
    if (size > MAX_CONTEXT_CHARS) return `context_vars is ${size} characters of JSON; the limit is ${MAX_CONTEXT_CHARS}`;
  }
  return strings.length === 0 ? { contextJson: json } : { contextJson: json, contextStrings: strings };
}
