// Token accounting with a real tokenizer (o200k_base, the GPT-4o / GPT-5 family encoding), so the
// context saving of running code instead of calling tools is measured per call, not quoted.
//
// Cost bound: this runs on the coordinator's event loop, on guest-controlled data, so no count may
// take long. Two costs: BPE is quadratic in the length of one pre-token, and a long run of letters
// or of punctuation is one pre-token (256 KiB of it took 65–150 s), so such runs are tokenized in
// MAX_RUN_CHARS pieces (a merge across a piece edge is lost: a fraction of a percent); and BPE
// costs 0.07 µs a character on repetitive JSON but about 2 µs on random letters, so text is counted
// in CHUNK_CHARS chunks until TIME_BUDGET_MS has passed, and the rest is scaled from SAMPLE_COUNT
// windows spread over it. Worst case about 30 ms a value; a figure that is not exact says so.
//
// The tokenizer's tables are loaded on first use, not at start (about 1 s and 70 MB, which every
// daemon would otherwise pay before listening): measureTokens loads them on its first count;
// the daemon's measureTokensWhenLoaded guesses until they are loaded, after its first call.
// gpt-tokenizer is an optional dependency: without it every figure is the length-based guess,
// marked estimated.
import { createRequire } from 'node:module';
import { OPTIONAL_PACKAGES, isMissingPackage } from './optional-package.js';

type CountO200k = (text: string, options: { disallowedSpecial: Set<string> }) => number;
/** The tokenizer once loaded; null when the package is not installed; undefined before the first count. */
let tokenizer: CountO200k | null | undefined;

function loadTokenizer(): CountO200k | null {
  if (tokenizer === undefined) {
    try {
      tokenizer = (createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as { countTokens: CountO200k }).countTokens;
    } catch (error) {
      if (!isMissingPackage(error, OPTIONAL_PACKAGES.tokenizer.name)) throw error;
      tokenizer = null;
    }
  }
  return tokenizer;
}

/** Whether exact counts are possible (gpt-tokenizer installed); does not load it. */
export function tokenizerInstalled(): boolean {
  if (tokenizer !== undefined) return tokenizer !== null;
  try {
    createRequire(import.meta.url).resolve('gpt-tokenizer/encoding/o200k_base');
    return true;
  } catch {
    return false;
  }
}

function countO200k(text: string, options: { disallowedSpecial: Set<string> }): number {
  return (loadTokenizer() as CountO200k)(text, options);
}

/** Longest run of letters (or of punctuation) tokenized in one piece, characters. */
export const MAX_RUN_CHARS = 128;
/** Counting time after which the rest of a string is estimated from samples, ms. */
export const TIME_BUDGET_MS = 20;
const CHUNK_CHARS = 2 * 1024;
const SAMPLE_COUNT = 8;
const SAMPLE_CHARS = 512;
/** How far a chunk or sample edge moves to land where a pre-token starts, characters. */
const EDGE_SEARCH_CHARS = 64;

// Special-token text such as "<|endoftext|>" inside data is just text here; the library's
// default is to throw on it.
const ENCODE_OPTIONS = { disallowedSpecial: new Set<string>() };

/** A token figure and whether it is exact. */
export interface TokenCount {
  tokens: number;
  /** True when a long run was tokenized in pieces or part of the figure was scaled from samples. */
  estimated: boolean;
}

const BREAK = 0;
const LETTER = 1;
const PUNCT = 2;

/**
 * The pre-token class of a UTF-16 unit, cheaply: whitespace and digits end pre-tokens (the
 * tokenizer splits digits into groups of three), letters and punctuation form runs. Units past
 * ASCII count as letters, as most of them are.
 */
function classOf(code: number): number {
  if (code <= 0x20 || (code >= 0x30 && code <= 0x39)) return BREAK;
  if ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code >= 0x80) return LETTER;
  return PUNCT;
}

/**
 * Whether a pre-token surely starts at `i`: a space or tab after non-whitespace (not a line break:
 * punctuation swallows the line breaks after it), a digit after a non-digit, or punctuation (not
 * an apostrophe, which may start a contraction) after a letter.
 */
function isCut(text: string, i: number): boolean {
  const code = text.charCodeAt(i);
  const before = text.charCodeAt(i - 1);
  if (code === 0x20 || code === 0x09) return before > 0x20;
  if (code < 0x20) return false;
  if (code >= 0x30 && code <= 0x39) return !(before >= 0x30 && before <= 0x39);
  return code !== 0x27 && classOf(code) === PUNCT && classOf(before) === LETTER;
}

/** Moves `index` forward to a sure pre-token start within EDGE_SEARCH_CHARS; `exact` is false when none was found. */
function toBoundary(text: string, index: number): { index: number; exact: boolean } {
  if (index >= text.length) return { index: text.length, exact: true };
  const limit = Math.min(text.length, index + EDGE_SEARCH_CHARS);
  for (let i = Math.max(1, index); i < limit; i++) if (isCut(text, i)) return { index: i, exact: true };
  return { index, exact: false };
}

/** Tokens of `text`, tokenizing runs longer than MAX_RUN_CHARS in pieces (the rest in as few calls as possible). */
function countBounded(text: string): TokenCount {
  let tokens = 0;
  let estimated = false;
  let flushed = 0;
  let runStart = 0;
  let runClass = BREAK;
  const n = text.length;
  for (let i = 0; i <= n; i++) {
    const cls = i < n ? classOf(text.charCodeAt(i)) : BREAK;
    if (cls === runClass && cls !== BREAK) continue;
    if (runClass !== BREAK && i - runStart > MAX_RUN_CHARS) {
      if (runStart > flushed) tokens += countO200k(text.slice(flushed, runStart), ENCODE_OPTIONS);
      for (let p = runStart; p < i; p += MAX_RUN_CHARS) tokens += countO200k(text.slice(p, Math.min(i, p + MAX_RUN_CHARS)), ENCODE_OPTIONS);
      flushed = i;
      estimated = true;
    }
    runStart = i;
    runClass = cls;
  }
  if (flushed < n) tokens += countO200k(flushed === 0 ? text : text.slice(flushed), ENCODE_OPTIONS);
  return { tokens, estimated };
}

/** Tokens of text[from, to) scaled from SAMPLE_COUNT windows spread over it. */
function estimateRange(text: string, from: number, to: number): number {
  const length = to - from;
  if (length <= SAMPLE_COUNT * SAMPLE_CHARS) return countBounded(text.slice(from, to)).tokens;
  const stride = (length - SAMPLE_CHARS) / (SAMPLE_COUNT - 1);
  let tokens = 0;
  let chars = 0;
  for (let i = 0; i < SAMPLE_COUNT; i++) {
    const start = toBoundary(text, from + Math.floor(i * stride)).index;
    const end = Math.min(to, toBoundary(text, Math.min(to, start + SAMPLE_CHARS)).index);
    if (end <= start) continue;
    tokens += countBounded(text.slice(start, end)).tokens;
    chars += end - start;
  }
  return chars === 0 ? 0 : Math.round((tokens / chars) * length);
}

function countString(text: string): TokenCount {
  const n = text.length;
  if (n <= CHUNK_CHARS) return countBounded(text);
  const started = performance.now();
  let tokens = 0;
  let estimated = false;
  let pos = 0;
  while (pos < n) {
    if (performance.now() - started > TIME_BUDGET_MS) {
      return { tokens: tokens + estimateRange(text, pos, n), estimated: true };
    }
    const edge = toBoundary(text, pos + CHUNK_CHARS);
    const end = edge.index > pos ? edge.index : Math.min(n, pos + CHUNK_CHARS);
    const chunk = countBounded(text.slice(pos, end));
    tokens += chunk.tokens;
    estimated ||= chunk.estimated || !edge.exact;
    pos = end;
  }
  return { tokens, estimated };
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
 * (`undefined` and functions count 0), with whether the figure is exact (see the file comment).
 */
export function measureTokens(value: unknown, budget?: CountBudget): TokenCount {
  return measure(value, budget, true);
}

/** {@link measureTokens} without ever loading the tokenizer: the length guess, marked estimated, until something else loaded it (exec, which exits before a load would pay off). */
export function estimateTokens(value: unknown, budget?: CountBudget): TokenCount {
  return measure(value, budget, false);
}

/** After the first count, how long the daemon waits before it loads the tokenizer, ms (off that call's path). */
export const TOKENIZER_LOAD_DELAY_MS = 50;
let loadScheduled = false;
let loadTimer: NodeJS.Timeout | undefined;

/**
 * {@link measureTokens} for the daemon: it never loads the tokenizer inside a call (about 1 s of
 * the coordinator's time, which would land in that call's execution_time_ms). Until the tables
 * are loaded, figures are the length guess, marked estimated; the first count schedules the load
 * TOKENIZER_LOAD_DELAY_MS later, after that call's answer has gone.
 */
export function measureTokensWhenLoaded(value: unknown, budget?: CountBudget): TokenCount {
  prepareTokenizer();
  return measure(value, budget, false);
}

/**
 * Loads the tokenizer TOKENIZER_LOAD_DELAY_MS from now, once. The daemon calls it when an MCP
 * session opens: the load (about 1 s on the event loop) then falls in that client's handshake,
 * not in the middle of other agents' calls; the first count calls it too.
 */
export function prepareTokenizer(): void {
  if (tokenizer !== undefined || loadScheduled) return;
  loadScheduled = true;
  loadTimer = setTimeout(() => loadTokenizer(), TOKENIZER_LOAD_DELAY_MS).unref();
}

/**
 * Drops a scheduled load that has not started, and schedules none after: a process that is
 * stopping would only see its exit delayed by it (about 1 s on the event loop).
 */
export function cancelTokenizerLoad(): void {
  loadScheduled = true;
  clearTimeout(loadTimer);
}

function measure(value: unknown, budget: CountBudget | undefined, load: boolean): TokenCount {
  const text = typeof value === 'string' ? value : toJson(value);
  if (text === undefined || text.length === 0) return { tokens: 0, estimated: false };
  const ready = load ? loadTokenizer() !== null : typeof tokenizer === 'function';
  if (!ready || (budget && budget.spentMs >= CALL_BUDGET_MS)) return { tokens: Math.ceil(text.length / CHARS_PER_TOKEN_GUESS), estimated: true };
  const started = performance.now();
  const count = countString(text);
  if (budget) budget.spentMs += performance.now() - started;
  return count;
}

/** Counting time one call may spend on its many payloads before the rest is guessed from length, ms. */
export const CALL_BUDGET_MS = 100;
/** Characters per token of the length-only guess (ordinary English and JSON run 3.5–4.5). */
const CHARS_PER_TOKEN_GUESS = 4;

/** Counting time spent for one call (a guest reading the same big file a thousand times). */
export interface CountBudget {
  spentMs: number;
}

/** {@link measureTokens} as a bare number. */
export function countTokens(value: unknown): number {
  return measureTokens(value).tokens;
}

/** One call's figures: tokens pulled in from tools and files, tokens returned, and the saving. */
export interface ContextSavings {
  tokens_in: number;
  tokens_out: number;
  /** max(0, tokens_in − tokens_out): a call that returns more than it read saved nothing, and cost nothing extra either. */
  tokens_saved: number;
  /** Present (true) when a figure was estimated rather than counted exactly. */
  estimated?: boolean;
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
