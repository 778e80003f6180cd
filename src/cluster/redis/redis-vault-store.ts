// PII vaults in Redis, shared by the daemons of a cluster, so a token minted through one daemon is
// restored through another (after a failover, say). Detection and token derivation run here as
// in the in-memory vault; Redis keeps, per vault, the HMAC secret and a hash token -> value, both
// sealed with AES-256-GCM under the cluster's key and bound to their vault and token (a value
// copied under another vault does not open). Keys are derived from a hash of the owner, so an
// owner name cannot address another's keys; both keys expire after the idle TTL, renewed by use.
// At the token limit new values are refused (STORE_FULL) rather than evicting: an LRU across
// daemons would cost a sorted set write per use. A failed restore says why (unknown, expired,
// another agent's) from a marker per issued token, keyed by a hash of the token: the set of
// "agent hash:vault id" that were given it, kept REMEMBER_SECONDS past the vault's own TTL and
// renewed when the token is used; no value and no agent name is in it.

import { createHash, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { RedisClient, RedisConnection } from './redis-connection.js';
import { StoreError } from '../../util/store-error.js';
import { findPiiYielding } from '../../pii/detect-chunked.js';
import { sortTypes } from '../../pii/detectors.js';
import type { DetokenizeResult, DetokenizeValueResult, PiiMatch, PiiType, PiiVaultsStats, TokenizeResult, UnrestorableReason } from '../../pii/pii-types.js';
import { TOKEN_RE, tokenCandidate } from '../../pii/tokens.js';
import type { VaultOwner, VaultStore } from '../../pii/vault-store.js';
import { replaceMatches } from '../../pii/replace-matches.js';
import { mapStrings, stringsIn } from '../../pii/walk.js';

/** How vaults are keyed: by MCP session, or by agent (they then follow the agent across sessions and daemons). */
export type VaultScope = 'session' | 'agent';

export interface RedisVaultStoreOptions {
  redis: RedisConnection;
  scope: VaultScope;
  /** Idle time after which a vault is gone, seconds (pii.sessionTtlSeconds). */
  ttlSeconds: number;
  /** Tokens one vault may hold (pii.maxTokensPerSession). */
  maxTokens: number;
}

/** Collision retries per value before giving up (a 32-bit token collides once in billions). */
const MAX_ATTEMPTS = 16;
const SECRET_BYTES = 32;
const WHAT = 'the PII vault';
/** How long past its vault's expiry an issued token is remembered, to say "expired" rather than "unknown". */
const REMEMBER_SECONDS = 24 * 3600;

interface Resolved {
  type: PiiType;
  value: string;
}

export class RedisVaultStore implements VaultStore {
  readonly kind = 'redis' as const;
  readonly #redis: RedisConnection;
  readonly #scope: VaultScope;
  readonly #ttl: number;
  readonly #maxTokens: number;
  /** Vaults this daemon used recently, for stats only. */
  readonly #seen: LRUCache<string, true>;

  constructor(options: RedisVaultStoreOptions) {
    if (!Number.isSafeInteger(options.ttlSeconds) || options.ttlSeconds < 1) throw new RangeError(`ttlSeconds must be a positive integer, got ${options.ttlSeconds}`);
    if (!Number.isSafeInteger(options.maxTokens) || options.maxTokens < 1) throw new RangeError(`maxTokens must be a positive integer, got ${options.maxTokens}`);
    this.#redis = options.redis;
    this.#scope = options.scope;
    this.#ttl = options.ttlSeconds;
    this.#maxTokens = options.maxTokens;
    this.#seen = new LRUCache({ max: 10_000, ttl: options.ttlSeconds * 1000 });
  }

  /** The vault's id: a hash, so no owner name can spell another owner's keys. */
  vaultId(owner: VaultOwner): string {
    const [kind, name] = this.#scope === 'agent' ? ['agent', owner.agent] : ['session', owner.sessionId];
    if (typeof name !== 'string' || name.length === 0) throw new TypeError(`the vault owner's ${kind} must be a non-empty string`);
    return createHash('sha256').update(`${kind}\0${name}`).digest('hex').slice(0, 40);
  }

  async tokenize(owner: VaultOwner, text: string): Promise<TokenizeResult> {
    const matches = await findPiiYielding(text, owner.agent);
    if (matches.length === 0) return { text, found: 0, types: [] };
    const tokens = await this.#tokensFor(owner, matches);
    return replaceMatches(text, matches, tokenIn(tokens));
  }

  async tokenizeValue(owner: VaultOwner, value: unknown): Promise<unknown> {
    const all: PiiMatch[] = [];
    const byString = new Map<string, readonly PiiMatch[]>();
    for (const s of stringsIn(value)) {
      if (byString.has(s)) continue;
      const matches = await findPiiYielding(s);
      byString.set(s, matches);
      all.push(...matches);
    }
    if (all.length === 0) return mapStrings(value, (s) => s);
    const tokens = await this.#tokensFor(owner, all);
    return mapStrings(value, (s) => {
      const matches = byString.get(s);
      return matches && matches.length > 0 ? replaceMatches(s, matches, tokenIn(tokens)).text : s;
    });
  }

  async detokenize(owner: VaultOwner, text: string): Promise<DetokenizeResult> {
    const known = await this.#lookup(owner, [text]);
    const unknown = new Set<string>();
    const types = new Set<PiiType>();
    const restored = restore(text, known, unknown, types);
    const reasons = await this.#explain(owner, [...unknown]);
    return { text: restored, unknown: [...unknown], ...(reasons && { reasons }), types: sortTypes(types) };
  }

  async detokenizeValue(owner: VaultOwner, value: unknown): Promise<DetokenizeValueResult> {
    const known = await this.#lookup(owner, stringsIn(value));
    const unknown = new Set<string>();
    const types = new Set<PiiType>();
    const restored = mapStrings(value, (s) => restore(s, known, unknown, types));
    const reasons = await this.#explain(owner, [...unknown]);
    return { value: restored, unknown: [...unknown], ...(reasons && { reasons }), types: sortTypes(types) };
  }

  async dropSession(owner: VaultOwner): Promise<void> {
    // A vault that follows its agent outlives the session; it expires after its idle TTL.
    if (this.#scope === 'agent') return;
    const id = this.vaultId(owner);
    this.#seen.delete(id);
    await this.#redis.run(WHAT, (client) => client.del([this.#secretKey(id), this.#tokensKey(id)]));
  }

  async stats(): Promise<PiiVaultsStats> {
    const ids = [...this.#seen.keys()];
    if (ids.length === 0 || !this.#redis.up) return { sessions: ids.length, tokens: 0 };
    const counts = await this.#redis.run(WHAT, async (client) => {
      const multi = client.multi();
      for (const id of ids) multi.hLen(this.#tokensKey(id));
      return (await multi.exec()) as unknown[];
    });
    return { sessions: ids.length, tokens: counts.reduce<number>((sum, n) => sum + (typeof n === 'number' ? n : 0), 0) };
  }

  async close(): Promise<void> {
    this.#seen.clear();
  }

  #secretKey(id: string): string {
    return `${this.#redis.prefix}pii:${id}:secret`;
  }

  #tokensKey(id: string): string {
    return `${this.#redis.prefix}pii:${id}:tokens`;
  }

  /** Who was given `token`: a set of ownerMark()s, keyed by a hash of the token. */
  #issuedKey(token: string): string {
    return `${this.#redis.prefix}pii:issued:${createHash('sha256').update(token).digest('hex').slice(0, 40)}`;
  }

  get #rememberSeconds(): number {
    return this.#ttl + REMEMBER_SECONDS;
  }

  /** Why each token did not restore for `owner`: given to this vault (so expired), or unknown (another agent's token too: no oracle). */
  async #explain(owner: VaultOwner, unknown: readonly string[]): Promise<Record<string, UnrestorableReason> | undefined> {
    if (unknown.length === 0) return undefined;
    const id = this.vaultId(owner);
    const mine = ownerMark(owner.agent, id);
    const held = await this.#redis.run(WHAT, async (client) => {
      const multi = client.multi();
      for (const token of unknown) multi.sMembers(this.#issuedKey(token));
      return (await multi.exec()) as unknown[];
    });
    const reasons: Record<string, UnrestorableReason> = {};
    unknown.forEach((token, i) => {
      const marks = Array.isArray(held[i]) ? (held[i] as unknown[]).filter((m): m is string => typeof m === 'string') : [];
      reasons[token] = marks.includes(mine) ? 'expired' : 'unknown';
    });
    return reasons;
  }

  /** The vault's secret, created on first use; renews both keys' TTL. */
  async #secret(client: RedisClient, id: string): Promise<Buffer> {
    const secretKey = this.#secretKey(id);
    const [sealed] = (await client.multi().get(secretKey).expire(secretKey, this.#ttl).expire(this.#tokensKey(id), this.#ttl).exec()) as unknown[];
    const place = `${id}\0secret`;
    if (typeof sealed === 'string') return this.#redis.sealer.open(sealed, place);
    const fresh = randomBytes(SECRET_BYTES);
    const set = await client.set(secretKey, this.#redis.sealer.seal(fresh, place), { condition: 'NX', expiration: { type: 'EX', value: this.#ttl } });
    if (set === 'OK') return fresh;
    // Another daemon created it between our GET and SET.
    const theirs = await client.get(secretKey);
    if (typeof theirs !== 'string') throw new StoreError('STORE_UNAVAILABLE', `${WHAT} could not be created; retry`);
    return this.#redis.sealer.open(theirs, place);
  }

  /** The token of every distinct (type, value) in `matches`, minting the missing ones. */
  async #tokensFor(owner: VaultOwner, matches: readonly PiiMatch[]): Promise<Map<string, string>> {
    const id = this.vaultId(owner);
    this.#seen.set(id, true);
    const tokensKey = this.#tokensKey(id);
    const sealer = this.#redis.sealer;
    return this.#redis.run(WHAT, async (client) => {
      const secret = await this.#secret(client, id);
      const out = new Map<string, string>();
      let pending = new Map<string, { type: PiiType; value: string; attempt: number }>();
      for (const m of matches) pending.set(pairKey(m.type, m.value), { type: m.type, value: m.value, attempt: 0 });
      for (let round = 0; pending.size > 0; round++) {
        if (round > MAX_ATTEMPTS * 2) throw new StoreError('STORE_UNAVAILABLE', `${WHAT} is too contended to mint tokens; retry`);
        const items = [...pending.entries()];
        const candidates = items.map(([, p]) => {
          if (p.attempt >= MAX_ATTEMPTS) throw new Error(`PII token space exhausted after ${MAX_ATTEMPTS} attempts`);
          return tokenCandidate(secret, p.type, p.value, p.attempt);
        });
        const held = await client.hmGet(tokensKey, candidates);
        const next = new Map<string, { type: PiiType; value: string; attempt: number }>();
        const create: { key: string; token: string; p: { type: PiiType; value: string; attempt: number } }[] = [];
        items.forEach(([key, p], i) => {
          const token = candidates[i] as string;
          const sealed = held[i];
          if (typeof sealed !== 'string') create.push({ key, token, p });
          else if (sealer.open(sealed, `${id}\0${token}`).toString('utf8') === key) out.set(key, token);
          else next.set(key, { ...p, attempt: p.attempt + 1 });
        });
        if (create.length > 0) {
          const size = await client.hLen(tokensKey);
          if (size + create.length > this.#maxTokens) {
            throw new StoreError('STORE_FULL', `${WHAT} holds ${size} tokens and may hold ${this.#maxTokens} (pii.maxTokensPerSession); no new values can be tokenized until it expires after ${this.#ttl} s idle`);
          }
          const multi = client.multi();
          for (const c of create) multi.hSetNX(tokensKey, c.token, sealer.seal(c.key, `${id}\0${c.token}`));
          multi.expire(tokensKey, this.#ttl);
          const results = (await multi.exec()) as unknown[];
          create.forEach((c, i) => {
            // 0: another daemon took the token meanwhile; the next round reads whose it is.
            if (results[i] === 1 || results[i] === true) out.set(c.key, c.token);
            else next.set(c.key, c.p);
          });
        }
        pending = next;
      }
      // Remember who was given each token (a restore that fails can then say why), renewed by use.
      const mark = ownerMark(owner.agent, id);
      const multi = client.multi();
      for (const token of new Set(out.values())) multi.sAdd(this.#issuedKey(token), mark).expire(this.#issuedKey(token), this.#rememberSeconds);
      await multi.exec();
      return out;
    });
  }

  /** The values of every token found in `texts` that this vault holds. */
  async #lookup(owner: VaultOwner, texts: readonly string[]): Promise<Map<string, Resolved>> {
    const tokens = new Set<string>();
    for (const text of texts) if (text.includes('[')) for (const m of text.matchAll(TOKEN_RE)) tokens.add(m[0]);
    const known = new Map<string, Resolved>();
    if (tokens.size === 0) return known;
    const id = this.vaultId(owner);
    this.#seen.set(id, true);
    const list = [...tokens];
    const [held] = await this.#redis.run(WHAT, async (client) => {
      const multi = client.multi().hmGet(this.#tokensKey(id), list).expire(this.#tokensKey(id), this.#ttl).expire(this.#secretKey(id), this.#ttl);
      // Markers of tokens in use live on (renewing another agent's marker tells the caller nothing).
      for (const token of list) multi.expire(this.#issuedKey(token), this.#rememberSeconds);
      return (await multi.exec()) as unknown[];
    });
    const values = Array.isArray(held) ? held : [];
    list.forEach((token, i) => {
      const sealed: unknown = values[i];
      if (typeof sealed !== 'string') return;
      const plain = this.#redis.sealer.open(sealed, `${id}\0${token}`).toString('utf8');
      const at = plain.indexOf('\0');
      known.set(token, { type: plain.slice(0, at) as PiiType, value: plain.slice(at + 1) });
    });
    return known;
  }
}

/** "agent hash:vault id": the agent as a hash (no name in Redis), and the vault within it. */
function ownerMark(agent: string, vaultId: string): string {
  return `${createHash('sha256').update(`agent\0${agent}`).digest('hex').slice(0, 40)}:${vaultId}`;
}

function pairKey(type: PiiType, value: string): string {
  return `${type}\0${value}`;
}

/** The token of a match from the tokens resolved for it (every detected value has one). */
function tokenIn(tokens: ReadonlyMap<string, string>): (m: PiiMatch) => string {
  return (m) => {
    const token = tokens.get(pairKey(m.type, m.value));
    if (token === undefined) throw new Error('internal: a detected value has no token');
    return token;
  };
}

function restore(text: string, known: ReadonlyMap<string, Resolved>, unknown: Set<string>, types: Set<PiiType>): string {
  if (!text.includes('[')) return text;
  return text.replace(TOKEN_RE, (token) => {
    const entry = known.get(token);
    if (entry === undefined) {
      unknown.add(token);
      return token;
    }
    types.add(entry.type);
    return entry.value;
  });
}
