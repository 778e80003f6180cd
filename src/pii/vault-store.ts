// The contract of PII vault storage, and its embedded implementation. Callers (MCP tools, the
// sandbox methods, the pii.auto boundary) see only this async interface; the composition root
// picks the in-memory vaults (one daemon) or the Redis vaults (daemons behind a load balancer).
// A vault holds one owner's HMAC secret and its token <-> value pairs, is dropped after its idle
// TTL, and can be dropped explicitly.

import type { DetokenizeResult, DetokenizeValueResult, PiiVaultsStats, TokenizeResult } from './pii-types.js';
import { PiiVaults } from './vaults.js';
import type { PiiVaultsOptions } from './pii-types.js';

/** Who a vault belongs to: the store decides which of the two keys it (see the README, "PII across daemons"). */
export interface VaultOwner {
  /** MCP session id (HTTP) or a generated one (stdio, exec). */
  sessionId: string;
  /** Agent name; with agents configured, a shared store keys the vault by it. */
  agent: string;
}

export interface VaultStore {
  /** 'memory' (this process) or 'redis' (shared by the daemons of a cluster). */
  readonly kind: 'memory' | 'redis';
  /** Replaces every PII value in text by its token; long texts are scanned in slices. */
  tokenize(owner: VaultOwner, text: string): Promise<TokenizeResult>;
  /** Replaces the owner's tokens by their values; unknown token-shaped strings are reported. */
  detokenize(owner: VaultOwner, text: string): Promise<DetokenizeResult>;
  /** tokenize for every string (and key) inside a JSON-shaped value. */
  tokenizeValue(owner: VaultOwner, value: unknown): Promise<unknown>;
  /** detokenize for every string (and key) inside a JSON-shaped value. */
  detokenizeValue(owner: VaultOwner, value: unknown): Promise<DetokenizeValueResult>;
  /** The session ended: forget its vault (a no-op when vaults follow agents). */
  dropSession(owner: VaultOwner): Promise<void>;
  /** Counts only, never values. */
  stats(): Promise<PiiVaultsStats>;
  /** Forgets what this process holds; idempotent. */
  close(): Promise<void>;
}

/** The embedded store: per-session in-memory vaults (PiiVaults), keyed by session id. */
export class MemoryVaultStore implements VaultStore {
  readonly kind = 'memory' as const;
  readonly vaults: PiiVaults;

  constructor(options: PiiVaultsOptions | PiiVaults = {}) {
    this.vaults = options instanceof PiiVaults ? options : new PiiVaults(options);
  }

  async tokenize(owner: VaultOwner, text: string): Promise<TokenizeResult> {
    return this.vaults.vault(owner.sessionId).tokenizeAsync(text);
  }

  async detokenize(owner: VaultOwner, text: string): Promise<DetokenizeResult> {
    return this.vaults.vault(owner.sessionId).detokenize(text);
  }

  async tokenizeValue(owner: VaultOwner, value: unknown): Promise<unknown> {
    return this.vaults.vault(owner.sessionId).tokenizeValueAsync(value);
  }

  async detokenizeValue(owner: VaultOwner, value: unknown): Promise<DetokenizeValueResult> {
    return this.vaults.vault(owner.sessionId).detokenizeValue(value);
  }

  async dropSession(owner: VaultOwner): Promise<void> {
    this.vaults.drop(owner.sessionId);
  }

  async stats(): Promise<PiiVaultsStats> {
    return this.vaults.stats();
  }

  async close(): Promise<void> {
    this.vaults.clear();
  }
}
