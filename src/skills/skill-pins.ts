// A skill's imports are pinned when it is saved: each import names the skill it meant by owner and
// content hash (SKILL.md `imports: NAME@OWNER#HASH ...`, OWNER empty for the operator's library).
// The compiled module then imports `NAME@OWNER` (plus `#HASH` when the dependency is another
// agent's), so a skill published later under a missing or deleted name never runs in its place,
// and another agent's dependency cannot change under it. Imports written by hand (no pin) resolve
// only among the importing skill's author's own skills, or the library's for a library skill.

import { skillFormat } from '../config/languages.js';
import { SkillError } from './skill-error.js';
import { skillNameProblem } from './skill-names.js';
import type { SkillPin } from './front-matter.js';
import type { IndexEntry, SkillRecord } from './skill-record.js';

/** Where an import must resolve: the dependency's owner, and its version when that is pinned too. */
export interface ImportReference {
  name: string;
  owner: string | undefined;
  hash?: string;
}

const REFERENCE = /^([A-Za-z_][A-Za-z0-9_-]*)@([A-Za-z0-9_][A-Za-z0-9_.-]{0,63})?(?:#([0-9a-f]{64}))?$/;

/** What import_skill is called with for an import of `pin`'s skill: its owner, and its hash when the version is held too. */
export function formatReference(ref: ImportReference): string {
  return `${ref.name}@${ref.owner ?? ''}${ref.hash !== undefined ? `#${ref.hash}` : ''}`;
}

/** A reference made by formatReference, or null for a plain skill name. */
export function parseReference(text: string): ImportReference | null {
  if (!text.includes('@')) return null;
  const match = REFERENCE.exec(text);
  if (!match || skillNameProblem(match[1] ?? '') !== null) {
    throw new SkillError('INVALID_NAME', `"${text.slice(0, 200)}" is neither a skill name nor an import of a saved skill; import skills by name, e.g. import_skill('my_skill')`);
  }
  return { name: match[1] as string, owner: match[2], ...(match[3] !== undefined && { hash: match[3] }) };
}

/**
 * The reference an import of `dependency` compiles to in a skill by `importerAuthor`: its pin when
 * it has one (with the hash when the dependency is another agent's), else the importer's own.
 */
export function referenceFor(dependency: string, pins: readonly SkillPin[], importerAuthor: string | undefined): ImportReference {
  const pin = pins.find((p) => p.name === dependency);
  if (!pin) return { name: dependency, owner: importerAuthor };
  const others = pin.author !== undefined && pin.author !== importerAuthor;
  return { name: dependency, owner: pin.author, ...(others && { hash: pin.hash }) };
}

/** What each import of `record` compiles to (ES-module skills; Python's load skills when they run: runtimes.ts). */
export function referencesOf(record: SkillRecord, current: (name: string) => IndexEntry | undefined): Record<string, string> {
  const references: Record<string, string> = {};
  if (skillFormat(record.language) !== 'es-module') return references;
  for (const dependency of record.imports) references[dependency] = formatReference(referenceIn(record, dependency, current(dependency)));
  return references;
}

/** Throws unless `record` (the skill under the reference's name now) is the one the reference was pinned to. */
export function checkReference(reference: ImportReference, record: SkillRecord): void {
  if (record.metadata.author !== reference.owner) throw wrongOwnerError(reference);
  if (reference.hash !== undefined && record.metadata.hash !== reference.hash) throw changedError(reference, record.metadata.hash);
}

/**
 * Where an import of `dependency` in `record` resolves: its pin; without one (written by hand),
 * the importer's author's own skill, or the library's when `current` (the skill under that name
 * now) is the library's.
 */
export function referenceIn(record: SkillRecord, dependency: string, current: IndexEntry | undefined): ImportReference {
  if (record.pins.some((p) => p.name === dependency)) return referenceFor(dependency, record.pins, record.metadata.author);
  const currentAuthor = current === undefined ? null : current.state === 'valid' ? current.record.metadata.author : current.author;
  return currentAuthor === undefined ? { name: dependency, owner: undefined } : { name: dependency, owner: record.metadata.author };
}

function ownerText(owner: string | undefined): string {
  return owner === undefined ? "the operator's library" : `agent "${owner}"`;
}

/** The refusal when the skill under a reference's name is not the one pinned (gone, or another owner's). */
export function wrongOwnerError(ref: ImportReference): SkillError {
  return new SkillError(
    'SKILL_NOT_FOUND',
    `Skill "${ref.name}" of ${ownerText(ref.owner)}, which the importing skill was saved against, no longer exists (its name may now be another owner's). Save "${ref.name}" again, or save the importing skill again against the skill now under that name.`,
  );
}

/** The refusal when a pinned dependency of another agent changed since the importer was saved. */
export function changedError(ref: ImportReference, current: string): SkillError {
  return new SkillError(
    'IMPORT_CHANGED',
    `Skill "${ref.name}" of ${ownerText(ref.owner)} changed since the skill importing it was saved (version ${ref.hash?.slice(0, 12)} pinned, ${current.slice(0, 12)} now). Save the importing skill again to use the new version.`,
  );
}
