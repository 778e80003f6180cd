// Change notifications between daemons that share data folders: a daemon that saved a skill or
// saw a catalog file change says so, and the others reload that name at once instead of relying
// on file events, which a network file system does not deliver across machines. Written once over
// the shared store's publish/subscribe: on the in-memory store (one daemon) only this daemon
// hears, and ignores, its own notices. Delivery is at most once; the skill and catalog watchers
// reconcile with the folders every few seconds anyway, so a notice lost in an outage is caught up.

import { randomUUID } from 'node:crypto';
import type { SharedStore } from '../store/shared-store.js';
import type { Logger } from '../util/logger.js';

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

/** Names carried by one notice at most; a larger change is sent in several. */
const MAX_NAMES_PER_NOTICE = 500;
const CHANNEL = 'changes';

interface Envelope extends ChangeMessage {
  from: string;
}

export class StoreChangeBus implements ChangeBus {
  readonly #store: SharedStore;
  readonly #logger: Logger;
  readonly #id = randomUUID();
  readonly #listeners = new Map<ChangeTopic, Set<(names: string[]) => void>>();
  #unsubscribe: () => void = () => {};
  #closed = false;

  private constructor(store: SharedStore, logger: Logger) {
    this.#store = store;
    this.#logger = logger;
  }

  /** Subscribes before resolving, so no notice sent after start is missed. */
  static async start(store: SharedStore, logger: Logger): Promise<StoreChangeBus> {
    const bus = new StoreChangeBus(store, logger);
    bus.#unsubscribe = await store.subscribe(CHANNEL, (raw) => bus.#deliver(raw));
    return bus;
  }

  publish(message: ChangeMessage): void {
    if (this.#closed || message.names.length === 0) return;
    for (let at = 0; at < message.names.length; at += MAX_NAMES_PER_NOTICE) {
      const envelope: Envelope = { from: this.#id, topic: message.topic, names: message.names.slice(at, at + MAX_NAMES_PER_NOTICE) };
      this.#store
        .publish(CHANNEL, JSON.stringify(envelope))
        .catch((error: unknown) => this.#logger.warn({ code: 'CHANGE_NOTICE_LOST', topic: message.topic, err: error }, 'could not tell the other daemons about a change; they catch up within seconds'));
    }
  }

  subscribe(topic: ChangeTopic, listener: (names: string[]) => void): () => void {
    let set = this.#listeners.get(topic);
    if (!set) this.#listeners.set(topic, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  #deliver(raw: string): void {
    let envelope: Envelope;
    try {
      envelope = JSON.parse(raw) as Envelope;
    } catch {
      return;
    }
    if (this.#closed || envelope.from === this.#id || !Array.isArray(envelope.names)) return;
    const names = envelope.names.filter((n): n is string => typeof n === 'string');
    for (const listener of this.#listeners.get(envelope.topic) ?? []) {
      try {
        listener(names);
      } catch (error) {
        this.#logger.warn({ err: error, topic: envelope.topic }, 'change listener failed');
      }
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#unsubscribe();
    this.#listeners.clear();
  }
}
