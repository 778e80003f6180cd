// SKILL.md: YAML front matter (name, description, language, author, visibility, created, updated,
// hash, imports: the skills its imports were pinned to when saved) over a markdown body. Reading is strict about types, so a hand-broken file is reported, not guessed at.

import { parse, stringify } from 'yaml';
import { skillNameProblem } from './skill-names.js';
import { SKILL_LANGUAGES, SKILL_VISIBILITIES } from './skill-types.js';
import type { SkillLanguage, SkillVisibility } from './skill-types.js';

export const SKILL_MD = 'SKILL.md';

/** One entry of the `imports` field: the skill an import was pinned to when saved (skill-pins.ts). */
export interface SkillPin {
  name: string;
  /** Author of the dependency when the importer was saved; undefined: the operator's library. */
  author?: string;
  hash: string;
}

const PIN = /^([A-Za-z_][A-Za-z0-9_-]*)@([A-Za-z0-9_][A-Za-z0-9_.-]{0,63})?#([0-9a-f]{64})$/;

/** The front matter fields the store writes. */
export interface SkillFrontMatter {
  name: string;
  description: string;
  language: SkillLanguage;
  /** The agent that saved the skill; absent in the operator's library (written by hand). */
  author?: string;
  visibility?: SkillVisibility;
  created: string;
  updated: string;
  hash: string;
  /** What each import resolved to when the skill was saved. */
  imports?: SkillPin[];
}

/** What a SKILL.md on disk says; every field may be missing from a hand-written file. */
export interface ParsedSkillMarkdown {
  fields: Partial<SkillFrontMatter>;
  body: string;
}

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;

/** Parses SKILL.md; throws an Error whose message says what is broken. No front matter at all is allowed. */
export function parseSkillMarkdown(text: string): ParsedSkillMarkdown {
  if (!/^\uFEFF?---[ \t]*\r?\n/.test(text)) return { fields: {}, body: text };
  const match = FRONT_MATTER.exec(text);
  if (!match) throw new Error('SKILL.md front matter has no closing "---" line');
  let data: unknown = parseSimpleFrontMatter(match[1] ?? '');
  try {
    data ??= parse(match[1] ?? '');
  } catch (error) {
    throw new Error(`SKILL.md front matter is not valid YAML: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
  if (data === null || data === undefined) data = {};
  if (typeof data !== 'object' || Array.isArray(data)) throw new Error('SKILL.md front matter must be a YAML mapping (key: value lines)');
  return { fields: readFields(data as Record<string, unknown>), body: text.slice(match[0].length) };
}

// The store writes `key: value` lines of plain scalars; reading those without the YAML library
// makes a start-up scan of many skills several times cheaper. Anything outside the narrow subset
// below (quotes, comments, numbers, booleans, nulls, indicators, CR) goes to the real parser, so
// the result always equals what YAML would give.
const SIMPLE_LINE = /^([a-z]+): ([A-Za-z0-9_][^\r\t]*)$/;
const NOT_A_STRING = /^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|0o[0-7]+|0x[0-9a-fA-F]+|true|True|TRUE|false|False|FALSE|null|Null|NULL)$/;

/** `key: value` lines of plain string scalars, or null when the text needs the YAML parser. */
export function parseSimpleFrontMatter(text: string): Record<string, string> | null {
  const fields: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = SIMPLE_LINE.exec(line);
    const key = match?.[1];
    const value = match?.[2];
    if (key === undefined || value === undefined) return null;
    if (value.includes(' #') || value.includes(': ') || value.endsWith(':') || value.endsWith(' ')) return null;
    if (NOT_A_STRING.test(value) || Object.hasOwn(fields, key)) return null;
    fields[key] = value;
  }
  return fields;
}

function readFields(data: Record<string, unknown>): Partial<SkillFrontMatter> {
  const fields: Partial<SkillFrontMatter> = {};
  const text = (key: Exclude<keyof SkillFrontMatter, 'imports'>): string | undefined => {
    const value = data[key];
    if (value === undefined || value === null) return undefined;
    if (value instanceof Date) return value.toISOString();
    if (typeof value !== 'string') throw new Error(`SKILL.md front matter field "${key}" must be a string`);
    return value;
  };
  const name = text('name');
  if (name !== undefined) fields.name = name;
  const description = text('description');
  if (description !== undefined) fields.description = description;
  const language = text('language');
  if (language !== undefined) {
    if (!SKILL_LANGUAGES.includes(language as SkillLanguage)) {
      throw new Error(`SKILL.md front matter field "language" must be one of ${SKILL_LANGUAGES.join(', ')} (got "${language}")`);
    }
    fields.language = language as SkillLanguage;
  }
  const author = text('author');
  if (author !== undefined) {
    if (author.trim() === '') throw new Error('SKILL.md front matter field "author" must be an agent name (or be left out for the operator\'s library)');
    fields.author = author;
  }
  const visibility = text('visibility');
  if (visibility !== undefined) {
    if (!SKILL_VISIBILITIES.includes(visibility as SkillVisibility)) {
      throw new Error(`SKILL.md front matter field "visibility" must be one of ${SKILL_VISIBILITIES.join(', ')} (got "${visibility}")`);
    }
    fields.visibility = visibility as SkillVisibility;
  }
  for (const key of ['created', 'updated'] as const) {
    const value = text(key);
    if (value === undefined) continue;
    if (Number.isNaN(Date.parse(value))) throw new Error(`SKILL.md front matter field "${key}" must be an ISO 8601 time (got "${value}")`);
    fields[key] = value;
  }
  const hash = text('hash');
  if (hash !== undefined) fields.hash = hash;
  const imports = data['imports'];
  if (imports !== undefined && imports !== null) {
    if (typeof imports !== 'string') throw new Error('SKILL.md front matter field "imports" must be a string of NAME@AUTHOR#SHA256 entries');
    fields.imports = parsePins(imports);
  }
  return fields;
}

export function renderSkillMarkdown(fields: SkillFrontMatter, body: string): string {
  const yaml = stringify(
    {
      name: fields.name,
      description: fields.description,
      language: fields.language,
      ...(fields.author !== undefined && { author: fields.author }),
      ...(fields.visibility !== undefined && { visibility: fields.visibility }),
      created: fields.created,
      updated: fields.updated,
      hash: fields.hash,
      ...(fields.imports !== undefined && fields.imports.length > 0 && { imports: formatPins(fields.imports) }),
    },
    { lineWidth: 0 },
  );
  return `---\n${yaml}---\n\n${body.replace(/^\s*\n/, '').replace(/\s*$/, '\n')}`;
}

/** The `imports` field of SKILL.md. */
function formatPins(pins: readonly SkillPin[]): string {
  return pins.map((p) => `${p.name}@${p.author ?? ''}#${p.hash}`).join(' ');
}

/** Reads the `imports` field; throws an Error naming the entry that is malformed. */
function parsePins(text: string): SkillPin[] {
  const pins: SkillPin[] = [];
  for (const item of text.split(/\s+/).filter((s) => s !== '')) {
    const match = PIN.exec(item);
    if (!match || skillNameProblem(match[1] ?? '') !== null) {
      throw new Error(`SKILL.md front matter field "imports" must list NAME@AUTHOR#SHA256 entries separated by spaces (got "${item}")`);
    }
    pins.push({ name: match[1] as string, ...(match[2] !== undefined && { author: match[2] }), hash: match[3] as string });
  }
  return pins;
}
