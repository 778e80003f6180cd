// The contract of PII vault storage, and its embedded implementation. Callers (MCP tools, the
// sandbox methods, the pii.auto boundary) see only this async interface; the composition root
// picks the in-memory vaults (one daemon) or the Redis vaults (daemons behind a load balancer).
// A vault holds one agent's HMAC secret and its token <-> value pairs; a token lasts a TTL after
// it was last issued.

import type { DetokenizeResult, DetokenizeValueResult, PiiVaultsStats, TokenizeResult, UnrestorableReason } from './pii-types.js';
import type { PiiVault } from './vault.js';
import { VaultJournal, vaultFileId } from './vault-journal.js';
import type { JournalPosition } from './vault-journal.js';
import { DEFAULT_TOKEN_TTL_SECONDS, PiiVaults } from './vaults.js';
import type { PiiVaultsOptions } from './pii-types.js';

/** Who a vault belongs to: the store decides which of the two keys it (see docs/configuration.md, "How a PII vault follows its agent"). */
export interface VaultOwner {
  /** MCP session id (HTTP) or a generated one (stdio, exec); a store keyed by session (Redis 'session' scope) uses it. */
  sessionId: string;
  /** Agent name ('local' without agents): the key of the agent's vault. */
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

/** Where the embedded store keeps vaults between restarts, and for how long a token lasts. */
export interface MemoryVaultStoreOptions extends PiiVaultsOptions {
  /** The folder of the agents' vault files (config pii.vaultDir); absent: memory only. */
  dir?: string;
  /** How long a token restores after it was last issued, seconds (pii.tokenTtlSeconds). */
  tokenTtlSeconds?: number;
}

/**
 * The embedded store: one vault per agent (the local agent too), shared by all its sessions, in
 * memory and, with a folder, journaled to disk (vault-journal.ts), so a token restores in any
 * session of its agent across reconnects and restarts until its TTL, and never for another agent.
 */
export class MemoryVaultStore implements VaultStore {
  readonly kind = 'memory' as const;
  readonly vaults: PiiVaults;
  readonly #journal: VaultJournal | undefined;
  /** How far this process has read each agent's file, so a miss reads only what was appended since. */
  readonly #positions = new Map<string, JournalPosition>();
  /** Vaults being read from disk, by agent: one read each. */
  readonly #loading = new Map<string, Promise<PiiVault>>();

  constructor(options: MemoryVaultStoreOptions | PiiVaults = {}) {
    if (options instanceof PiiVaults) {
      this.vaults = options;
      return;
    }
    const ttlMs = (options.tokenTtlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS) * 1000;
    // A vault stays in memory as long as its tokens could last; the file outlives it.
    this.vaults = new PiiVaults({ ...options, sessionTtlSeconds: options.sessionTtlSeconds ?? ttlMs / 1000, tokenTtlMs: ttlMs });
    if (options.dir !== undefined) this.#journal = new VaultJournal(options.dir);
  }

  async #vault(owner: VaultOwner): Promise<PiiVault> {
    const agent = owner.agent;
    if (typeof agent !== 'string' || agent.length === 0) throw new TypeError("the vault owner's agent must be a non-empty string");
    const held = this.vaults.peek(agent);
    if (held !== undefined) return this.vaults.vault(agent);
    const journal = this.#journal;
    if (journal === undefined) return this.vaults.vault(agent);
    let pending = this.#loading.get(agent);
    if (pending === undefined) {
      pending = (async () => {
        const id = vaultFileId(agent);
        let loaded = await journal.load(id);
        if (loaded === undefined) {
          const vault = this.vaults.create(agent);
          loaded = await journal.create(id, vault.secret);
          if (loaded === undefined) return vault;
          // Another process on the folder created the agent's vault first: its secret it is.
        }
        const vault = this.vaults.create(agent, loaded.secret);
        this.#positions.set(agent, loaded.position);
        for (const r of loaded.records) vault.restoreRecord(r);
        vault.takeChanges();
        if (VaultJournal.needsCompaction(loaded.lines, vault.size)) await journal.rewrite(id, vault.secret, vault.records(), loaded.position);
        return vault;
      })().finally(() => this.#loading.delete(agent));
      this.#loading.set(agent, pending);
    }
    return pending;
  }

  /** Writes what the call issued before the call returns (nothing acknowledged is lost). */
  async #persist(owner: VaultOwner, vault: PiiVault): Promise<void> {
    if (this.#journal === undefined) return;
    await this.#journal.append(vaultFileId(owner.agent), vault.takeChanges());
  }

  /**
   * Tokens this process does not hold may have been issued since by another process on the same
   * folder: read the agent's file again and take what it holds that this vault lacks. Only on a
   * miss, so the common restore reads nothing from disk.
   */
  async #catchUp(owner: VaultOwner, vault: PiiVault, unknown: readonly string[]): Promise<boolean> {
    const journal = this.#journal;
    if (journal === undefined || unknown.length === 0) return false;
    const id = vaultFileId(owner.agent);
    try {
      const from = this.#positions.get(owner.agent);
      let read = from === undefined ? undefined : await journal.since(id, from);
      if (read === undefined) {
        const loaded = await journal.load(id);
        if (loaded === undefined) return false;
        read = loaded;
      }
      this.#positions.set(owner.agent, read.position);
      let found = false;
      for (const r of read.records) {
        if (vault.holds(r.token)) continue;
        vault.restoreRecord(r);
        if (unknown.includes(r.token)) found = true;
      }
      return found;
    } catch {
      // A file that does not read now leaves the tokens unknown; the next miss tries again.
      return false;
    }
  }

  /** Reasons for tokens that did not restore: expired here, or unknown (another agent's token too). */
  #explain(vault: PiiVault, unknown: readonly string[]): Record<string, UnrestorableReason> | undefined {
    if (unknown.length === 0) return undefined;
    return Object.fromEntries(unknown.map((token) => [token, vault.whyNot(token)]));
  }

  async tokenize(owner: VaultOwner, text: string): Promise<TokenizeResult> {
    const vault = await this.#vault(owner);
    const result = await vault.tokenizeAsync(text);
    await this.#persist(owner, vault);
    return result;
  }

  async detokenize(owner: VaultOwner, text: string): Promise<DetokenizeResult> {
    const vault = await this.#vault(owner);
    let result = vault.detokenize(text);
    if (await this.#catchUp(owner, vault, result.unknown)) result = vault.detokenize(text);
    const reasons = this.#explain(vault, result.unknown);
    return reasons ? { ...result, reasons } : result;
  }

  async tokenizeValue(owner: VaultOwner, value: unknown): Promise<unknown> {
    const vault = await this.#vault(owner);
    const result = await vault.tokenizeValueAsync(value);
    await this.#persist(owner, vault);
    return result;
  }

  async detokenizeValue(owner: VaultOwner, value: unknown): Promise<DetokenizeValueResult> {
    const vault = await this.#vault(owner);
    let result = vault.detokenizeValue(value);
    if (await this.#catchUp(owner, vault, result.unknown)) result = vault.detokenizeValue(value);
    const reasons = this.#explain(vault, result.unknown);
    return reasons ? { ...result, reasons } : result;
  }

  /** Vaults follow agents, not sessions: a session's end drops nothing. */
  async dropSession(_owner: VaultOwner): Promise<void> {}

  async stats(): Promise<PiiVaultsStats> {
    return this.vaults.stats();
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.#loading.values()]);
    this.vaults.clear();
  }
}

/** Why tokens did not restore, for a message: never the value, never whose they are. */
export function describeUnrestorable(unknown: readonly string[], reasons: Readonly<Record<string, UnrestorableReason>> | undefined): string {
  const words: Record<UnrestorableReason, string> = {
    unknown: 'unknown to this agent (never issued to it, or forgotten past pii.maxTokensPerSession)',
    expired: 'expired (a token restores for pii.tokenTtlSeconds after it was last issued; tokenize the value again)',
  };
  return unknown
    .slice(0, 3)
    .map((t) => `${t} is ${words[reasons?.[t] ?? 'unknown']}`)
    .join('; ');
}
