// Each agent's share of the skill store: how many skills it may hold and how many bytes (code plus
// SKILL.md) they may take on disk. Usage is kept per author from what the store indexes (saves,
// deletes, hand edits, other daemons' saves seen by the watcher); a save reserves its size before
// its first await, so concurrent saves of one agent cannot both pass the last free byte. The
// operator's library (skills without an author) is not counted.

import { SkillError } from './skill-error.js';

/** Default skills one agent may hold. */
export const DEFAULT_SKILL_QUOTA_COUNT = 500;
/** Default bytes one agent's skills may take (code plus SKILL.md), 64 MiB. */
export const DEFAULT_SKILL_QUOTA_BYTES = 64 * 1024 * 1024;

export interface SkillQuotaLimits {
  /** Skills one agent may hold (limits.skillQuotaCount). */
  count: number;
  /** Bytes one agent's skills may take (limits.skillQuotaBytes). */
  bytes: number;
}

export interface SkillUsage {
  skills: number;
  bytes: number;
}

export class SkillQuota {
  readonly limits: SkillQuotaLimits;
  /** author -> skill name -> bytes on disk. */
  readonly #held = new Map<string, Map<string, number>>();
  /** author -> skill name -> bytes of a save in flight. */
  readonly #reserved = new Map<string, Map<string, number>>();

  constructor(limits: SkillQuotaLimits) {
    for (const [key, value] of Object.entries(limits)) {
      if (!Number.isInteger(value) || value < 1) throw new RangeError(`SkillStore option quota.${key} must be a positive integer`);
    }
    this.limits = { ...limits };
  }

  /** Records what the index now holds under `name`: `author`'s skill of `bytes`, or nothing. */
  track(name: string, author: string | undefined, bytes: number): void {
    for (const [who, skills] of this.#held) {
      if (who !== author && skills.delete(name) && skills.size === 0) this.#held.delete(who);
    }
    if (author === undefined) return;
    let skills = this.#held.get(author);
    if (!skills) this.#held.set(author, (skills = new Map()));
    skills.set(name, bytes);
  }

  untrack(name: string): void {
    this.track(name, undefined, 0);
  }

  /** Every author's usage, by name. */
  byAuthor(): Record<string, SkillUsage> {
    return Object.fromEntries([...this.#held.keys()].sort().map((author) => [author, this.usage(author)]));
  }

  /** What `author` holds, counting saves in flight. */
  usage(author: string): SkillUsage {
    return this.#usage(author, undefined);
  }

  /**
   * Reserves room for `author`'s save of `name` (replacing what it held under that name) or throws
   * QUOTA_EXCEEDED naming the limit and the option; call the returned function once the save ended.
   */
  reserve(author: string, name: string, bytes: number): () => void {
    const other = this.#usage(author, name);
    if (other.skills + 1 > this.limits.count) {
      throw new SkillError(
        'QUOTA_EXCEEDED',
        `Skill "${name}" was not saved: agent "${author}" already has ${other.skills} skills, the limit is ${this.limits.count}. Delete skills you no longer need (delete_skill), or ask the operator to raise limits.skillQuotaCount.`,
      );
    }
    if (other.bytes + bytes > this.limits.bytes) {
      throw new SkillError(
        'QUOTA_EXCEEDED',
        `Skill "${name}" was not saved: it would bring agent "${author}"'s skills to ${other.bytes + bytes} bytes, over its ${this.limits.bytes}-byte quota. Delete skills you no longer need (delete_skill), or ask the operator to raise limits.skillQuotaBytes.`,
      );
    }
    let mine = this.#reserved.get(author);
    if (!mine) this.#reserved.set(author, (mine = new Map()));
    mine.set(name, bytes);
    return () => {
      const current = this.#reserved.get(author);
      if (current?.get(name) === bytes && current.delete(name) && current.size === 0) this.#reserved.delete(author);
    };
  }

  /** Usage of `author`, leaving out `except` (the skill a save replaces). */
  #usage(author: string, except: string | undefined): SkillUsage {
    const names = new Map<string, number>();
    for (const source of [this.#held.get(author), this.#reserved.get(author)]) {
      for (const [name, bytes] of source ?? []) if (name !== except) names.set(name, Math.max(bytes, names.get(name) ?? 0));
    }
    let total = 0;
    for (const bytes of names.values()) total += bytes;
    return { skills: names.size, bytes: total };
  }
}
