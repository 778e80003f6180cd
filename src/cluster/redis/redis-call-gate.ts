// The cluster-wide limit of an agent's calls in flight (limits.maxCallsInFlightPerAgent or the
// agent's maxCallsInFlight, per language), held in Redis so that spreading sessions over the
// daemons never multiplies it. Per agent and pool there is one hash, a field per daemon holding
// how many of the agent's calls it runs; a daemon takes a slot with one atomic script that sums
// the fields of daemons whose lease is alive (dropping the others) and writes its own new count
// only if the sum stays within the limit. So the limit holds strictly while Redis keeps its data:
// every start is decided by Redis alone, against every live daemon's exact count.
//
// Each daemon writes only its own field, one command after another on one connection: an
// absolute count when it takes a slot (one take at a time per agent, so it knows its exact count)
// and on a heartbeat while it holds anything, one less when it releases. A release lost in an
// outage, or a Redis restart that forgot everything, is repaired by the next heartbeat. A killed daemon's lease
// lapses after SLOT_LEASE_MS, and its slots with it. Calls past the limit wait here, in order,
// within the agent's queue bound, their deadline and cancellation, and try again when a daemon
// announces a release and at least every SLOT_RETRY_MS (a dead daemon's lapse is not announced).
// With Redis down a call that needs a slot fails at once with the store's clear error.

import { randomUUID } from 'node:crypto';
import type { ErrorInfo, Outcome } from '../../../workers/kit/protocol.js';
import { timeoutError } from '../../../workers/kit/guest-errors.js';
import type { GuestErrorName } from '../../../workers/kit/guest-errors.js';
import { refusal } from '../../executor/admission.js';
import type { CallGate, GatedCall, GateSlot } from '../../executor/call-gate.js';
import type { Finished } from '../../executor/sandbox-process.js';
import { languageOfKind } from '../../executor/runtimes.js';
import type { Logger } from '../../util/logger.js';
import { HEARTBEAT_MS, PEER_EXPIRY_MS } from '../cluster-membership.js';
import type { RedisConnection } from './redis-connection.js';
import { isStoreError } from '../../util/store-error.js';

/** A daemon's slots count for the others this long after its last sign of life, ms. */
export const SLOT_LEASE_MS = PEER_EXPIRY_MS;
/** How often a daemon holding slots renews its lease and rewrites its counts, ms. */
export const SLOT_HEARTBEAT_MS = HEARTBEAT_MS;
/** A call waiting for a slot asks again at least this often, ms. */
export const SLOT_RETRY_MS = 250;
const WHAT = 'the cluster-wide limit of calls in flight';

/**
 * KEYS: the agent's slot hash, this daemon's lease. ARGV: daemon id, the count this daemon would
 * hold, the limit, lease ms, lease key prefix, hash ttl ms. Returns -1 when taken, else the other
 * live daemons' sum.
 */
const ACQUIRE = `
local fields = redis.call('HGETALL', KEYS[1])
local others = 0
for i = 1, #fields, 2 do
  local daemon = fields[i]
  if daemon ~= ARGV[1] then
    if redis.call('EXISTS', ARGV[5] .. daemon) == 1 then
      others = others + (tonumber(fields[i + 1]) or 0)
    else
      redis.call('HDEL', KEYS[1], daemon)
    end
  end
end
if others + tonumber(ARGV[2]) > tonumber(ARGV[3]) then return others end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('SET', KEYS[2], '1', 'PX', ARGV[4])
return -1
`;

/**
 * KEYS: the agent's slot hash. ARGV: daemon id, release channel. One slot less, relative: a take
 * of this daemon's may be on its way (its absolute count, sent earlier, does not know of this).
 */
const RELEASE = `
if redis.call('HINCRBY', KEYS[1], ARGV[1], -1) <= 0 then redis.call('HDEL', KEYS[1], ARGV[1]) end
redis.call('PUBLISH', ARGV[2], KEYS[1])
return 1
`;

interface Waiter {
  start(): void;
  fail(finished: Finished): void;
}

/** One agent's slots in one pool, as this daemon sees them. */
interface Line {
  key: string;
  slot: GateSlot;
  /** Slots this daemon holds (granted by Redis, not yet released). */
  held: number;
  waiters: Waiter[];
  /** An acquire is on its way to Redis. */
  acquiring: boolean;
  /** The last acquire was refused: new calls wait, within the queue bound. */
  blocked: boolean;
  /** Redis may hold another count than `held` (a release failed): the heartbeat rewrites it. */
  dirty: boolean;
  retry: NodeJS.Timeout | undefined;
}

export class RedisCallGate implements CallGate {
  readonly #redis: RedisConnection;
  readonly #logger: Logger;
  readonly #id = randomUUID();
  readonly #leasePrefix: string;
  readonly #leaseKey: string;
  readonly #channel: string;
  readonly #lines = new Map<string, Line>();
  readonly #heartbeat: NodeJS.Timeout;
  #closed = false;

  private constructor(redis: RedisConnection, logger: Logger) {
    this.#redis = redis;
    this.#logger = logger;
    this.#leasePrefix = `${redis.prefix}inflight-lease:`;
    this.#leaseKey = this.#leasePrefix + this.#id;
    this.#channel = `${redis.prefix}inflight-released`;
    this.#heartbeat = setInterval(() => void this.#beat(), SLOT_HEARTBEAT_MS);
    this.#heartbeat.unref();
  }

  /** Subscribes to release notices before resolving. */
  static async start(redis: RedisConnection, logger: Logger): Promise<RedisCallGate> {
    const gate = new RedisCallGate(redis, logger);
    const sub = await redis.subscriber();
    await sub.subscribe(gate.#channel, (key: string) => {
      const line = gate.#lines.get(key);
      if (line?.blocked) gate.#pump(line);
    });
    return gate;
  }

  /** Slots this daemon holds per "pool:agent" (tests, health). */
  held(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const line of this.#lines.values()) if (line.held > 0) out[`${line.slot.pool}:${line.slot.agent}`] = line.held;
    return out;
  }

  run(slot: GateSlot, call: GatedCall, work: () => Promise<Finished>): Promise<Finished> {
    if (this.#closed) return Promise.resolve(failed('CancelledError', 'the daemon is shutting down'));
    if (call.signal?.aborted) return Promise.resolve(failed('CancelledError', 'the call was cancelled before it started'));
    const line = this.#line(slot);
    if (line.blocked && line.waiters.length >= slot.maxQueued) return Promise.resolve(failed('OverloadedError', this.#overloaded(line)));
    return new Promise<Finished>((resolve) => {
      const leave = (finished: Finished): void => {
        const i = line.waiters.indexOf(waiter);
        if (i >= 0) line.waiters.splice(i, 1);
        cleanup();
        resolve(finished);
      };
      const timer = setTimeout(
        () => leave(failed(timeoutError(`execution timed out while waiting for a slot: agent "${slot.agent}" may run ${slot.limit} calls at once across the daemons of the cluster`))),
        Math.max(0, call.deadline - performance.now()),
      );
      const onAbort = (): void => leave(failed('CancelledError', 'the call was cancelled while waiting for a sandbox'));
      call.signal?.addEventListener('abort', onAbort, { once: true });
      const cleanup = (): void => {
        clearTimeout(timer);
        call.signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        start: () => {
          cleanup();
          // A slot is released exactly once, however work ends.
          work().then(
            (finished) => {
              this.#release(line);
              resolve(finished);
            },
            (error: unknown) => {
              this.#release(line);
              resolve(failed('SandboxCrashError', error instanceof Error ? error.message : String(error)));
            },
          );
        },
        fail: leave,
      };
      line.waiters.push(waiter);
      this.#pump(line);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#heartbeat);
    for (const line of this.#lines.values()) {
      clearTimeout(line.retry);
      for (const w of line.waiters.splice(0)) w.fail(failed('CancelledError', 'the daemon is shutting down'));
    }
    // The others stop counting this daemon's slots at once.
    if (this.#redis.up) await this.#redis.run(WHAT, (client) => client.del(this.#leaseKey)).catch(() => {});
  }

  #line(slot: GateSlot): Line {
    const key = `${this.#redis.prefix}inflight:${slot.pool}:${slot.agent}`;
    let line = this.#lines.get(key);
    if (!line) this.#lines.set(key, (line = { key, slot, held: 0, waiters: [], acquiring: false, blocked: false, dirty: false, retry: undefined }));
    line.slot = slot;
    return line;
  }

  /** Asks Redis for a slot for the first waiter; one request at a time per line, so waiters start in order. */
  #pump(line: Line): void {
    if (this.#closed || line.acquiring || line.waiters.length === 0) return;
    clearTimeout(line.retry);
    line.retry = undefined;
    line.acquiring = true;
    const want = line.held + 1;
    const args = [this.#id, String(want), String(line.slot.limit), String(SLOT_LEASE_MS), this.#leasePrefix, String(SLOT_LEASE_MS * 6)];
    this.#redis.run(WHAT, (client) => client.eval(ACQUIRE, { keys: [line.key, this.#leaseKey], arguments: args })).then(
      (reply) => {
        line.acquiring = false;
        if (Number(reply) === -1) {
          line.held++;
          line.blocked = false;
          const next = line.waiters.shift();
          // The waiter left (deadline, cancelled) while Redis answered: the slot goes back.
          if (next) next.start();
          else this.#release(line);
          this.#pump(line);
          return;
        }
        line.blocked = true;
        // Calls that arrived while the slot seemed free may wait only within the agent's bound.
        while (line.waiters.length > line.slot.maxQueued) line.waiters.pop()?.fail(failed('OverloadedError', this.#overloaded(line)));
        if (line.waiters.length > 0 && !this.#closed) line.retry = setTimeout(() => this.#pump(line), SLOT_RETRY_MS);
      },
      (error: unknown) => {
        line.acquiring = false;
        line.blocked = false;
        const message = isStoreError(error) ? error.message : `${WHAT} is unavailable: ${String(error)}`;
        // Fail fast: waiting would only hold the calls until their deadline.
        for (const w of line.waiters.splice(0)) w.fail(failed('StoreError', message));
      },
    );
  }

  #release(line: Line): void {
    line.held = Math.max(0, line.held - 1);
    this.#redis
      .run(WHAT, (client) => client.eval(RELEASE, { keys: [line.key], arguments: [this.#id, this.#channel] }))
      .catch(() => {
        line.dirty = true;
      });
    this.#pump(line);
  }

  /** Renews the lease and rewrites every count this daemon holds (or lost track of in Redis). */
  async #beat(): Promise<void> {
    const lines = [...this.#lines.values()].filter((l) => l.held > 0 || l.acquiring || l.dirty);
    for (const [key, line] of this.#lines) {
      if (line.held === 0 && !line.acquiring && !line.dirty && line.waiters.length === 0) this.#lines.delete(key);
    }
    if (lines.length === 0 || !this.#redis.up) return;
    // Counted with a take under way: if Redis refuses it, the next heartbeat writes the exact count.
    const guessed = new Set(lines.filter((l) => l.acquiring));
    try {
      await this.#redis.run(WHAT, (client) => {
        const multi = client.multi().set(this.#leaseKey, '1', { expiration: { type: 'PX', value: SLOT_LEASE_MS } });
        for (const line of lines) {
          // An acquire under way may have written one more; counting it keeps the sum on the safe side.
          const count = line.held + (line.acquiring ? 1 : 0);
          if (count > 0) multi.hSet(line.key, this.#id, String(count)).pExpire(line.key, SLOT_LEASE_MS * 6);
          else multi.hDel(line.key, this.#id).publish(this.#channel, line.key);
        }
        return multi.exec();
      });
      for (const line of lines) line.dirty = guessed.has(line);
    } catch (error) {
      this.#logger.debug({ err: error }, 'could not renew the cluster-wide slots of this daemon');
    }
  }

  #overloaded(line: Line): string {
    const limits = { maxInFlight: line.slot.limit, maxQueued: line.slot.maxQueued };
    const message = refusal({
      agent: line.slot.agent,
      limits,
      waiting: line.waiters.length,
      running: line.held,
      totalWaiting: 0,
      agentsWaiting: 1,
      maxQueued: Number.POSITIVE_INFINITY,
      language: languageOfKind(line.slot.pool) ?? line.slot.pool,
      avgCallMs: 1_000,
    });
    return `${message ?? `agent "${line.slot.agent}" has too many calls waiting`} (it may run ${line.slot.limit} at once across the cluster)`;
  }
}

/** A call that ends before it runs: `type` with `message`, or a made error (`timeoutError(...)`). */
function failed(type: GuestErrorName | ErrorInfo, message = ''): Finished {
  const outcome: Outcome = { ok: false, error: typeof type === 'string' ? { type, message } : type, output: [] };
  return { outcome, workerReplaced: false };
}
