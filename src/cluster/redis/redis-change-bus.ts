// The change bus over Redis pub/sub: one channel, messages stamped with the sending daemon's id so
// a daemon ignores its own. Delivery is at most once; the skill and catalog watchers reconcile
// with the folders every few seconds anyway, so a notice lost during an outage is caught up.

import { randomUUID } from 'node:crypto';
import type { Logger } from '../../util/logger.js';
import type { ChangeBus, ChangeMessage, ChangeTopic } from '../change-bus.js';
import type { RedisConnection } from './redis-connection.js';

/** Names carried by one notice at most; a larger change is sent in several. */
const MAX_NAMES_PER_NOTICE = 500;

interface Envelope extends ChangeMessage {
  from: string;
}

export class RedisChangeBus implements ChangeBus {
  readonly #redis: RedisConnection;
  readonly #logger: Logger;
  readonly #channel: string;
  readonly #id = randomUUID();
  readonly #listeners = new Map<ChangeTopic, Set<(names: string[]) => void>>();
  #closed = false;

  private constructor(redis: RedisConnection, logger: Logger) {
    this.#redis = redis;
    this.#logger = logger;
    this.#channel = `${redis.prefix}changes`;
  }

  /** Subscribes before resolving, so no notice sent after start is missed. */
  static async start(redis: RedisConnection, logger: Logger): Promise<RedisChangeBus> {
    const bus = new RedisChangeBus(redis, logger);
    const sub = await redis.subscriber();
    await sub.subscribe(bus.#channel, (raw: string) => bus.#deliver(raw));
    return bus;
  }

  publish(message: ChangeMessage): void {
    if (this.#closed || message.names.length === 0) return;
    for (let at = 0; at < message.names.length; at += MAX_NAMES_PER_NOTICE) {
      const envelope: Envelope = { from: this.#id, topic: message.topic, names: message.names.slice(at, at + MAX_NAMES_PER_NOTICE) };
      this.#redis
        .run('change notification', (client) => client.publish(this.#channel, JSON.stringify(envelope)))
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
    this.#listeners.clear();
  }
}
