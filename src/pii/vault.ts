// One session's vault: turns PII into tokens and back. Only this vault can restore its tokens,
// because only it holds the values and the HMAC secret. Bounded: past `maxEntries` tokens the
// least recently used are forgotten, and a forgotten token is reported as unknown.

import { randomBytes } from 'node:crypto';
import { findPii, piiTypesIn, sortTypes } from './detectors.js';
import { findPiiYielding } from './detect-chunked.js';
import type {
  DetokenizeResult,
  DetokenizeValueResult,
  PiiMatch,
  PiiType,
  PiiVaultOptions,
  TokenizeResult,
} from './pii-types.js';
import { allocateToken, TOKEN_RE } from './tokens.js';
import { replaceMatches } from './replace-matches.js';
import { mapStrings, stringsIn } from './walk.js';

/** Tokens kept per vault by default. */
export const DEFAULT_MAX_TOKENS = 100_000;
/** Bytes of HMAC key. */
export const SECRET_BYTES = 32;

/** A token's value, linked into the recency list (older towards `prev`). */
interface Entry {
  token: string;
  type: PiiType;
  value: string;
  /** `${type}\0${value}`, the key in #byValue. */
  key: string;
  prev: Entry | undefined;
  next: Entry | undefined;
}

function checkPositiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

export class PiiVault {
  readonly #secret: Uint8Array;
  readonly #maxEntries: number;
  readonly #byToken = new Map<string, Entry>();
  readonly #byValue = new Map<string, Entry>();
  /**
   * Least and most recently used entries of a doubly linked list: using a token moves it to the
   * end with a few pointer writes, where re-inserting into a Map of 100,000 keys would not be cheap.
   */
  #oldest: Entry | undefined;
  #newest: Entry | undefined;

  constructor(options: PiiVaultOptions = {}) {
    this.#maxEntries = checkPositiveInteger('maxEntries', options.maxEntries ?? DEFAULT_MAX_TOKENS);
    if (options.secret !== undefined && options.secret.length < SECRET_BYTES) {
      throw new RangeError(`secret must be at least ${SECRET_BYTES} bytes, got ${options.secret.length}`);
    }
    this.#secret = options.secret !== undefined ? Uint8Array.from(options.secret) : randomBytes(SECRET_BYTES);
  }

  /** Tokens currently held. */
  get size(): number {
    return this.#byToken.size;
  }

  /** Largest number of tokens held before the least recently used are dropped. */
  get maxEntries(): number {
    return this.#maxEntries;
  }

  /** Replaces every PII value in text by its token. */
  tokenize(text: string): TokenizeResult {
    const matches = findPii(text);
    if (matches.length === 0) return { text, found: 0, types: [] };
    return this.#replace(text, matches);
  }

  /**
   * tokenize for texts of any size: a long text is detected in slices with turns of the event
   * loop between them (see detect-chunked.ts), so one agent's megabytes do not stall the others.
   */
  async tokenizeAsync(text: string): Promise<TokenizeResult> {
    const matches = await findPiiYielding(text);
    if (matches.length === 0) return { text, found: 0, types: [] };
    return this.#replace(text, matches);
  }

  /** Replaces every token this vault knows by its value; reports the token-shaped rest. */
  detokenize(text: string): DetokenizeResult {
    const unknown = new Set<string>();
    const types = new Set<PiiType>();
    const restored = this.#restore(text, unknown, types);
    return { text: restored, unknown: [...unknown], types: sortTypes(types) };
  }

  /** The distinct PII types in a raw text, in PII_TYPES order (for flow checks of raw values). */
  typesIn(text: string): PiiType[] {
    return piiTypesIn(text);
  }

  /**
   * Tokenizes JSON-shaped data deeply: strings anywhere in arrays and objects, object keys
   * included (a result grouped by email has emails as keys). Numbers, booleans and null are kept
   * as they are; an object is copied as a plain object of its own enumerable properties.
   */
  tokenizeValue(value: unknown): unknown {
    return mapStrings(value, (s) => this.tokenize(s).text);
  }

  /**
   * tokenizeValue without holding the event loop: every distinct string is detected off the loop
   * (see pii-helper.ts), then the value is copied with the tokens in place.
   */
  async tokenizeValueAsync(value: unknown): Promise<unknown> {
    const byString = new Map<string, readonly PiiMatch[]>();
    for (const s of stringsIn(value)) if (!byString.has(s)) byString.set(s, await findPiiYielding(s));
    return mapStrings(value, (s) => {
      const matches = byString.get(s);
      return matches !== undefined && matches.length > 0 ? this.#replace(s, matches).text : s;
    });
  }

  /** Detokenizes JSON-shaped data deeply, keys included, like tokenizeValue. */
  detokenizeValue(value: unknown): DetokenizeValueResult {
    const unknown = new Set<string>();
    const types = new Set<PiiType>();
    const restored = mapStrings(value, (s) => this.#restore(s, unknown, types));
    return { value: restored, unknown: [...unknown], types: sortTypes(types) };
  }

  /** Forgets every token. */
  clear(): void {
    this.#byToken.clear();
    this.#byValue.clear();
    this.#oldest = undefined;
    this.#newest = undefined;
  }

  #replace(text: string, matches: readonly PiiMatch[]): TokenizeResult {
    return replaceMatches(text, matches, (m) => this.#tokenFor(m.type, m.value));
  }

  #tokenFor(type: PiiType, value: string): string {
    const key = `${type}\0${value}`;
    const existing = this.#byValue.get(key);
    if (existing !== undefined) {
      this.#touch(existing);
      return existing.token;
    }
    const token = allocateToken(this.#secret, type, value, (t) => this.#byToken.has(t));
    const entry: Entry = { token, type, value, key, prev: this.#newest, next: undefined };
    if (this.#newest !== undefined) this.#newest.next = entry;
    else this.#oldest = entry;
    this.#newest = entry;
    this.#byToken.set(token, entry);
    this.#byValue.set(key, entry);
    while (this.#byToken.size > this.#maxEntries && this.#oldest !== undefined) this.#forget(this.#oldest);
    return token;
  }

  /** Marks an entry as the most recently used. */
  #touch(entry: Entry): void {
    if (entry === this.#newest) return;
    this.#unlink(entry);
    entry.prev = this.#newest;
    entry.next = undefined;
    if (this.#newest !== undefined) this.#newest.next = entry;
    this.#newest = entry;
    this.#oldest ??= entry;
  }

  #unlink(entry: Entry): void {
    if (entry.prev !== undefined) entry.prev.next = entry.next;
    else this.#oldest = entry.next;
    if (entry.next !== undefined) entry.next.prev = entry.prev;
    else this.#newest = entry.prev;
  }

  #forget(entry: Entry): void {
    this.#unlink(entry);
    this.#byToken.delete(entry.token);
    this.#byValue.delete(entry.key);
  }

  #restore(text: string, unknown: Set<string>, types: Set<PiiType>): string {
    if (!text.includes('[')) return text;
    return text.replace(TOKEN_RE, (token) => {
      const entry = this.#byToken.get(token);
      if (entry === undefined) {
        unknown.add(token);
        return token;
      }
      this.#touch(entry);
      types.add(entry.type);
      return entry.value;
    });
  }
}
