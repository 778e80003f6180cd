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
  /** The stripper trapped (nesting deeper than its stack) and was reloaded; trying again is useless. */
  trapped?: boolean;
}

export type StripResult = { ok: true; code: string } | { ok: false; diagnostic: StripDiagnostic };

/** amaro is a dependency; a broken install (it is missing) fails TypeScript calls with this. */
export const TYPESCRIPT_MISSING =
  'TypeScript is not available: the package "amaro" (the type stripper) is missing from this install (npm install amaro). JavaScript and Python run without it; pass language "javascript" for plain JavaScript';

let transformSync: Transform | undefined;
/** How many times this thread loaded the stripper (a trap makes it load again). */
let loads = 0;
const requireHere = createRequire(import.meta.url);

/**
 * What a trap inside the WebAssembly (its stack exhausted by deep nesting: about 150 levels of
 * brackets or blocks) leaves behind: an instance whose memory is corrupt, failing every later call.
 */
export const NESTED_TOO_DEEPLY = `the code is nested too deeply for the TypeScript type stripper (more than ${MAX_NESTING} levels of brackets, nested functions or chained \`=>\`, \`?\` and \`=\`); flatten it, or pass language "javascript" if it has no types`;

/** Loaded on the first TypeScript call; undefined when the package is not installed. */
function load(): Transform | undefined {
  if (transformSync) return transformSync;
  try {
    transformSync = (requireHere('amaro') as { transformSync: Transform }).transformSync;
    loads++;
    return transformSync;
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') return undefined;
    throw error;
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
  // Refused before the stripper runs: a trap would cost this thread a reload (nesting.ts).
  if (nestingDepth(source, MAX_NESTING) > MAX_NESTING) {
    if (!load()) throw missing();
    return { ok: false, diagnostic: nestedTooDeeply() };
  }
  const first = attempt(source, mode);
  if (!('trap' in first)) return first;
  // The code passed the nesting guard, so the trap is the instance's (left unusable by an earlier
  // input, or out of memory), not this code's: once more on a fresh instance before failing it.
  const second = attempt(source, mode);
  if (!('trap' in second)) return second;
  const message = `the TypeScript type stripper failed on this code (${describe(second.trap)}); pass language "javascript" if it has no types`;
  return { ok: false, diagnostic: { message, line: 1, column: 1, unsupported: false, trapped: true } };
}

/** One run of the stripper; a trap (anything but its own syntax report) drops the instance. */
function attempt(source: string, mode: 'strip-only' | 'transform'): StripResult | { trap: unknown } {
  const transform = load();
  if (!transform) throw missing();
  try {
    return { ok: true, code: transform(source, { mode }).code };
  } catch (error) {
    if (typeof error === 'string') return { ok: false, diagnostic: parseDiagnostic(error) };
    // A trap (RuntimeError, RangeError): this instance is unusable; the next run loads a new one.
    transformSync = undefined;
    delete requireHere.cache[requireHere.resolve('amaro')];
    return { trap: error };
  }
}

function missing(): Error {
  return Object.assign(new Error(TYPESCRIPT_MISSING), { code: 'TYPESCRIPT_MISSING' });
}

function describe(error: unknown): string {
  const e = error as { name?: unknown; message?: unknown } | null;
  return typeof e?.message === 'string' ? `${typeof e.name === 'string' ? e.name : 'Error'}: ${e.message}` : String(error);
}

function nestedTooDeeply(): StripDiagnostic {
  return { message: NESTED_TOO_DEEPLY, line: 1, column: 1, unsupported: false, trapped: true };
}

/** How many times this thread loaded the stripper: once, unless a trap made it load again. */
export function stripperLoads(): number {
  return loads;
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
