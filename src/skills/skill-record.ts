// What the store serves for one skill folder: a valid record (code, metadata, imports), or the
// reason the folder is not served. Folders written by hand are interpreted leniently where the
// intent is clear (no SKILL.md: metadata from the code; code edited after SKILL.md: the hash and
// time of the code as it is) and refused where it is not (broken code or front matter).

import { parseSkillMarkdown } from './front-matter.js';
import type { SkillCompiler } from './skill-compiler.js';
import { defaultDescription } from './skill-docs.js';
import { hashCode } from './skill-compiler.js';
import { CODE_FILES } from './skill-disk.js';
import type { SkillFolder } from './skill-disk.js';
import { skillNameProblem } from './skill-names.js';
import type { SkillLanguage, SkillMetadata } from './skill-types.js';

export interface SkillRecord {
  name: string;
  language: SkillLanguage;
  code: string;
  metadata: SkillMetadata;
  imports: string[];
}

export type IndexEntry =
  /** `warning`: served, but something about the folder deserves a word in the log. */
  | { state: 'valid'; record: SkillRecord; warning?: string }
  | { state: 'invalid'; name: string; reason: string };

export function invalidEntry(name: string, reason: string): IndexEntry {
  return { state: 'invalid', name, reason };
}

export async function interpretFolder(
  folder: SkillFolder,
  compiler: SkillCompiler,
  maxCodeBytes: number,
): Promise<IndexEntry> {
  const { name } = folder;
  const nameProblem = skillNameProblem(name);
  if (nameProblem !== null) return invalidEntry(name, `folder name is not a valid skill name: ${nameProblem}`);
  if (folder.codeFiles.length === 0) {
    return invalidEntry(name, `no code file: add one of ${Object.values(CODE_FILES).join(', ')}`);
  }
  if (folder.codeFiles.length > 1) {
    return invalidEntry(name, `more than one code file (${folder.codeFiles.join(', ')}): keep exactly one`);
  }
  const { code, language } = folder;
  if (code === undefined || language === undefined) return invalidEntry(name, 'code file could not be read');
  const codeFile = CODE_FILES[language];
  if (Buffer.byteLength(code, 'utf8') > maxCodeBytes) {
    return invalidEntry(name, `${codeFile} is larger than the ${maxCodeBytes}-byte limit for skills`);
  }

  let fields: ReturnType<typeof parseSkillMarkdown>['fields'] = {};
  if (folder.markdown !== undefined) {
    try {
      fields = parseSkillMarkdown(folder.markdown).fields;
    } catch (error) {
      return invalidEntry(name, error instanceof Error ? error.message : String(error));
    }
  }
  if (fields.language !== undefined && fields.language !== language) {
    return invalidEntry(name, `SKILL.md says language "${fields.language}" but the code file is ${codeFile}`);
  }

  const hash = hashCode(code);
  let analysis;
  try {
    analysis = await compiler.analyze({ name, language, code, hash }, `${name}/${codeFile}`);
  } catch (error) {
    return invalidEntry(name, error instanceof Error ? error.message : String(error));
  }

  const fileTime = (folder.codeModified ?? new Date()).toISOString();
  // Code edited by hand after SKILL.md was written: its time is the file's, not the stale field's.
  const updated = fields.hash === hash && fields.updated !== undefined ? fields.updated : fileTime;
  const metadata: SkillMetadata = {
    name,
    description: fields.description ?? defaultDescription(analysis.docs),
    language,
    created: fields.created ?? fileTime,
    updated,
    hash,
    exports: analysis.exports,
  };
  const record: SkillRecord = { name, language, code, metadata, imports: analysis.imports };
  if (fields.name !== undefined && fields.name !== name) {
    return { state: 'valid', record, warning: `SKILL.md names "${fields.name}"; the folder name "${name}" is used` };
  }
  return { state: 'valid', record };
}
