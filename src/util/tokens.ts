// Token accounting with a real tokenizer (o200k_base, the GPT-4o / GPT-5 family encoding), so the
// context saving of running code instead of calling tools is measured per call, not quoted.
//
// Cost bound: BPE is about 0.3 µs a character on ordinary text and JSON, but several µs on long
// runs without whitespace (base64), so strings up to EXACT_MAX_CHARS are counted exactly and
// longer ones are estimated from SAMPLE_COUNT evenly spaced windows of SAMPLE_CHARS each,
// scaled by length: at most ~128 KiB is ever tokenized per value, and on homogeneous data
// (JSON arrays, logs, base64) the estimate is within a fraction of a percent.
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';

/** Strings up to this many characters are counted exactly. */
export const EXACT_MAX_CHARS = 256 * 1024;
const SAMPLE_COUNT = 32;
const SAMPLE_CHARS = 4 * 1024;
/** How far a sample window's edges move to land on whitespace, characters. */
const EDGE_SEARCH_CHARS = 64;

// Special-token text such as "<|endoftext|>" inside data is just text here; the library's
// default is to throw on it.
const ENCODE_OPTIONS = { disallowedSpecial: new Set<string>() };

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x09 || code === 0x0d;
}

/** Moves `index` forward to the next whitespace within EDGE_SEARCH_CHARS, so a window starts where a pre-token does. */
function toBoundary(text: string, index: number): number {
  const limit = Math.min(text.length, index + EDGE_SEARCH_CHARS);
  for (let i = index; i < limit; i++) if (isSpace(text.charCodeAt(i))) return i;
  return index;
}

function estimateLong(text: string): number {
  const stride = (text.length - SAMPLE_CHARS) / (SAMPLE_COUNT - 1);
  let tokens = 0;
  let chars = 0;
  for (let i = 0; i < SAMPLE_COUNT; i++) {
    const start = toBoundary(text, Math.floor(i * stride));
    const end = toBoundary(text, Math.min(text.length, start + SAMPLE_CHARS));
    const window = text.slice(start, end);
    tokens += countO200k(window, ENCODE_OPTIONS);
    chars += window.length;
  }
  return chars === 0 ? 0 : Math.round((tokens / chars) * text.length);
}

function countString(text: string): number {
  if (text.length === 0) return 0;
  return text.length <= EXACT_MAX_CHARS ? countO200k(text, ENCODE_OPTIONS) : estimateLong(text);
}

/** JSON text of any value: BigInt as a string, a repeated object as "[Circular]"; never throws. */
function toJson(value: unknown): string | undefined {
  const bigints = (_key: string, v: unknown): unknown => (typeof v === 'bigint' ? v.toString() : v);
  try {
    return JSON.stringify(value, bigints);
  } catch {
    const seen = new WeakSet<object>();
    try {
      return JSON.stringify(value, (key, v: unknown) => {
        const plain = bigints(key, v);
        if (typeof plain === 'object' && plain !== null) {
          if (seen.has(plain)) return '[Circular]';
          seen.add(plain);
        }
        return plain;
      });
    } catch {
      // A throwing toJSON or getter: the value has no JSON form worth counting.
      return undefined;
    }
  }
}

/**
 * Tokens of a value as a model would see it: a string as is, anything else as its JSON
 * (`undefined` and functions count 0). Exact up to {@link EXACT_MAX_CHARS} characters,
 * estimated from samples beyond (see the file comment).
 */
export function countTokens(value: unknown): number {
  if (typeof value === 'string') return countString(value);
  const json = toJson(value);
  return json === undefined ? 0 : countString(json);
}

/** One call's figures: tokens pulled in from tools and files, tokens returned, and the saving. */
export interface ContextSavings {
  tokens_in: number;
  tokens_out: number;
  /** max(0, tokens_in − tokens_out): a call that returns more than it read saved nothing, and cost nothing extra either. */
  tokens_saved: number;
}

export interface TokenTotals extends ContextSavings {
  calls: number;
}

function checkCount(value: number, name: string): void {
  if (!Number.isInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer, got ${String(value)}`);
}

/** The saving of one call, by the same rule the ledger totals. */
export function contextSavings(tokensIn: number, tokensOut: number): ContextSavings {
  checkCount(tokensIn, 'tokensIn');
  checkCount(tokensOut, 'tokensOut');
  return { tokens_in: tokensIn, tokens_out: tokensOut, tokens_saved: Math.max(0, tokensIn - tokensOut) };
}

/** Running totals of context savings, for get_execution_stats. */
export class TokenLedger {
  #calls = 0;
  #in = 0;
  #out = 0;
  #saved = 0;

  /** Records one call; returns its own figures. */
  add(tokensIn: number, tokensOut: number): ContextSavings {
    const call = contextSavings(tokensIn, tokensOut);
    this.#calls++;
    this.#in += call.tokens_in;
    this.#out += call.tokens_out;
    this.#saved += call.tokens_saved;
    return call;
  }

  totals(): TokenTotals {
    return { calls: this.#calls, tokens_in: this.#in, tokens_out: this.#out, tokens_saved: this.#saved };
  }
}
