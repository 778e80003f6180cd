// The daemon's connection to Redis, the shared store of a cluster: one command client, one
// subscriber (pub/sub needs its own connection), the key prefix every key is built under, and the
// state /healthz reports. Commands never wait for a connection that is down (no offline queue):
// they fail at once with STORE_UNAVAILABLE, and the client keeps reconnecting in the background.

import { createClient } from 'redis';
import type { SharedStoreHealth } from '../../mcp/mcp-types.js';
import type { Logger } from '../../util/logger.js';
import { Sealer } from '../../util/sealing.js';
import { isStoreError, StoreError } from '../../util/store-error.js';

export type RedisClient = ReturnType<typeof createClient>;

/** Longest pause between two reconnection attempts, ms. */
export const MAX_RECONNECT_DELAY_MS = 2_000;
/** A command that gets no answer this long fails (a Redis that hangs counts as down), ms. */
export const COMMAND_TIMEOUT_MS = 2_000;
/** Prefix of every key and channel, so a Redis shared with other software stays tidy. */
export const KEY_PREFIX = 'cem:';

export interface RedisConnectionOptions {
  url: string;
  /** The AES-256 key shared by the daemons (config redisKey). */
  sealingKey: Uint8Array;
  logger: Logger;
}

export class RedisConnection {
  readonly client: RedisClient;
  readonly sealer: Sealer;
  readonly prefix = KEY_PREFIX;
  readonly endpoint: string;
  readonly #logger: Logger;
  #subscriber: RedisClient | null = null;
  #lastError: string | undefined;
  #wasUp = false;
  #closed: Promise<void> | null = null;

  constructor(options: RedisConnectionOptions) {
    this.endpoint = redactUrl(options.url);
    this.#logger = options.logger;
    this.sealer = new Sealer(options.sealingKey);
    this.client = this.#newClient(options.url, 'commands');
  }

  #newClient(url: string, role: string): RedisClient {
    const client = createClient({
      url,
      disableOfflineQueue: true,
      pingInterval: 5_000,
      socket: { connectTimeout: COMMAND_TIMEOUT_MS, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** Math.min(retries, 6), MAX_RECONNECT_DELAY_MS) },
    });
    client.on('error', (error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      if (this.#lastError !== message) this.#logger.warn({ code: 'REDIS_UNAVAILABLE', redis: this.endpoint, role, err: message }, 'Redis connection error; retrying');
      this.#lastError = message;
    });
    client.on('ready', () => {
      if (this.#wasUp || this.#lastError !== undefined) this.#logger.info({ redis: this.endpoint, role }, 'Redis connection ready');
      this.#wasUp = true;
      this.#lastError = undefined;
    });
    return client;
  }

  /** Connects; fails with a clear message when Redis cannot be reached at start. */
  async connect(): Promise<void> {
    try {
      await withTimeout(this.client.connect(), COMMAND_TIMEOUT_MS * 2);
    } catch (error) {
      await this.close();
      throw new StoreError('STORE_UNAVAILABLE', `cannot connect to Redis at ${this.endpoint} (config redis / CODE_EXEC_REDIS): ${errorText(error)}`, { cause: error });
    }
  }

  /** The pub/sub connection, opened on first use. */
  async subscriber(): Promise<RedisClient> {
    if (this.#subscriber) return this.#subscriber;
    const sub = this.client.duplicate({ disableOfflineQueue: false });
    sub.on('error', () => {
      // reported through the command client; the subscriber reconnects and resubscribes by itself
    });
    this.#subscriber = sub;
    await sub.connect();
    return sub;
  }

  get up(): boolean {
    return this.client.isReady;
  }

  health(): SharedStoreHealth {
    return { kind: 'redis', endpoint: this.endpoint, up: this.up, ...(!this.up && this.#lastError ? { error: this.#lastError } : {}) };
  }

  /**
   * Runs Redis commands for `what` (a phrase: "the PII vault"); any failure to reach Redis becomes
   * STORE_UNAVAILABLE naming what is unavailable.
   */
  async run<T>(what: string, work: (client: RedisClient) => Promise<T>): Promise<T> {
    if (!this.client.isReady) throw this.#unavailable(what, this.#lastError ?? 'not connected');
    try {
      return await withTimeout(work(this.client), COMMAND_TIMEOUT_MS);
    } catch (error) {
      if (isStoreError(error)) throw error;
      throw this.#unavailable(what, errorText(error), error);
    }
  }

  #unavailable(what: string, reason: string, cause?: unknown): StoreError {
    return new StoreError('STORE_UNAVAILABLE', `${what} is unavailable: the shared store (Redis at ${this.endpoint}) does not answer (${reason}); retry in a few seconds, the daemon reconnects by itself`, { cause });
  }

  /** Closes both connections; idempotent, never throws. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      for (const client of [this.#subscriber, this.client]) {
        if (!client) continue;
        try {
          if (client.isOpen) await client.close();
          else client.destroy();
        } catch {
          // Already destroyed (the client throws "The client is closed"), or failing to close.
          try {
            client.destroy();
          } catch {
            // nothing left to close
          }
        }
      }
    })();
    return this.#closed;
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message || error.name : String(error);
}

/** The URL without user name and password. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname && u.pathname !== '/' ? u.pathname : ''}`;
  } catch {
    return '(invalid URL)';
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
