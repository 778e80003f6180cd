// The agents' vault files (vault-journal.ts) as the embedded vaults use them: the in-memory store
// keeps nothing past its process, so each agent's file is read into it on first use, every token
// issued is appended before its call returns, and a restore that misses reads what another process
// on the folder appended since (two stdio coordinators of one user share the data folder). A
// file that has grown past its live tokens is compacted when it is read.

import { VaultJournal } from './vault-journal.js';
import type { JournalPosition, VaultRecord } from './vault-journal.js';

export class VaultDisk {
  readonly #journal: VaultJournal;
  readonly #now: () => number;
  /** How far this process has read each file, so a miss reads only what was appended since. */
  readonly #positions = new Map<string, JournalPosition>();

  constructor(dir: string, now: () => number) {
    this.#journal = new VaultJournal(dir);
    this.#now = now;
  }

  /** The agent's secret and its tokens (the last line of each), or undefined when it has no file. */
  async load(id: string): Promise<{ secret: Uint8Array; records: VaultRecord[] } | undefined> {
    const loaded = await this.#journal.load(id);
    if (loaded === undefined) return undefined;
    this.#positions.set(id, loaded.position);
    const records = lastOfEach(loaded.records);
    const now = this.#now();
    const live = records.filter((r) => r.expiresAt > now);
    if (VaultJournal.needsCompaction(loaded.lines, live.length)) await this.#journal.rewrite(id, loaded.secret, live, loaded.position);
    return { secret: loaded.secret, records };
  }

  /** Creates the agent's file with `secret`, unless another process made it first: then its secret. */
  async create(id: string, secret: Uint8Array): Promise<Uint8Array> {
    const theirs = await this.#journal.create(id, secret);
    if (theirs === undefined) return secret;
    this.#positions.set(id, theirs.position);
    return theirs.secret;
  }

  /** Appends tokens issued or renewed; resolves once they are on disk. */
  append(id: string, records: readonly VaultRecord[]): Promise<void> {
    return this.#journal.append(id, records);
  }

  /** Tokens appended to the agent's file since this process last read it (by anyone); [] when it cannot be read now. */
  async since(id: string): Promise<VaultRecord[]> {
    try {
      const from = this.#positions.get(id);
      let read = from === undefined ? undefined : await this.#journal.since(id, from);
      // Rewritten since (a compaction): read it whole once.
      read ??= await this.#journal.load(id);
      if (read === undefined) return [];
      this.#positions.set(id, read.position);
      return lastOfEach(read.records);
    } catch {
      // A file that does not read now leaves the tokens unknown; the next miss tries again.
      return [];
    }
  }
}

function lastOfEach(records: readonly VaultRecord[]): VaultRecord[] {
  const byToken = new Map<string, VaultRecord>();
  for (const r of records) {
    byToken.delete(r.token);
    byToken.set(r.token, r);
  }
  return [...byToken.values()];
}
