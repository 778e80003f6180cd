// The executor's pools: one per runtime whose row (runtimes.ts) and the config enable it, built,
// started, summed and described from the rows alone, so the executor never names a language.

import type { Config } from '../config/config-types.js';
import type { Logger } from '../util/logger.js';
import type { ExecutorHealth, PoolHealth } from './executor-types.js';
import type { HostLinkServer } from './host-link-server.js';
import { runtimeFor, runtimeProcess } from './runtimes.js';
import type { RuntimeRow, RuntimeTuning } from './runtimes.js';
import { SandboxPool } from './sandbox-pool.js';
import type { AgentLimits } from './sandbox-pool.js';
import type { LaunchSandbox } from './sandbox-process.js';

export interface RuntimePoolsOptions {
  config: Config;
  runtimes: readonly RuntimeRow[];
  log: Logger;
  /** An agent's share of `slots` slots. */
  shares(slots: number): (agent: string) => AgentLimits;
  tuning: { recycleTimeoutMs?: number; launch?: LaunchSandbox } & RuntimeTuning;
  /** Every thread's link to the coordinator: the one channel of every call. */
  hostLink: HostLinkServer;
}

export interface RuntimePool {
  row: RuntimeRow;
  pool: SandboxPool;
  /** Processes at most. */
  count: number;
}

export class RuntimePools {
  readonly #runtimes: readonly RuntimeRow[];
  readonly #log: Logger;
  readonly #byRow = new Map<RuntimeRow, RuntimePool>();
  /** In the rows' order. */
  readonly all: readonly RuntimePool[];
  #closed = false;

  constructor(o: RuntimePoolsOptions) {
    this.#runtimes = o.runtimes;
    this.#log = o.log;
    const { limits } = o.config;
    const all: RuntimePool[] = [];
    for (const row of o.runtimes) {
      const plan = row.pool(o.config, o.tuning);
      if (!plan) continue;
      const pool = new SandboxPool({
        maxQueued: limits.maxQueuedCalls,
        recycleTimeoutMs: o.tuning.recycleTimeoutMs,
        launch: o.tuning.launch,
        process: { ...runtimeProcess(row), ...plan.process },
        language: nameOf(row),
        label: row.label,
        count: plan.count,
        limits: o.shares(plan.slots),
        log: o.log.child({ pool: row.process.kind }),
        ...(plan.lazy ? { lazy: true } : {}),
        ...(plan.idleExitMs !== undefined ? { idleExitMs: plan.idleExitMs } : {}),
        ...(plan.startWaitMs ? { startWaitMs: plan.startWaitMs } : {}),
        hostLink: o.hostLink,
      });
      const entry = { row, pool, count: plan.count };
      all.push(entry);
      this.#byRow.set(row, entry);
    }
    this.all = all;
  }

  /** The row that runs `language` (undefined: no runtime does) and its pool (undefined: the config disables it). */
  find(language: string): { row: RuntimeRow | undefined; pool: SandboxPool | undefined } {
    const row = runtimeFor(language, this.#runtimes);
    return { row, pool: row ? this.#byRow.get(row)?.pool : undefined };
  }

  /** Every language a row runs, for messages ("javascript", "typescript" or "python"). */
  languages(enabledOnly = false): string[] {
    return (enabledOnly ? this.all.map((p) => p.row) : this.#runtimes).flatMap((row) => row.languages);
  }

  /** Starts each pool as its row says: awaited (JavaScript: no cold start) or in the background (Python; on demand: nothing yet). */
  async start(): Promise<void> {
    const awaited: Promise<void>[] = [];
    for (const { row, pool } of this.all) {
      if (row.start === 'awaited') {
        awaited.push(pool.start());
        continue;
      }
      pool.start().catch((err: unknown) => {
        if (!this.#closed) this.#log.error({ code: row.poolFailedCode, err: (err as Error).message }, `${nameOf(row)} sandbox failed to start`);
      });
    }
    await Promise.all(awaited);
  }

  /** A figure summed over the pools. */
  sum(of: (p: SandboxPool) => number): number {
    return this.all.reduce((n, p) => n + of(p.pool), 0);
  }

  /** Live figures per runtime, named by its first language; 'down' when a runtime started with the daemon cannot run (JavaScript: no ready process). */
  health(): ExecutorHealth {
    const byLanguage: Record<string, PoolHealth> = {};
    let down = false;
    let whole = true;
    for (const { row, pool } of this.all) {
      const h = pool.health();
      byLanguage[nameOf(row)] = h;
      if (row.start === 'awaited' && !h.canRun) down = true;
      // On demand, fewer processes than configured (none, when idle) is by design.
      if (!((h.onDemand === true || h.ready === h.processes) && h.failedStartsInARow === 0)) whole = false;
    }
    return { status: down ? 'down' : whole ? 'ok' : 'degraded', ...byLanguage } as ExecutorHealth;
  }

  /** Per-process detail, each named by its runtime's kind (js, python: the rows' process.kind). */
  processes(): { kind: string; pid: number | undefined; state: string; busy: number; agent: string | undefined; pristine: boolean }[] {
    return this.all.flatMap(({ row, pool }) => pool.processes().map((p) => ({ kind: row.process.kind, ...p })));
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.all.map((p) => p.pool.close()));
  }
}

/** "a", "a or b", "a, b or c". */
export function orList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}

/** A runtime's name in messages and health: its first language. */
function nameOf(row: RuntimeRow): string {
  return row.languages[0] ?? row.process.kind;
}
