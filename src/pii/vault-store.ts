// Agents' PII vaults, written once above the shared-store primitives (src/store/shared-store.ts):
// in memory for one daemon (journaled to pii.vaultDir, vault-disk.ts) or in Redis for a cluster,
// with the same rules either way. A vault is one agent's HMAC secret and its token -> value
// entries: a value gets the same token every time for its agent (derived, tokens.ts), a token
// restores for that agent only and lasts pii.tokenTtlSeconds after it was last issued, and a
// failed restore says why (unknown, expired), where another agent's token reads as unknown (no
// oracle for what other vaults hold). Each agent's vault is bounded in bytes
// (pii.maxVaultBytesPerAgent): values issued within the token lifetime are charged to it, and a
// new value past it is refused with STORE_FULL naming the option; tokens already issued keep
// restoring. Store keys name a hash of the agent, never the agent.

import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { MemoryStore } from '../store/memory-store.js';
import type { SharedStore } from '../store/shared-store.js';
import { StoreError } from '../util/store-error.js';
import { findPiiYielding } from './detect-chunked.js';
import { sortTypes } from './detectors.js';
import type { DetokenizeResult, DetokenizeValueResult, PiiMatch, PiiType, PiiVaultsStats, TokenizeResult, UnrestorableReason } from './pii-types.js';
import { replaceMatches } from './replace-matches.js';
import { TOKEN_RE, tokenCandidate } from './tokens.js';
import { keys, pairKey, restore, splitPair, tokenIn } from './vault-keys.js';
import type { VaultKeys } from './vault-keys.js';
import { VaultDisk } from './vault-disk.js';
import { vaultFileId } from './vault-journal.js';
import type { VaultRecord } from './vault-journal.js';
import { mapStrings, stringsIn } from './walk.js';

/** Who a vault belongs to. */
export interface VaultOwner {
  /** MCP session id (HTTP) or a generated one (stdio, exec); vaults follow agents, so it only labels the call. */
  sessionId: string;
  /** Agent name ('local' without agents): the key of the agent's vault. */
  agent: string;
}

export interface VaultStore {
  /** The shared store's kind: 'memory' (this process) or 'redis' (shared by the daemons of a cluster). */
  readonly kind: 'memory' | 'redis';
  /** Replaces every PII value in text by its token; long texts are scanned in slices. */
  tokenize(owner: VaultOwner, text: string): Promise<TokenizeResult>;
  /** Replaces the owner's tokens by their values; unknown token-shaped strings are reported. */
  detokenize(owner: VaultOwner, text: string): Promise<DetokenizeResult>;
  /** tokenize for every string (and key) inside a JSON-shaped value. */
  tokenizeValue(owner: VaultOwner, value: unknown): Promise<unknown>;
  /** detokenize for every string (and key) inside a JSON-shaped value. */
  detokenizeValue(owner: VaultOwner, value: unknown): Promise<DetokenizeValueResult>;
  /** The session ended; vaults follow agents, so nothing is dropped. */
  dropSession(owner: VaultOwner): Promise<void>;
  /** Counts only, never values: agents this process served, tokens and bytes their vaults hold. */
  stats(): Promise<PiiVaultsStats>;
  /** Forgets what this process holds; idempotent. */
  close(): Promise<void>;
}

/** How long a token restores after it was last issued, by default: a day. */
export const DEFAULT_TOKEN_TTL_SECONDS = 86_400;
/** Bytes one agent's vault may hold by default (pii.maxVaultBytesPerAgent): 16 MiB. */
export const DEFAULT_MAX_VAULT_BYTES = 16 * 1024 * 1024;
/** Charged per token beside its value: the token, its keys, its expiry marker and its journal line. */
export const VAULT_ENTRY_OVERHEAD_BYTES = 160;
/** How long past its expiry a token is remembered, to say "expired" rather than "unknown", ms. */
const REMEMBER_MS = 24 * 3_600_000;
/** Charges are counted in this many time buckets per token lifetime (each lapses a lifetime after it closes). */
const BUCKETS_PER_TTL = 24;
/** Collision retries per value before giving up (a 32-bit token collides once in billions). */
const MAX_ATTEMPTS = 16;
const SECRET_BYTES = 32;

export interface PiiVaultStoreOptions {
  /** Where vaults live; default: a new in-memory store (this process). */
  store?: SharedStore;
  /** How long a token restores after it was last issued, seconds (pii.tokenTtlSeconds). */
  tokenTtlSeconds?: number;
  /** Bytes one agent's vault may hold (pii.maxVaultBytesPerAgent). */
  maxBytesPerAgent?: number;
  /** The folder of the agents' sealed vault files (pii.vaultDir), for a store that keeps nothing past its process. */
  dir?: string;
  /** Epoch clock, ms (tests). Default Date.now. */
  now?: () => number;
}

interface Pending {
  type: PiiType;
  value: string;
  attempt: number;
}

export class PiiVaultStore implements VaultStore {
  readonly kind: 'memory' | 'redis';
  readonly #store: SharedStore;
  readonly #ttlMs: number;
  readonly #maxBytes: number;
  readonly #now: () => number;
  readonly #disk: VaultDisk | undefined;
  /** Agents' files being read into the store, once per process each. */
  readonly #loads = new Map<string, Promise<void>>();
  /** Agents this process served recently, for stats only. */
  readonly #seen = new LRUCache<string, string>({ max: 10_000 });

  constructor(options: PiiVaultStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#store = options.store ?? new MemoryStore({ now: this.#now });
    this.kind = this.#store.kind;
    this.#ttlMs = positive('tokenTtlSeconds', options.tokenTtlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS) * 1000;
    this.#maxBytes = positive('maxBytesPerAgent', options.maxBytesPerAgent ?? DEFAULT_MAX_VAULT_BYTES);
    if (options.dir !== undefined) this.#disk = new VaultDisk(options.dir, this.#now);
  }

  async tokenize(owner: VaultOwner, text: string): Promise<TokenizeResult> {
    const agent = agentOf(owner);
    const matches = await findPiiYielding(text, agent);
    if (matches.length === 0) return { text, found: 0, types: [] };
    const tokens = await this.#tokensFor(agent, matches);
    return replaceMatches(text, matches, tokenIn(tokens));
  }

  async tokenizeValue(owner: VaultOwner, value: unknown): Promise<unknown> {
    const agent = agentOf(owner);
    const all: PiiMatch[] = [];
    const byString = new Map<string, readonly PiiMatch[]>();
    for (const s of stringsIn(value)) {
      if (byString.has(s)) continue;
      const matches = await findPiiYielding(s, agent);
      byString.set(s, matches);
      all.push(...matches);
    }
    if (all.length === 0) return mapStrings(value, (s) => s);
    const tokens = await this.#tokensFor(agent, all);
    return mapStrings(value, (s) => {
      const matches = byString.get(s);
      return matches !== undefined && matches.length > 0 ? replaceMatches(s, matches, tokenIn(tokens)).text : s;
    });
  }

  async detokenize(owner: VaultOwner, text: string): Promise<DetokenizeResult> {
    const { known, reasons } = await this.#lookup(agentOf(owner), [text]);
    const unknown = new Set<string>();
    const types = new Set<PiiType>();
    const restored = restore(text, known, unknown, types);
    return { text: restored, unknown: [...unknown], ...(reasons && { reasons }), types: sortTypes(types) };
  }

  async detokenizeValue(owner: VaultOwner, value: unknown): Promise<DetokenizeValueResult> {
    const { known, reasons } = await this.#lookup(agentOf(owner), stringsIn(value));
    const unknown = new Set<string>();
    const types = new Set<PiiType>();
    const restored = mapStrings(value, (s) => restore(s, known, unknown, types));
    return { value: restored, unknown: [...unknown], ...(reasons && { reasons }), types: sortTypes(types) };
  }

  async dropSession(_owner: VaultOwner): Promise<void> {}

  async stats(): Promise<PiiVaultsStats> {
    const ids = [...this.#seen.values()];
    let tokens = 0;
    let bytes = 0;
    for (const id of ids) {
      const { totals } = await this.#store.count([keys(id).tokens, keys(id).bytes].map((key) => ({ key, part: '-', change: { add: 0 } })));
      tokens += totals[0] ?? 0;
      bytes += totals[1] ?? 0;
    }
    return { sessions: ids.length, tokens, bytes, max_bytes_per_agent: this.#maxBytes };
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.#loads.values()]);
    this.#seen.clear();
  }

  /** Reads the agent's file into the store on first use (journaled vaults only). */
  #fromDisk(id: string): Promise<void> {
    const disk = this.#disk;
    if (disk === undefined) return Promise.resolve();
    let loading = this.#loads.get(id);
    if (loading === undefined) {
      loading = (async () => {
        const loaded = await disk.load(id);
        if (loaded === undefined) return;
        const k = keys(id);
        await this.#store.set([{ key: k.secret, value: Buffer.from(loaded.secret).toString('hex'), ttlMs: this.#secretTtlMs, ifAbsent: true }]);
        const live = await this.#apply(k, loaded.records);
        // What the file holds counts against the budget as if issued now (the store forgot the charges).
        if (live.length > 0) await this.#charge(k, live.reduce((sum, r) => sum + entryBytes(r.token, r.value), 0), live.length, false);
      })();
      // A read that failed is tried again on the next use.
      loading.catch(() => this.#loads.delete(id));
      this.#loads.set(id, loading);
    }
    return loading;
  }

  /** Puts tokens read from disk into the store (live ones restorable, expired ones remembered as such); returns the live ones. */
  async #apply(k: VaultKeys, records: readonly VaultRecord[]): Promise<VaultRecord[]> {
    const now = this.#now();
    const live = records.filter((r) => r.expiresAt > now);
    const remembered = records.filter((r) => r.expiresAt + REMEMBER_MS > now);
    await this.#store.set([
      ...live.map((r) => ({ key: k.token(r.token), value: pairKey(r.type, r.value), ttlMs: r.expiresAt - now })),
      ...remembered.map((r) => ({ key: k.issued(r.token), value: '1', ttlMs: r.expiresAt + REMEMBER_MS - now })),
    ]);
    return live;
  }

  /** The agent's vault id and secret (created on first use, shared by every process on the store). */
  /** The secret lives while any of its tokens is live or remembered as expired: a value issued again gets its token back. */
  get #secretTtlMs(): number {
    return this.#ttlMs + REMEMBER_MS;
  }

  async #open(agent: string): Promise<{ id: string; secret: Buffer }> {
    const id = vaultFileId(agent);
    this.#seen.set(agent, id);
    await this.#fromDisk(id);
    const key = keys(id).secret;
    for (let attempt = 0; attempt < 3; attempt++) {
      const [held] = await this.#store.get([key]);
      if (held !== undefined) {
        // Renewed with use: it outlives every token derived from it, by as long as expired tokens are remembered.
        if (held.expiresAt - this.#now() < this.#secretTtlMs * 0.9) await this.#store.set([{ key, value: held.value, ttlMs: this.#secretTtlMs }]);
        return { id, secret: Buffer.from(held.value, 'hex') };
      }
      // On disk first when journaled: another process on the folder may have made it (its secret wins).
      const secret = (await this.#disk?.create(id, randomBytes(SECRET_BYTES))) ?? randomBytes(SECRET_BYTES);
      const [won] = await this.#store.set([{ key, value: Buffer.from(secret).toString('hex'), ttlMs: this.#secretTtlMs, ifAbsent: true }]);
      if (won === true) return { id, secret: Buffer.from(secret) };
    }
    throw new StoreError('STORE_UNAVAILABLE', 'the PII vault could not be created; retry');
  }

  /** The token of every distinct (type, value) in `matches`, issuing the missing ones within the agent's budget. */
  async #tokensFor(agent: string, matches: readonly PiiMatch[]): Promise<Map<string, string>> {
    const { id, secret } = await this.#open(agent);
    const k = keys(id);
    const out = new Map<string, string>();
    const journal: VaultRecord[] = [];
    let pending = new Map<string, Pending>();
    for (const m of matches) pending.set(pairKey(m.type, m.value), { type: m.type, value: m.value, attempt: 0 });
    for (let round = 0; pending.size > 0; round++) {
      if (round > MAX_ATTEMPTS * 2) throw new StoreError('STORE_UNAVAILABLE', 'the PII vault is too contended to issue tokens; retry');
      const items = [...pending];
      const candidates = items.map(([, p]) => {
        if (p.attempt >= MAX_ATTEMPTS) throw new Error(`PII token space exhausted after ${MAX_ATTEMPTS} attempts`);
        return tokenCandidate(secret, p.type, p.value, p.attempt);
      });
      const held = await this.#store.get(candidates.map((t) => k.token(t)));
      const now = this.#now();
      const next = new Map<string, Pending>();
      const create: { pair: string; token: string; p: Pending }[] = [];
      const renew: { pair: string; token: string }[] = [];
      items.forEach(([pair, p], i) => {
        const token = candidates[i] as string;
        const h = held[i];
        if (h === undefined) create.push({ pair, token, p });
        else if (h.value !== pair) next.set(pair, { ...p, attempt: p.attempt + 1 });
        else {
          out.set(pair, token);
          // Issued again: it lasts another lifetime (written once a tenth of it has passed).
          if (h.expiresAt - now < this.#ttlMs * 0.9) renew.push({ pair, token });
        }
      });
      if (create.length > 0) {
        const bytes = create.reduce((sum, c) => sum + entryBytes(c.token, c.p.value), 0);
        const charged = await this.#charge(k, bytes, create.length, true);
        if (!charged.ok) throw this.#full(charged.total, bytes);
        const written = await this.#store.set(create.map((c) => ({ key: k.token(c.token), value: c.pair, ttlMs: this.#ttlMs, ifAbsent: true })));
        create.forEach((c, i) => {
          // Not written: another writer took the token meanwhile; the next round reads whose it is.
          if (written[i] !== true) {
            next.set(c.pair, c.p);
            return;
          }
          out.set(c.pair, c.token);
          journal.push({ token: c.token, type: c.p.type, value: c.p.value, expiresAt: now + this.#ttlMs });
        });
      }
      // A renewal is charged too (its first charge lapses before it would); past the budget the token keeps its expiry.
      if (renew.length > 0 && (await this.#charge(k, renew.reduce((sum, r) => sum + entryBytes(r.token, splitPair(r.pair).value), 0), 0, true)).ok) {
        await this.#store.set(renew.map((r) => ({ key: k.token(r.token), value: r.pair, ttlMs: this.#ttlMs })));
        for (const r of renew) journal.push({ ...splitPair(r.pair), token: r.token, expiresAt: now + this.#ttlMs });
      }
      pending = next;
    }
    const issued = journal.map((r) => ({ key: k.issued(r.token), value: '1', ttlMs: this.#ttlMs + REMEMBER_MS }));
    await this.#store.set(issued);
    // On disk before the call returns: nothing acknowledged is lost.
    await this.#disk?.append(id, journal);
    return out;
  }

  /** Charges `bytes` and `tokens` to the agent's vault in the current time bucket; refused past the budget when `limited`. */
  async #charge(k: VaultKeys, bytes: number, tokens: number, limited: boolean): Promise<{ ok: boolean; total: number }> {
    const bucketMs = Math.max(1_000, Math.floor(this.#ttlMs / BUCKETS_PER_TTL));
    const part = String(Math.floor(this.#now() / bucketMs));
    // A charge lives as long as the tokens it paid for may: a lifetime past the end of its bucket.
    const lifetime = { partTtlMs: this.#ttlMs + bucketMs, ttlMs: this.#ttlMs + bucketMs };
    const charged = await this.#store.count([
      { key: k.bytes, part, change: { add: bytes }, ...lifetime, ...(limited ? { limit: this.#maxBytes } : {}) },
      { key: k.tokens, part, change: { add: tokens }, ...lifetime },
    ]);
    return { ok: charged.ok, total: charged.totals[0] ?? 0 };
  }

  #full(held: number, asked: number): StoreError {
    return new StoreError(
      'STORE_FULL',
      `this agent's PII vault holds ${held} bytes of values issued in the last ${this.#ttlMs / 1000} s and may hold ${this.#maxBytes} (pii.maxVaultBytesPerAgent); ` +
        `${asked} more bytes of new values were not tokenized. Tokens already issued still restore; new values fit again as older tokens expire (pii.tokenTtlSeconds), or ask the operator to raise pii.maxVaultBytesPerAgent`,
    );
  }

  /** The values of every token in `texts` this agent's vault holds, and why the others do not restore. */
  async #lookup(agent: string, texts: readonly string[]): Promise<{ known: Map<string, { type: PiiType; value: string }>; reasons?: Record<string, UnrestorableReason> }> {
    const tokens = new Set<string>();
    for (const text of texts) if (text.includes('[')) for (const m of text.matchAll(TOKEN_RE)) tokens.add(m[0]);
    const known = new Map<string, { type: PiiType; value: string }>();
    if (tokens.size === 0) return { known };
    const id = vaultFileId(agent);
    this.#seen.set(agent, id);
    await this.#fromDisk(id);
    const k = keys(id);
    const read = async (list: readonly string[]): Promise<string[]> => {
      const held = await this.#store.get(list.map((t) => k.token(t)));
      const missed: string[] = [];
      list.forEach((token, i) => {
        const h = held[i];
        if (h === undefined) missed.push(token);
        else known.set(token, splitPair(h.value));
      });
      return missed;
    };
    let missed = await read([...tokens]);
    // Another process on the vault folder may have issued them since this one last read its file.
    if (missed.length > 0 && this.#disk !== undefined) {
      const found = await this.#apply(k, await this.#disk.since(id));
      if (found.some((r) => missed.includes(r.token))) missed = await read(missed);
    }
    if (missed.length === 0) return { known };
    const marks = await this.#store.get(missed.map((t) => k.issued(t)));
    const reasons: Record<string, UnrestorableReason> = {};
    missed.forEach((token, i) => {
      reasons[token] = marks[i] !== undefined ? 'expired' : 'unknown';
    });
    return { known, reasons };
  }
}

/** Why tokens did not restore, for a message: never the value, never whose they are. */
export function describeUnrestorable(unknown: readonly string[], reasons: Readonly<Record<string, UnrestorableReason>> | undefined): string {
  const words: Record<UnrestorableReason, string> = {
    unknown: 'unknown to this agent (never issued to it, or forgotten long after it expired)',
    expired: 'expired (a token restores for pii.tokenTtlSeconds after it was last issued; tokenize the value again)',
  };
  return unknown
    .slice(0, 3)
    .map((t) => `${t} is ${words[reasons?.[t] ?? 'unknown']}`)
    .join('; ');
}

function agentOf(owner: VaultOwner): string {
  const agent = (owner as Partial<VaultOwner> | undefined)?.agent;
  if (typeof agent !== 'string' || agent.length === 0) throw new TypeError("the vault owner's agent must be a non-empty string");
  return agent;
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

/** What one token costs its agent's budget. */
function entryBytes(token: string, value: string): number {
  return Buffer.byteLength(value) + token.length + VAULT_ENTRY_OVERHEAD_BYTES;
}
