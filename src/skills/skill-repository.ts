// The contract every skill store keeps, so the composition root can choose one: today's SkillStore
// (skill folders on a local or shared file system, hot reload, atomic saves) is the only one.
// Callers outside src/skills/ depend on this, not on the class.

import type { SkillCaller } from './skill-access.js';
import type { CompiledSkill, LoadedSkill, SaveSkillInput, SaveSkillResult, SkillChangeListener, SkillList, SkillStoreStats } from './skill-types.js';

export interface SkillRepository {
  /** Where the skills live (shown in stats and logs). */
  readonly dir: string;
  /** Loads what is there and starts watching; calling it again returns the same promise. */
  start(): Promise<void>;
  /** Saves atomically; refuses code that does not compile, names taken by another owner, and a caller without the permission. */
  save(input: SaveSkillInput, caller?: SkillCaller): Promise<SaveSkillResult>;
  load(name: string, caller?: SkillCaller): Promise<LoadedSkill>;
  list(caller?: SkillCaller): Promise<SkillList>;
  delete(name: string, caller?: SkillCaller): Promise<{ success: true }>;
  /** The skill compiled for import_skill (cached by content). */
  compileSkill(name: string, caller?: SkillCaller): Promise<CompiledSkill>;
  /** Names the skill imports, transitively; refuses cycles. */
  checkImportGraph(name: string, caller?: SkillCaller): Promise<string[]>;
  /** Re-reads one skill now: another daemon said it changed (the change bus). */
  reload(name: string): Promise<void>;
  /** Called after every change; returns a function that unsubscribes. */
  onChange(listener: SkillChangeListener): () => void;
  stats(): SkillStoreStats;
  /** What one agent's skills hold against its share, and the limits. */
  usage(agent: string): { skills: number; bytes: number; quota_count: number; quota_bytes: number };
  close(): Promise<void>;
}
