// Skill names become folder names and object keys, so they are checked before anything touches
// the disk: a strict pattern rules out traversal, separators and NUL; a reserved list rules out
// names that Windows devices or JavaScript prototypes would give a second meaning.
import { editDistance } from '../util/edit-distance.js';

import { SkillError } from './skill-error.js';

export const SKILL_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]*$/;
export const MAX_SKILL_NAME_CHARS = 64;

const RESERVED_NAMES = new Set([
  // Windows device names: a folder called `con` cannot be created or opened there.
  'con', 'prn', 'aux', 'nul', 'conin$', 'conout$',
  ...Array.from({ length: 10 }, (_, i) => `com${i}`),
  ...Array.from({ length: 10 }, (_, i) => `lpt${i}`),
  // Folders with a meaning of their own to tools that walk the tree.
  'node_modules',
  // Keys that change an object's behaviour when a caller indexes a plain object by skill name.
  '__proto__', 'constructor', 'prototype', '__definegetter__', '__definesetter__',
  '__lookupgetter__', '__lookupsetter__', 'hasownproperty', 'isprototypeof',
  'propertyisenumerable', 'tolocalestring', 'tostring', 'valueof',
]);

/** Why a name is not a valid skill name, or null when it is. */
export function skillNameProblem(name: unknown): string | null {
  if (typeof name !== 'string' || name.length === 0) return 'name must be a non-empty string';
  if (name.length > MAX_SKILL_NAME_CHARS) return `name must be at most ${MAX_SKILL_NAME_CHARS} characters`;
  if (!SKILL_NAME_PATTERN.test(name)) {
    return 'name must start with a letter or "_" and contain only letters, digits, "_" and "-" (no dots, slashes or spaces)';
  }
  if (RESERVED_NAMES.has(name.toLowerCase())) return `"${name}" is a reserved name`;
  return null;
}

export function assertSkillName(name: unknown): asserts name is string {
  const problem = skillNameProblem(name);
  if (problem !== null) {
    const shown = typeof name === 'string' ? JSON.stringify(name.slice(0, 80)) : typeof name;
    throw new SkillError('INVALID_NAME', `Invalid skill name ${shown}: ${problem}. Example: filter_high_risk.`);
  }
}

/** Up to `limit` existing names close to `name` (edit distance, case, prefix), best first. */
export function suggestNames(name: string, candidates: Iterable<string>, limit = 3): string[] {
  const wanted = name.toLowerCase();
  const scored: { name: string; score: number }[] = [];
  for (const candidate of candidates) {
    const lower = candidate.toLowerCase();
    const distance = editDistance(wanted, lower);
    const budget = Math.max(2, Math.floor(Math.max(wanted.length, lower.length) / 3));
    const related = wanted.length >= 3 && (lower.includes(wanted) || wanted.includes(lower));
    if (distance <= budget || related) scored.push({ name: candidate, score: related ? Math.min(distance, budget) : distance });
  }
  scored.sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
  return scored.slice(0, limit).map((s) => s.name);
}

