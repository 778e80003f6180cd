// TypeScript → JavaScript with amaro, the type stripper Node.js itself uses (SWC compiled to
// WebAssembly, 4 MB and no dependencies; it replaced typescript + ts-blank-space, 23 MB, and loads
// in about 0.1 s instead of 1 s). 'strip-only' turns every type into spaces, so lines and columns
// stay where the user wrote them; 'transform' also generates code for what has no type-only
// erasure (enum, namespace, parameter properties, `<T>x` assertions), at the cost of exact columns.
// amaro 0.1.x is the line that runs on Node 20 (later lines declare Node >= 22).

import { createRequire } from 'node:module';
import { MAX_NESTING, nestingDepth } from './nesting.js';

type Transform = (source: string, options: { mode: 'strip-only' | 'transform' }) => { code: string };

/** A diagnostic of the stripper: its first message and where it points (1-based). */
export interface StripDiagnostic {
  message: string;
  line: number;
  column: number;
  /** The syntax is valid TypeScript without a type-only erasure (enum, namespace, ...). */
  unsupported: boolean;
  /** The code is too deep for the stripper (refused, or it trapped and was replaced): trying again is useless. */
  trapped?: boolean;
}

export type StripResult = { ok: true; code: string } | { ok: false; diagnostic: StripDiagnostic };

/** amaro is a dependency; a broken install (it is missing) fails TypeScript calls with this. */
export const TYPESCRIPT_MISSING =
  'TypeScript is not available: the package "amaro" (the type stripper) is missing from this install (npm install amaro). JavaScript and Python run without it; pass language "javascript" for plain JavaScript';

let transformSync: Transform | undefined;
/** How many times this thread loaded the stripper (a trap makes it load again). */
let loads = 0;
/** How many times the stripper trapped in this thread. */
let traps = 0;

/** The start every refusal of the stripper's shares, so callers and agents can tell it apart. */
const TOO_DEEP = 'TypeScript too deeply nested for the type stripper';

/** Whether an error message is the stripper's refusal of code too deep for it (refused or trapped). */
export function tooDeepForStripper(message: string): boolean {
  return message.startsWith(TOO_DEEP);
}

/** Code refused before the stripper runs (nesting.ts), as a trap would cost the thread a fresh stripper. */
export const NESTED_TOO_DEEPLY = `${TOO_DEEP}: more than ${MAX_NESTING} levels of brackets, nested functions or chained \`=>\`, \`?\` and \`=\`; flatten it, or pass language "javascript" if it has no types`;

/** A trap inside the stripper's WebAssembly (its stack ran out on this code), with what it said. */
export function stripperTrapped(what: string): string {
  return `${TOO_DEEP}: it ran out of stack on this code (${what}). Long chains trap it: labels, \`new\`, \`await\`, \`keyof\`, member access, \`**\`, unary operators, \`else if\`, \`X[][]\`, \`a()()\`. Split the chain into statements, or pass language "javascript" if it has no types`;
}

/**
 * A fresh stripper that nothing else holds; undefined when the package is not installed. Loaded
 * through a require of its own and taken out of the module cache at once: a module stays a child of
 * the module that required it, so reloading through one long-lived require kept every trapped
 * instance alive (its 3.5 MB of source, its compiled WebAssembly and memory: 6 MB a load, 297 MB
 * after 40 traps in one thread; dropped this way, 61 -> 76 MB after 40, measured with --expose-gc).
 */
function load(): Transform | undefined {
  if (transformSync) return transformSync;
  const requireFresh = createRequire(import.meta.url);
  let id: string;
  try {
    id = requireFresh.resolve('amaro');
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === 'MODULE_NOT_FOUND') return undefined;
    throw error;
  }
  try {
    transformSync = (requireFresh(id) as { transformSync: Transform }).transformSync;
    loads++;
    return transformSync;
  } finally {
    delete requireFresh.cache[id];
  }
}

/** Whether the type stripper can be loaded (does not load it twice). */
export function typeStripperInstalled(): boolean {
  return load() !== undefined;
}

/**
 * `source` with its types removed. 'strip-only' keeps every position; 'transform' also accepts
 * enums and the like. Throws TYPESCRIPT_MISSING (an Error with code 'TYPESCRIPT_MISSING') when
 * amaro is not installed.
 */
export function stripTypeScript(source: string, mode: 'strip-only' | 'transform'): StripResult {
  const transform = load();
  if (!transform) throw missing();
  // Refused before the stripper runs: a trap would cost this thread a fresh stripper (nesting.ts).
  if (nestingDepth(source, MAX_NESTING) > MAX_NESTING) return { ok: false, diagnostic: trapped(NESTED_TOO_DEEPLY) };
  try {
    return { ok: true, code: transform(source, { mode }).code };
  } catch (error) {
    if (typeof error === 'string') return { ok: false, diagnostic: parseDiagnostic(error) };
    // A trap (RuntimeError, RangeError) leaves the instance corrupt: it is thrown away, never tried
    // again, and its successor is loaded now, so this code's caller pays for it, not the next one.
    traps++;
    transformSync = undefined;
    load();
    return { ok: false, diagnostic: trapped(stripperTrapped(describe(error))) };
  }
}

function missing(): Error {
  return Object.assign(new Error(TYPESCRIPT_MISSING), { code: 'TYPESCRIPT_MISSING' });
}

function describe(error: unknown): string {
  const e = error as { name?: unknown; message?: unknown } | null;
  return typeof e?.message === 'string' ? `${typeof e.name === 'string' ? e.name : 'Error'}: ${e.message}` : String(error);
}

function trapped(message: string): StripDiagnostic {
  return { message, line: 1, column: 1, unsupported: false, trapped: true };
}

/** How many times this thread loaded the stripper: once, unless a trap made it load again. */
export function stripperLoads(): number {
  return loads;
}

/** How many times the stripper trapped in this thread. */
export function stripperTraps(): number {
  return traps;
}

/**
 * SWC reports errors as text drawn for a terminal:
 *   "  x Expression expected\n   ,-[3:1]\n 3 |   return x.a +* 2;\n   :               ^\n"
 * The message is the first "x" line; the position is the first caret under a numbered source line.
 */
export function parseDiagnostic(text: string): StripDiagnostic {
  const lines = text.split('\n');
  const message = (lines.find((l) => /^\s*x /.test(l)) ?? lines.find((l) => l.trim() !== '') ?? 'invalid TypeScript').replace(/^\s*x\s+/, '').trim();
  let line = 1;
  let column = 1;
  let lastSourceLine = 0;
  for (const l of lines) {
    const source = /^\s*(\d+) \|/.exec(l);
    if (source) {
      lastSourceLine = Number(source[1]);
      continue;
    }
    const caret = /^(\s*):(.*?)\^/.exec(l);
    if (caret && lastSourceLine > 0) {
      const bar = caret[1]?.length ?? 0;
      line = lastSourceLine;
      column = Math.max(1, (caret[0]?.length ?? 0) - bar - 2);
      break;
    }
  }
  return { message, line, column, unsupported: /not supported in (strip-only|type strip) mode/.test(message) };
}
