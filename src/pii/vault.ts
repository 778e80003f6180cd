// One agent's vault: turns PII into tokens and back. Only this vault can restore its tokens,
// because only it holds the values and the HMAC secret. Bounded: past `maxEntries` tokens the
// least recently used are forgotten, and a forgotten token is reported as unknown. With a TTL a
// token lasts that long after it was last issued; an expired token is reported as expired (its
// value is gone; tokenizing the value again brings back the same token).

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
  UnrestorableReason,
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
  /** Epoch milliseconds after which the token no longer restores (Infinity without a TTL). */
  expiresAt: number;
  prev: Entry | undefined;
  next: Entry | undefined;
}

function checkPositiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

/** A token as a vault's journal keeps it (see vault-journal.ts). */
export interface VaultRecord {
  token: string;
  type: PiiType;
  value: string;
  expiresAt: number;
}

export class PiiVault {
  readonly #secret: Uint8Array;
  readonly #maxEntries: number;
  readonly #ttlMs: number;
  readonly #now: () => number;
  /** Tokens that expired, with when: a restore of one says so. Bounded like the entries. */
  readonly #expired = new Map<string, number>();
  /** Tokens issued or renewed since the last takeChanges(), for the journal. */
  #changed = new Map<string, Entry>();
  readonly #byToken = new Map<string, Entry>();
  readonly #byValue = new Map<string, Entry>();
  /**
   * Least and most recently used entries of a doubly linked list: using a token moves it to the
   * end with a few pointer writes, where re-inserting into a Map of 100,000 keys would not be cheap.
   */
  #oldest: Entry | undefined;
  #newest: Entry | undefined;

  /** Its owner's turn on the PII helper thread (PiiVaultOptions.turn). */
  readonly #turn: string | undefined;

  constructor(options: PiiVaultOptions = {}) {
    this.#maxEntries = checkPositiveInteger('maxEntries', options.maxEntries ?? DEFAULT_MAX_TOKENS);
    if (options.secret !== undefined && options.secret.length < SECRET_BYTES) {
      throw new RangeError(`secret must be at least ${SECRET_BYTES} bytes, got ${options.secret.length}`);
    }
    this.#secret = options.secret !== undefined ? Uint8Array.from(options.secret) : randomBytes(SECRET_BYTES);
    this.#ttlMs = options.ttlMs ?? Infinity;
    if (!(this.#ttlMs > 0)) throw new RangeError(`ttlMs must be positive, got ${this.#ttlMs}`);
    this.#now = options.now ?? Date.now;
    this.#turn = options.turn;
  }

  /** The HMAC key, for the journal (sealed there); never shown to anyone. */
  get secret(): Uint8Array {
    return this.#secret;
  }

  /** Whether the vault holds a live token (a journal catch-up skips what it already holds). */
  holds(token: string): boolean {
    const entry = this.#byToken.get(token);
    return entry !== undefined && entry.expiresAt > this.#now();
  }

  /** Why a token does not restore here: it expired, or this vault never knew it (or forgot it). */
  whyNot(token: string): UnrestorableReason {
    return this.#expired.has(token) ? 'expired' : 'unknown';
  }

  /** Tokens issued or renewed since the last call; the journal appends them. */
  takeChanges(): VaultRecord[] {
    const out = [...this.#changed.values()].map(({ token, type, value, expiresAt }) => ({ token, type, value, expiresAt }));
    this.#changed = new Map();
    return out;
  }

  /** Every live token, for compacting the journal. */
  records(): VaultRecord[] {
    const now = this.#now();
    const out: VaultRecord[] = [];
    for (let e = this.#oldest; e !== undefined; e = e.next) if (e.expiresAt > now) out.push({ token: e.token, type: e.type, value: e.value, expiresAt: e.expiresAt });
    return out;
  }

  /** Puts back a journal's token (oldest first); an expired one is remembered as expired. */
  restoreRecord(record: VaultRecord): void {
    const existing = this.#byToken.get(record.token);
    if (existing !== undefined) this.#forget(existing);
    if (record.expiresAt <= this.#now()) {
      this.#markExpired(record.token, record.expiresAt);
      return;
    }
    this.#expired.delete(record.token);
    this.#insert(record.token, record.type, record.value, record.expiresAt);
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
    const matches = await findPiiYielding(text, this.#turn);
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
    for (const s of stringsIn(value)) if (!byString.has(s)) byString.set(s, await findPiiYielding(s, this.#turn));
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
    this.#expired.clear();
    this.#changed.clear();
    this.#oldest = undefined;
    this.#newest = undefined;
  }

  #replace(text: string, matches: readonly PiiMatch[]): TokenizeResult {
    return replaceMatches(text, matches, (m) => this.#tokenFor(m.type, m.value));
  }

  #tokenFor(type: PiiType, value: string): string {
    const key = `${type}\0${value}`;
    const now = this.#now();
    const expiresAt = now + this.#ttlMs;
    const existing = this.#byValue.get(key);
    if (existing !== undefined && existing.expiresAt > now) {
      this.#touch(existing);
      // Issued again: it lasts another TTL. The journal hears of it once a tenth of the TTL has passed.
      if (expiresAt - existing.expiresAt > this.#ttlMs / 10) {
        existing.expiresAt = expiresAt;
        this.#changed.set(existing.token, existing);
      }
      return existing.token;
    }
    if (existing !== undefined) this.#forget(existing);
    const token = allocateToken(this.#secret, type, value, (t) => this.#byToken.has(t));
    this.#expired.delete(token);
    this.#changed.set(token, this.#insert(token, type, value, expiresAt));
    return token;
  }

  #insert(token: string, type: PiiType, value: string, expiresAt: number): Entry {
    const key = `${type}\0${value}`;
    const entry: Entry = { token, type, value, key, expiresAt, prev: this.#newest, next: undefined };
    if (this.#newest !== undefined) this.#newest.next = entry;
    else this.#oldest = entry;
    this.#newest = entry;
    this.#byToken.set(token, entry);
    this.#byValue.set(key, entry);
    while (this.#byToken.size > this.#maxEntries && this.#oldest !== undefined) this.#forget(this.#oldest);
    return entry;
  }

  #markExpired(token: string, at: number): void {
    this.#expired.delete(token);
    this.#expired.set(token, at);
    // Oldest first: past the bound, the longest-expired are forgotten (then reported as unknown).
    while (this.#expired.size > this.#maxEntries) this.#expired.delete(this.#expired.keys().next().value as string);
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
    this.#changed.delete(entry.token);
  }

  #restore(text: string, unknown: Set<string>, types: Set<PiiType>): string {
    if (!text.includes('[')) return text;
    return text.replace(TOKEN_RE, (token) => {
      const entry = this.#byToken.get(token);
      if (entry !== undefined && entry.expiresAt <= this.#now()) {
        this.#forget(entry);
        this.#markExpired(token, entry.expiresAt);
        unknown.add(token);
        return token;
      }
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
