// Change notifications between daemons that share data folders: a daemon that saved a skill or
// saw a catalog file change says so, and the others reload that name at once instead of relying
// on file events, which a network file system does not deliver across machines. Embedded, there
// are no peers and the bus does nothing.

/** What changed: a skill by name, or catalog files by path relative to the catalog folder. */
export type ChangeTopic = 'skills' | 'catalog';

export interface ChangeMessage {
  topic: ChangeTopic;
  /** Skill names, or catalog file paths. */
  names: string[];
}

export interface ChangeBus {
  /** Tells the other daemons; never throws (a lost notice is caught up by the watchers' periodic reconciliation). */
  publish(message: ChangeMessage): void;
  /** Calls `listener` for every notice of another daemon on `topic`; returns an unsubscribe function. */
  subscribe(topic: ChangeTopic, listener: (names: string[]) => void): () => void;
  close(): Promise<void>;
}

/** The embedded bus: one daemon, no peers. */
export const NO_PEERS_BUS: ChangeBus = Object.freeze({
  publish: () => {},
  subscribe: () => () => {},
  close: () => Promise.resolve(),
});
