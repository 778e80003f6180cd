// Turns skill code into what the store needs: an analysis (exports, imports, docs; a parse that
// also validates) and the compiled module body for import_skill. Both sit in LRU caches keyed by
// language and content hash (and, for the module, the references its imports compile to), so a
// hot skill is never reparsed and a changed one (new hash) can never be served from a stale entry.
// The caches are bounded by bytes as well as entries: a skill may be as large as limits.maxCodeBytes.

import { skillFormat } from '../config/languages.js';
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { transformModule } from './module-transform.js';
import { CODE_FILES } from './skill-disk.js';
import { describeJsExports, describePythonExports } from './skill-docs.js';
import type { ExportDoc } from './skill-docs.js';
import { checkPython, parseSkillModule, pythonExports } from './skill-parse.js';

/** The languages whose skills are ES modules (the JavaScript row's: runtimes.ts). */
type EsModuleLanguage = 'javascript' | 'typescript';
import type { CompiledSkill, PythonValidator, SkillLanguage } from './skill-types.js';

export interface SkillAnalysis {
  exports: string[];
  imports: string[];
  docs: ExportDoc[];
}

export interface SkillSource {
  name: string;
  language: SkillLanguage;
  code: string;
  hash: string;
  /** Python already parsed by the saving call's own interpreter: no pool interpreter is asked. */
  syntaxChecked?: boolean;
  /** Whose save it is: a Python check runs as that agent, in an interpreter bound to it. */
  agent?: string;
}

type CompiledModule = Omit<CompiledSkill, 'name'>;

/** Characters of compiled bodies (and of analyses) kept, each. */
export const DEFAULT_COMPILED_CACHE_BYTES = 32 * 1024 * 1024;

export function hashCode(code: string): string {
  return createHash('sha256').update(code, 'utf8').digest('hex');
}

export class SkillCompiler {
  readonly #compiled: LRUCache<string, CompiledModule>;
  readonly #analyses: LRUCache<string, SkillAnalysis>;
  readonly #validatePython: PythonValidator | undefined;
  #hits = 0;
  #misses = 0;

  constructor(cacheSize: number, validatePython?: PythonValidator, cacheBytes = DEFAULT_COMPILED_CACHE_BYTES) {
    this.#compiled = new LRUCache({ max: cacheSize, maxSize: cacheBytes, sizeCalculation: (m) => Math.max(1, m.body.length) });
    this.#analyses = new LRUCache({ max: cacheSize, maxSize: cacheBytes, sizeCalculation: analysisSize });
    this.#validatePython = validatePython;
  }

  /** Parses (validating) and describes the code; throws SkillError SYNTAX_ERROR / IMPORT_NOT_ALLOWED. */
  async analyze(source: SkillSource, label: string): Promise<SkillAnalysis> {
    const key = `${source.language}:${source.hash}`;
    const cached = this.#analyses.get(key);
    if (cached) return cached;
    let analysis: SkillAnalysis;
    if (skillFormat(source.language) === 'python-source') {
      if (!source.syntaxChecked) await checkPython(source.code, this.#validatePython, label, source.agent);
      const exports = pythonExports(source.code);
      analysis = { exports, imports: [], docs: describePythonExports(source.code, exports) };
    } else {
      const parsed = await parseSkillModule(source.code, source.language as EsModuleLanguage, label, source.agent);
      const transformed = transformModule(parsed, label);
      analysis = {
        exports: transformed.exports,
        imports: transformed.imports,
        docs: describeJsExports(source.code, parsed.program, parsed.comments, transformed.locals),
      };
    }
    this.#analyses.set(key, analysis);
    return analysis;
  }

  /**
   * The module form the sandbox evaluates, from the cache when the content hash is known.
   * `references`: what each imported skill's import_skill call names (its pin); default the name.
   */
  async compile(source: SkillSource, references: Readonly<Record<string, string>> = {}): Promise<CompiledSkill> {
    const refs = Object.entries(references).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const key = `${source.language}:${source.hash}:${JSON.stringify(refs)}`;
    const cached = this.#compiled.get(key);
    if (cached) {
      this.#hits++;
      return withName(source.name, cached);
    }
    this.#misses++;
    let compiled: CompiledModule;
    const label = `${source.name}/${CODE_FILES[source.language]}`;
    if (skillFormat(source.language) === 'python-source') {
      compiled = { language: source.language, hash: source.hash, body: source.code, exports: pythonExports(source.code), imports: [] };
    } else {
      const transformed = transformModule(await parseSkillModule(source.code, source.language as EsModuleLanguage, label, source.agent), label, (skill) => references[skill] ?? skill);
      compiled = { language: source.language, hash: source.hash, body: transformed.body, exports: transformed.exports, imports: transformed.imports };
    }
    this.#compiled.set(key, compiled);
    return withName(source.name, compiled);
  }

  stats(): { size: number; hits: number; misses: number } {
    return { size: this.#compiled.size, hits: this.#hits, misses: this.#misses };
  }
}

function analysisSize(analysis: SkillAnalysis): number {
  let size = 1;
  for (const name of [...analysis.exports, ...analysis.imports]) size += name.length;
  for (const doc of analysis.docs) size += JSON.stringify(doc).length;
  return size;
}

/** A copy the caller may keep or change without touching the cached entry. */
function withName(name: string, module: CompiledModule): CompiledSkill {
  return { name, ...module, exports: [...module.exports], imports: [...module.imports] };
}
