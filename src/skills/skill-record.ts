// What the store serves for one skill folder: a valid record (code, metadata, imports), or the
// reason the folder is not served. Folders written by hand are interpreted leniently where the
// intent is clear (no SKILL.md: metadata from the code; code edited after SKILL.md: the hash and
// time of the code as it is) and refused where it is not (broken code or front matter). Ownership
// is read first, so even a broken folder stays hidden from agents it is private to. The index keeps
// metadata only: code is read from disk (or the store's LRU) when it is needed.

import { parseSkillMarkdown } from './front-matter.js';
import type { SkillCompiler } from './skill-compiler.js';
import { defaultDescription } from './skill-docs.js';
import { hashCode } from './skill-compiler.js';
import { CODE_FILES } from './skill-disk.js';
import type { SkillFolder } from './skill-disk.js';
import { skillNameProblem } from './skill-names.js';
import type { SkillPin } from './front-matter.js';
import type { SkillChange, SkillLanguage, SkillMetadata, SkillVisibility } from './skill-types.js';

export interface SkillRecord {
  name: string;
  language: SkillLanguage;
  metadata: SkillMetadata;
  imports: string[];
  /** What its imports resolved to when it was saved (none for skills written by hand). */
  pins: SkillPin[];
}

/** A folder as the store serves it, with the code read (kept by the caller's LRU, not the index) and its size on disk. */
export interface InterpretedFolder {
  entry: IndexEntry;
  code?: string;
  /** Bytes of the code and SKILL.md, counted against the author's skill quota. */
  bytes: number;
}

/** Whose a folder is. No author: the operator's library (shared), or unknown when SKILL.md is broken. */
export interface SkillOwner {
  author?: string;
  visibility: SkillVisibility;
}

/** A folder whose SKILL.md cannot be read may be some agent's private skill: hidden from agents, changed by none. */
export const UNKNOWN_OWNER: SkillOwner = { visibility: 'private' };

export type IndexEntry =
  /** `warning`: served, but something about the folder deserves a word in the log. */
  | { state: 'valid'; record: SkillRecord; warning?: string }
  | ({ state: 'invalid'; name: string; reason: string } & SkillOwner);

export function invalidEntry(name: string, reason: string, owner: SkillOwner): IndexEntry {
  return { state: 'invalid', name, reason, ...owner };
}

/** The owner an entry records, valid or not. */
export function ownerOf(entry: IndexEntry): SkillOwner {
  const source = entry.state === 'valid' ? entry.record.metadata : entry;
  return { ...(source.author !== undefined && { author: source.author }), visibility: source.visibility };
}

export async function interpretFolder(folder: SkillFolder, compiler: SkillCompiler, maxCodeBytes: number): Promise<InterpretedFolder> {
  const bytes = Buffer.byteLength(folder.code ?? '', 'utf8') + Buffer.byteLength(folder.markdown ?? '', 'utf8');
  const entry = await interpretEntry(folder, compiler, maxCodeBytes);
  return entry.state === 'valid' && folder.code !== undefined ? { entry, code: folder.code, bytes } : { entry, bytes };
}

async function interpretEntry(folder: SkillFolder, compiler: SkillCompiler, maxCodeBytes: number): Promise<IndexEntry> {
  const { name } = folder;
  let fields: ReturnType<typeof parseSkillMarkdown>['fields'] = {};
  let markdownProblem: string | null = null;
  if (folder.markdown !== undefined) {
    try {
      fields = parseSkillMarkdown(folder.markdown).fields;
    } catch (error) {
      markdownProblem = error instanceof Error ? error.message : String(error);
    }
  }
  // Written by an agent: private unless it says otherwise; no author: the operator's library.
  const owner: SkillOwner =
    markdownProblem !== null ? UNKNOWN_OWNER : fields.author !== undefined ? { author: fields.author, visibility: fields.visibility ?? 'private' } : { visibility: 'shared' };
  const nameProblem = skillNameProblem(name);
  if (nameProblem !== null) return invalidEntry(name, `folder name is not a valid skill name: ${nameProblem}`, owner);
  if (markdownProblem !== null) return invalidEntry(name, markdownProblem, owner);
  if (folder.codeFiles.length === 0) {
    return invalidEntry(name, `no code file: add one of ${Object.values(CODE_FILES).join(', ')}`, owner);
  }
  if (folder.codeFiles.length > 1) {
    return invalidEntry(name, `more than one code file (${folder.codeFiles.join(', ')}): keep exactly one`, owner);
  }
  const { code, language } = folder;
  if (code === undefined || language === undefined) return invalidEntry(name, 'code file could not be read', owner);
  const codeFile = CODE_FILES[language];
  if (Buffer.byteLength(code, 'utf8') > maxCodeBytes) {
    return invalidEntry(name, `${codeFile} is larger than the ${maxCodeBytes}-byte limit for skills`, owner);
  }
  if (fields.language !== undefined && fields.language !== language) {
    return invalidEntry(name, `SKILL.md says language "${fields.language}" but the code file is ${codeFile}`, owner);
  }

  const hash = hashCode(code);
  let analysis;
  try {
    analysis = await compiler.analyze({ name, language, code, hash }, `${name}/${codeFile}`);
  } catch (error) {
    return invalidEntry(name, error instanceof Error ? error.message : String(error), owner);
  }

  const fileTime = (folder.codeModified ?? new Date()).toISOString();
  // Code edited by hand after SKILL.md was written: its time is the file's, not the stale field's.
  const updated = fields.hash === hash && fields.updated !== undefined ? fields.updated : fileTime;
  const metadata: SkillMetadata = {
    name,
    description: fields.description ?? defaultDescription(analysis.docs),
    language,
    ...owner,
    created: fields.created ?? fileTime,
    updated,
    hash,
    exports: analysis.exports,
  };
  const record: SkillRecord = { name, language, metadata, imports: analysis.imports, pins: fields.imports ?? [] };
  if (fields.name !== undefined && fields.name !== name) {
    return { state: 'valid', record, warning: `SKILL.md names "${fields.name}"; the folder name "${name}" is used` };
  }
  return { state: 'valid', record };
}

/** What a change of a name's entry means to listeners; null when nothing observable changed. */
export function changeKind(previous: IndexEntry | undefined, next: IndexEntry | null): SkillChange['kind'] | null {
  if (!next) return previous ? 'removed' : null;
  if (fingerprint(previous) === fingerprint(next)) return null;
  if (next.state === 'invalid') return 'invalid';
  return previous?.state === 'valid' ? 'changed' : 'added';
}

function fingerprint(entry: IndexEntry | undefined): string {
  if (!entry) return '';
  if (entry.state === 'invalid') return `invalid:${entry.reason}`;
  return `valid:${JSON.stringify(entry.record.metadata)}`;
}
