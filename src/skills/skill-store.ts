// The skill store: `skills/NAME/` folders saved atomically, validated, hot-reloaded and indexed in
// memory (metadata; code from disk or a byte-bounded LRU), plus the compiled module form
// import_skill evaluates. Each agent's skills count against its share (skill-quota.ts), and a
// skill's imports are pinned when it is saved (skill-pins.ts). An index kept fresh by a watcher
// answers (the first call starts the store if `start()` was not called), and the disk is consulted
// only for names the index has not seen yet. Every call may name its caller: then ownership
// applies (skill-access.ts); without one (the daemon itself), everything is reachable.

import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Logger } from '../util/logger.js';
import { renderSkillMarkdown, SKILL_MD } from './front-matter.js';
import { KeyedLock } from '../util/keyed-lock.js';
import { caseClash, pinImports } from './save-checks.js';
import { hashCode, SkillCompiler } from './skill-compiler.js';
import { callerOwns, callerSees, notOwnerError, savedOwnership } from './skill-access.js';
import type { SkillCaller } from './skill-access.js';
import { CODE_FILES, isFolderBusy, readSkillFolder, recoverInterruptedSaves, removeSkillFolder, saveSkillFolder, skillFolderNames } from './skill-disk.js';
import { defaultDescription, renderSkillBody } from './skill-docs.js';
import { SkillError } from './skill-error.js';
import { checkReference, parseReference, referencesOf } from './skill-pins.js';
import type { ImportReference } from './skill-pins.js';
import { DEFAULT_SKILL_CODE_CACHE_BYTES, SkillIndex } from './skill-index.js';
import { DEFAULT_SKILL_QUOTA_BYTES, DEFAULT_SKILL_QUOTA_COUNT } from './skill-quota.js';
import { assertSkillName, skillNameProblem, suggestNames } from './skill-names.js';
import { interpretFolder, invalidEntry, ownerOf, UNKNOWN_OWNER } from './skill-record.js';
import type { IndexEntry, SkillRecord } from './skill-record.js';
import type { SkillRepository } from './skill-repository.js';
import { SkillWatcher } from './skill-watcher.js';
import { walkImportGraph } from './import-graph.js';
import { analyzeForSave, validateSaveInput } from './save-input.js';
import type { CompiledSkill, LoadedSkill, SaveSkillInput, SaveSkillResult, SkillChange, SkillChangeListener, SkillList, SkillMetadata, SkillStoreOptions, SkillStoreStats } from './skill-types.js';

export const DEFAULT_SKILL_CACHE_SIZE = 256;
export const DEFAULT_MAX_SKILL_CODE_BYTES = 256 * 1024;
export { MAX_DESCRIPTION_CHARS, MAX_SKILL_BODY_CHARS } from './save-input.js';
/** Skill folders read at once during a full scan. */
const SCAN_CONCURRENCY = 8;
/** How often crash debris is swept while running, ms (a crashed save's temp folder is stale after 60 s). */
export const DEFAULT_DEBRIS_SWEEP_MS = 60_000;

type StoreState = 'idle' | 'starting' | 'started' | 'closed';

export class SkillStore implements SkillRepository {
  readonly #dir: string;
  readonly #logger: Logger;
  readonly #now: () => Date;
  readonly #maxCodeBytes: number;
  readonly #compiler: SkillCompiler;
  readonly #index: SkillIndex;
  readonly #locks = new KeyedLock();
  #state: StoreState = 'idle';
  #starting: Promise<void> | null = null;
  #closing: Promise<void> | null = null;
  #watcher: SkillWatcher | null = null;
  readonly #debrisSweepMs: number;
  #sweepTimer: NodeJS.Timeout | undefined;

  constructor(options: SkillStoreOptions) {
    if (typeof options.dir !== 'string' || options.dir === '') throw new TypeError('SkillStore option dir must be a non-empty path');
    const cacheSize = options.cacheSize ?? DEFAULT_SKILL_CACHE_SIZE;
    if (!Number.isInteger(cacheSize) || cacheSize < 1 || cacheSize > 1_000_000) {
      throw new RangeError('SkillStore option cacheSize must be an integer between 1 and 1000000');
    }
    const maxCodeBytes = options.maxCodeBytes ?? DEFAULT_MAX_SKILL_CODE_BYTES;
    if (!Number.isInteger(maxCodeBytes) || maxCodeBytes < 1) throw new RangeError('SkillStore option maxCodeBytes must be a positive integer');
    this.#dir = resolve(options.dir);
    this.#logger = options.logger;
    this.#now = options.now ?? (() => new Date());
    this.#maxCodeBytes = maxCodeBytes;
    this.#compiler = new SkillCompiler(cacheSize, options.validatePython);
    const quota = { count: options.quota?.count ?? DEFAULT_SKILL_QUOTA_COUNT, bytes: options.quota?.bytes ?? DEFAULT_SKILL_QUOTA_BYTES };
    this.#index = new SkillIndex(this.#logger, quota, options.codeCacheBytes ?? DEFAULT_SKILL_CODE_CACHE_BYTES);
    const debrisSweepMs = options.debrisSweepMs ?? DEFAULT_DEBRIS_SWEEP_MS;
    if (!Number.isInteger(debrisSweepMs) || debrisSweepMs < 1) throw new RangeError('SkillStore option debrisSweepMs must be a positive integer');
    this.#debrisSweepMs = debrisSweepMs;
  }

  /** The skills folder, absolute. */
  get dir(): string {
    return this.#dir;
  }

  /** Loads every skill and watches the folder; hand edits are then picked up within a second. Every call awaits it (STORE_CLOSED once closed). */
  start(): Promise<void> {
    if (this.#isClosed()) return Promise.reject(SkillError.closed());
    this.#starting ??= this.#start();
    return this.#starting;
  }

  async #start(): Promise<void> {
    try {
      await this.#startOnce();
    } catch (error) {
      // Leave the store as before, so start() can be tried again (e.g. after fixing permissions).
      await this.#watcher?.close();
      this.#watcher = null;
      this.#starting = null;
      if (!this.#isClosed()) this.#state = 'idle';
      throw error;
    }
  }

  async #startOnce(): Promise<void> {
    this.#state = 'starting';
    await mkdir(this.#dir, { recursive: true });
    await recoverInterruptedSaves(this.#dir, this.#logger);
    if (this.#isClosed()) return;
    // Watch first, then scan: an edit made during the scan is then seen by one or the other.
    const watcher = new SkillWatcher(
      this.#dir,
      (name) => void this.#reloadFromWatcher(name),
      this.#logger,
      undefined,
      () => void this.#reconcile(),
    );
    this.#watcher = watcher;
    await watcher.ready();
    if (this.#isClosed()) return;
    await this.#scan();
    if (this.#isClosed()) return;
    this.#state = 'started';
    // A save that crashed (this process's or another's sharing the folder) leaves temp folders behind;
    // sweep them while running, not only at the next start.
    this.#sweepTimer = setInterval(() => void this.#sweepDebris(), this.#debrisSweepMs);
    this.#sweepTimer.unref();
    const stats = this.stats();
    this.#logger.info({ dir: this.#dir, skills: stats.count, invalid: stats.invalid.length }, 'skill store started');
  }

  /**
   * Validates, then writes the skill atomically. Saves of one name through this store are applied
   * in call order (the queue position is taken before the first await), so the last call wins.
   * A caller can replace only its own skills (a name held by another agent is refused, NOT_OWNER).
   */
  async save(input: SaveSkillInput, caller?: SkillCaller): Promise<SaveSkillResult> {
    await this.start();
    const { name, code, language, description, body, shared } = validateSaveInput(input, this.#maxCodeBytes);
    return this.#locks.run(name, async () => {
      // Ownership first: a name held by another agent is refused whatever the code says.
      const existing = await this.#currentEntry(name);
      const owner = existing ? ownerOf(existing) : undefined;
      if (owner && !callerOwns(caller, owner.author)) throw notOwnerError(name, 'saved', owner.author, callerSees(caller, owner.author, owner.visibility));
      // An agent at its share is refused before its code is parsed (the check is exact below).
      if (caller !== undefined) this.#index.quota.reserve(caller.agent, name, Buffer.byteLength(code, 'utf8'))();
      const codeFile = CODE_FILES[language];
      const hash = hashCode(code);
      const analysis = await analyzeForSave(this.#compiler, { name, language, code, hash, syntaxChecked: input.syntaxChecked === true, agent: caller?.agent }, codeFile);
      caseClash(name, this.#knownNames(), (other) => this.#index.get(other), caller);
      const previous = existing?.state === 'valid' ? existing.record.metadata.created : undefined;
      const now = this.#now().toISOString();
      const finalDescription = description ?? defaultDescription(analysis.docs);
      const fields = { name, description: finalDescription, language, ...savedOwnership(caller, shared), created: previous ?? now, updated: now, hash };
      const pins = await pinImports({ name, language, imports: analysis.imports, visibility: fields.visibility }, caller, async (dependency) => this.#index.get(dependency) ?? (await this.#refresh(dependency, 'disk')));
      const markdown = renderSkillMarkdown({ ...fields, imports: pins }, body ?? renderSkillBody(name, finalDescription, language, analysis.docs));
      const bytes = Buffer.byteLength(code, 'utf8') + Buffer.byteLength(markdown, 'utf8');
      const release = fields.author !== undefined ? this.#index.quota.reserve(fields.author, name, bytes) : () => undefined;
      try {
        const files = [{ name: codeFile, content: code }, { name: SKILL_MD, content: markdown }];
        const path = await saveSkillFolder(this.#dir, name, this.#logger, files);
        const metadata: SkillMetadata = { ...fields, exports: analysis.exports };
        this.#index.rememberCode(name, hash, code);
        this.#index.set(name, { state: 'valid', record: { name, language, metadata, imports: analysis.imports, pins } }, 'api', bytes);
        this.#logger.debug({ skill: name, language, hash }, 'skill saved');
        return { success: true as const, ...fields, exports: [...analysis.exports], path };
      } finally {
        release();
      }
    });
  }

  /** A skill the caller may see; another agent's private skill is SKILL_NOT_FOUND, as if it did not exist. */
  async load(name: string, caller?: SkillCaller): Promise<LoadedSkill> {
    const { record, code } = await this.#withCode(name, caller);
    return { name: record.name, code, metadata: { ...record.metadata, exports: [...record.metadata.exports] } };
  }

  /** Every valid skill the caller may see, by name. */
  async list(caller?: SkillCaller): Promise<SkillList> {
    await this.start();
    const skills = this.#index.summaries(caller);
    return { count: skills.length, skills };
  }

  /** Deletes a skill the caller owns; another agent's is NOT_OWNER (or SKILL_NOT_FOUND when private). */
  async delete(name: string, caller?: SkillCaller): Promise<{ success: true }> {
    await this.start();
    assertSkillName(name);
    const removed = await this.#locks.run(name, async () => {
      const existing = await this.#currentEntry(name);
      if (existing) {
        const owner = ownerOf(existing);
        const visible = callerSees(caller, owner.author, owner.visibility);
        if (!visible) return false;
        if (!callerOwns(caller, owner.author)) throw notOwnerError(name, 'deleted', owner.author, visible);
      }
      const existed = await removeSkillFolder(this.#dir, name);
      if (existed || this.#index.has(name)) this.#index.set(name, null, 'api');
      return existed;
    });
    if (!removed) throw await this.#notFound(name, caller);
    this.#logger.debug({ skill: name }, 'skill deleted');
    return { success: true };
  }

  /**
   * The skill as an async function body for import_skill; cached by content hash. Only skills the
   * caller sees. `name` may be an import's reference (NAME@OWNER#HASH, what a compiled skill's
   * imports call): then the skill under that name must be the one pinned.
   */
  async compileSkill(name: string, caller?: SkillCaller): Promise<CompiledSkill> {
    const reference = parseReference(name);
    const { record, code } = await this.#withCode(reference?.name ?? name, caller, reference);
    const references = referencesOf(record, (dependency) => this.#index.get(dependency));
    return this.#compiler.compile({ name: record.name, language: record.language, code, hash: record.metadata.hash }, references);
  }

  /** What `agent`'s skills hold against its share, and the limits. */
  usage(agent: string): ReturnType<SkillIndex['usage']> {
    return this.#index.usage(agent);
  }

  /**
   * Walks the imports of `name` and its dependencies. Returns every skill reached, dependencies
   * before their importers (`name` last). Throws IMPORT_CYCLE, SKILL_NOT_FOUND or SKILL_INVALID
   * naming the chain, or IMPORT_LANGUAGE when a JavaScript/TypeScript skill imports a Python one.
   * Each import resolves by name among the skills the caller sees (pins are checked on import).
   */
  async checkImportGraph(name: string, caller?: SkillCaller): Promise<string[]> {
    return walkImportGraph(name, (skill) => this.compileSkill(skill, caller));
  }

  /**
   * Re-reads one skill from disk now: another daemon sharing the folder said it changed (the
   * change bus), which a network file system's events may never tell this one. Names that are not
   * skill names are ignored.
   */
  async reload(name: string): Promise<void> {
    if (skillNameProblem(name) !== null) return;
    await this.#reloadFromWatcher(name);
  }

  /** Calls `listener` after every change (saves, deletes, hand edits); returns an unsubscribe function. */
  onChange(listener: SkillChangeListener): () => void {
    return this.#index.onChange(listener);
  }

  stats(): SkillStoreStats {
    return this.#index.stats(this.#compiler.stats());
  }

  /** Stops watching; idempotent. Calls after close fail with STORE_CLOSED. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#state = 'closed';
      this.#index.clearListeners();
      clearInterval(this.#sweepTimer);
      await this.#watcher?.close();
    })();
    return this.#closing;
  }

  /** The record and its code (from the LRU, else disk); `reference`: the import must resolve to the pinned skill. */
  async #withCode(name: string, caller: SkillCaller | undefined, reference?: ImportReference | null): Promise<{ record: SkillRecord; code: string }> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const record = await this.#lookup(name, caller);
      if (reference) checkReference(reference, record);
      const cached = this.#index.code(name, record.metadata.hash);
      if (cached !== undefined) return { record, code: cached };
      const folder = await readSkillFolder(this.#dir, name).catch(() => null);
      if (folder?.code !== undefined && hashCode(folder.code) === record.metadata.hash) {
        this.#index.rememberCode(name, record.metadata.hash, folder.code);
        return { record, code: folder.code };
      }
      // Changed on disk since it was indexed: index it again, then look again (its owner may differ now).
      await this.#locks.run(name, () => this.#refresh(name, 'disk'));
    }
    throw new SkillError('SKILL_INVALID', `Skill "${name}" kept changing on disk while it was read; try again.`);
  }

  async #lookup(name: string, caller: SkillCaller | undefined): Promise<SkillRecord> {
    await this.start();
    assertSkillName(name);
    let entry = this.#index.get(name);
    // A name the watcher has not reported yet (another process just saved it).
    entry ??= (await this.#locks.run(name, () => this.#refresh(name, 'disk'))) ?? undefined;
    const owner = entry ? ownerOf(entry) : undefined;
    if (!entry || !callerSees(caller, owner?.author, owner?.visibility)) throw await this.#notFound(name, caller);
    if (entry.state === 'invalid') {
      throw new SkillError('SKILL_INVALID', `Skill "${name}" is broken on disk and is not served: ${entry.reason}. Fix the files in its folder or save it again.`);
    }
    return entry.record;
  }

  /** Re-reads one skill folder and updates the index; the caller holds the name's lock. */
  async #refresh(name: string, source: SkillChange['source']): Promise<IndexEntry | null> {
    let folder;
    try {
      folder = await readSkillFolder(this.#dir, name);
    } catch (error) {
      // Busy with other writers' saves, not broken: what the index holds stays served.
      if (isFolderBusy(error)) return this.#index.get(name) ?? null;
      // Said to agents (SKILL_INVALID): the code of the error, never the host path in its message.
      this.#logger.warn({ code: 'SKILL_READ_FAILED', skill: name, err: error }, 'could not read a skill folder');
      const code = (error as { code?: unknown }).code;
      const entry = invalidEntry(name, `its folder could not be read${typeof code === 'string' ? ` (${code})` : ''}`, UNKNOWN_OWNER);
      this.#index.set(name, entry, source);
      return entry;
    }
    const read = folder ? await interpretFolder(folder, this.#compiler, this.#maxCodeBytes) : null;
    if (this.#isClosed()) return read?.entry ?? null;
    if (read?.code !== undefined && read.entry.state === 'valid') this.#index.rememberCode(name, read.entry.record.metadata.hash, read.code);
    this.#index.set(name, read?.entry ?? null, source, read?.bytes ?? 0);
    return read?.entry ?? null;
  }

  /** Removes debris of crashed saves; a name's debris is handled under its lock, never beside a save of ours. */
  async #sweepDebris(): Promise<void> {
    if (this.#state !== 'started') return;
    try {
      await recoverInterruptedSaves(this.#dir, this.#logger, (name, fn) => this.#locks.run(name, fn));
    } catch (error) {
      this.#logger.warn({ code: 'SKILL_RECOVERY_FAILED', err: error }, 'could not sweep the skills folder for debris of interrupted saves');
    }
  }

  async #reloadFromWatcher(name: string): Promise<void> {
    if (this.#isClosed()) return;
    try {
      const entry = await this.#locks.run(name, () => this.#refresh(name, 'disk'));
      this.#logger.debug({ skill: name, state: entry?.state ?? 'missing' }, 'skill reloaded from disk');
    } catch (error) {
      this.#logger.error({ code: 'SKILL_RELOAD_FAILED', skill: name, err: error }, 'could not reload skill');
    }
  }

  /** Reads every folder; drops index entries whose folder is gone. */
  async #scan(): Promise<void> {
    const names = await skillFolderNames(this.#dir);
    for (const known of this.#index.names()) if (!names.includes(known)) this.#index.set(known, null, 'disk');
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < names.length; i = next++) {
        const name = names[i];
        if (name !== undefined) await this.#locks.run(name, () => this.#refresh(name, 'disk'));
      }
    };
    await Promise.all(Array.from({ length: Math.min(SCAN_CONCURRENCY, names.length) }, worker));
  }

  /** Reloads every skill whose folder appeared or disappeared without its event reaching us. */
  async #reconcile(): Promise<void> {
    if (this.#state !== 'started') return;
    try {
      const names = await skillFolderNames(this.#dir);
      const known = new Set(this.#index.names());
      for (const name of names) if (!known.has(name)) await this.#reloadFromWatcher(name);
      for (const name of known) if (!names.includes(name)) await this.#reloadFromWatcher(name);
    } catch (error) {
      this.#logger.warn({ code: 'SKILL_RECONCILE_FAILED', err: error }, 'could not re-read the skills folder');
    }
  }

  #knownNames(): string[] {
    return this.#index.names();
  }

  /** The skill now under `name` (index, else disk); the caller holds the name's lock. */
  async #currentEntry(name: string): Promise<IndexEntry | null> {
    const indexed = this.#index.get(name);
    if (indexed) return indexed;
    return this.#refresh(name, 'disk');
  }

  /** Names close to `name` that the caller may see: suggestions never reveal a private skill. */
  #visibleNames(caller: SkillCaller | undefined): string[] {
    if (caller?.agentsConfigured !== true) return this.#knownNames();
    return [...this.#index.entries()].flatMap((entry) => {
      const owner = ownerOf(entry);
      return callerSees(caller, owner.author, owner.visibility) ? [entry.state === 'valid' ? entry.record.name : entry.name] : [];
    });
  }

  async #notFound(name: string, caller?: SkillCaller): Promise<SkillError> {
    const suggestions = suggestNames(name, this.#visibleNames(caller));
    const hint = suggestions.length > 0 ? ` Did you mean ${suggestions.map((s) => `"${s}"`).join(' or ')}?` : '';
    return new SkillError('SKILL_NOT_FOUND', `Skill "${name}" not found.${hint} Call list_skills to see the saved skills.`, { suggestions });
  }

  #isClosed(): boolean {
    return this.#state === 'closed';
  }
}
