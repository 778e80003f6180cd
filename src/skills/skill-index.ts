// What the store keeps in memory: one entry per skill folder (metadata, imports, pins; never the
// code), each agent's usage against its share, a byte-bounded LRU of recently used code, and the
// change listeners. Every change of an entry goes through `set`, so the three never disagree.

import { LRUCache } from 'lru-cache';
import type { Logger } from '../util/logger.js';
import { callerSees } from './skill-access.js';
import type { SkillCaller } from './skill-access.js';
import { changeKind, ownerOf } from './skill-record.js';
import type { IndexEntry } from './skill-record.js';
import { SkillQuota } from './skill-quota.js';
import type { SkillQuotaLimits, SkillUsage } from './skill-quota.js';
import type { InvalidSkill, SkillChange, SkillChangeListener, SkillStoreStats, SkillSummary } from './skill-types.js';

/** Bytes of skill code kept in memory (the most recently used); the rest is read from disk when needed. */
export const DEFAULT_SKILL_CODE_CACHE_BYTES = 32 * 1024 * 1024;

export class SkillIndex {
  readonly #entries = new Map<string, IndexEntry>();
  readonly #listeners = new Set<SkillChangeListener>();
  readonly #logger: Logger;
  readonly quota: SkillQuota;
  /** Code by `name\0hash`, most recently used first; bounded by bytes, never the whole store. */
  readonly #code: LRUCache<string, string>;

  constructor(logger: Logger, quota: SkillQuotaLimits, codeCacheBytes: number) {
    if (!Number.isInteger(codeCacheBytes) || codeCacheBytes < 1) throw new RangeError('SkillStore option codeCacheBytes must be a positive integer');
    this.#logger = logger;
    this.quota = new SkillQuota(quota);
    this.#code = new LRUCache({ maxSize: codeCacheBytes, sizeCalculation: (code) => Math.max(1, code.length) });
  }

  get(name: string): IndexEntry | undefined {
    return this.#entries.get(name);
  }

  has(name: string): boolean {
    return this.#entries.has(name);
  }

  names(): string[] {
    return [...this.#entries.keys()];
  }

  entries(): IterableIterator<IndexEntry> {
    return this.#entries.values();
  }

  /** Every valid skill the caller may see, by name. */
  summaries(caller: SkillCaller | undefined): SkillSummary[] {
    return [...this.#entries.values()]
      .flatMap((entry) => (entry.state === 'valid' ? [entry.record.metadata] : []))
      .filter((m) => callerSees(caller, m.author, m.visibility))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((m) => ({
        name: m.name,
        description: m.description,
        language: m.language,
        exports: [...m.exports],
        updated: m.updated,
        ...(m.author !== undefined && { author: m.author }),
        visibility: m.visibility,
      }));
  }

  /** Code of `name` at content `hash`, if still in memory. */
  code(name: string, hash: string): string | undefined {
    return this.#code.get(`${name}\0${hash}`);
  }

  rememberCode(name: string, hash: string, code: string): void {
    this.#code.set(`${name}\0${hash}`, code);
  }

  /** What `agent`'s skills hold against its share, and the limits. */
  usage(agent: string): SkillUsage & { quota_count: number; quota_bytes: number } {
    return { ...this.quota.usage(agent), quota_count: this.quota.limits.count, quota_bytes: this.quota.limits.bytes };
  }

  /** Puts (or, with null, removes) the entry of `name`, whose folder takes `bytes`; tells listeners what changed. */
  set(name: string, entry: IndexEntry | null, source: SkillChange['source'], bytes = 0): void {
    const previous = this.#entries.get(name);
    if (entry) this.#entries.set(name, entry);
    else this.#entries.delete(name);
    if (entry) this.quota.track(name, ownerOf(entry).author, bytes);
    else this.quota.untrack(name);
    const kind = changeKind(previous, entry);
    if (kind === null) return;
    // Said once per change of state, not on every reload of an unchanged broken folder.
    if (entry?.state === 'invalid') this.#logger.warn({ code: 'SKILL_INVALID', skill: name, reason: entry.reason }, 'skill on disk is broken and not served');
    if (entry?.state === 'valid' && entry.warning) this.#logger.warn({ code: 'SKILL_METADATA_MISMATCH', skill: name }, entry.warning);
    for (const listener of this.#listeners) {
      try {
        listener({ name, kind, source });
      } catch (error) {
        this.#logger.error({ code: 'SKILL_LISTENER_FAILED', err: error }, 'skill change listener threw');
      }
    }
  }

  onChange(listener: SkillChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  clearListeners(): void {
    this.#listeners.clear();
  }

  stats(cache: SkillStoreStats['cache']): SkillStoreStats {
    let count = 0;
    const invalid: InvalidSkill[] = [];
    for (const entry of this.#entries.values()) {
      if (entry.state === 'valid') count++;
      else invalid.push({ name: entry.name, reason: entry.reason });
    }
    invalid.sort((a, b) => (a.name < b.name ? -1 : 1));
    const code = { entries: this.#code.size, bytes: this.#code.calculatedSize, max_bytes: this.#code.maxSize };
    return { count, invalid, cache, code_cache: code, quota: { ...this.quota.limits }, by_agent: this.quota.byAuthor() };
  }
}
