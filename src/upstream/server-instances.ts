// The instances of one upstream server. 'shared' (the default) is one connection for everyone.
// 'per-agent' and 'per-workspace' give each agent (or workspace namespace) its own instance,
// started on first use and closed when idle, so a server that keeps state (server-memory's
// knowledge graph, a scratch database) is never written by two agents at once. A template
// instance, never called, lists the tools for the catalog once. `max_concurrency` bounds the
// calls in flight per instance.
import type { McpServerConfig, UpstreamInstances } from '../config/config-types.js';
import { LOCAL_AGENT_NAME } from '../config/identities.js';
import type { Logger } from '../util/logger.js';
import { ConcurrencyLimit } from './concurrency-limit.js';
import { processTreeRssMb } from './instance-memory.js';
import type { LimitRefusals } from './concurrency-limit.js';
import type { UpstreamConnection } from './connection.js';
import { UpstreamError } from './upstream-error.js';
import type { UpstreamServerStatus } from './upstream-types.js';

/** Idle time after which a per-agent or per-workspace instance is closed, ms. */
export const DEFAULT_INSTANCE_IDLE_MS = 10 * 60_000;
/** Instances of one per-agent or per-workspace server kept at once. */
export const DEFAULT_MAX_INSTANCES = 32;
/** Resident memory one per-agent or per-workspace instance may hold (its process tree), MiB; a server's `max_memory_mb` overrides it. */
export const DEFAULT_INSTANCE_MEMORY_MB = 512;
/** How often an instance's memory is read at most, ms (a read walks /proc). */
const MEMORY_CHECK_MS = 1_000;
/** What `${agent}` and `${workspace}` become in the template instance's configuration. */
const TEMPLATE_VALUE = '_template';

/** Who a call is for: picks the instance of a per-agent or per-workspace server. */
export interface Caller {
  agent: string;
  /** Workspace namespace relative to the workspace root; '' is the root. */
  workspaceNamespace: string;
}

/** The caller used when none is given (the local single-user agent). */
export const LOCAL_CALLER: Caller = Object.freeze({ agent: LOCAL_AGENT_NAME, workspaceNamespace: '' });

export interface ServerInstancesOptions {
  name: string;
  config: McpServerConfig;
  logger: Logger;
  /** A new connection for `config`; `listsTools` is true for the one whose tools the catalog shows. */
  connect: (config: McpServerConfig, listsTools: boolean) => UpstreamConnection;
  idleMs: number;
  maxInstances: number;
  now: () => number;
}

interface Instance {
  readonly key: string;
  readonly connection: UpstreamConnection;
  readonly started: Promise<void>;
  readonly limit: ConcurrencyLimit | undefined;
  inFlight: number;
  lastUsed: number;
  /** When its memory was last read (performance.now()), to read /proc at most once per MEMORY_CHECK_MS. */
  memoryCheckedAt: number;
}

/** A file-name-safe spelling of an agent name or namespace for `${agent}` / `${workspace}`. */
function placeholderValue(value: string): string {
  return value === '' ? '_root' : value.replace(/[^A-Za-z0-9._-]/g, '_');
}

function substitute(text: string, values: { agent: string; workspace: string }): string {
  return text.replaceAll('${agent}', values.agent).replaceAll('${workspace}', values.workspace);
}

/** `config` with `${agent}` and `${workspace}` replaced in args, env, cwd, url and headers. */
export function configFor(config: McpServerConfig, values: { agent: string; workspace: string }): McpServerConfig {
  const map = (record: Readonly<Record<string, string>> | undefined): Record<string, string> | undefined =>
    record === undefined ? undefined : Object.fromEntries(Object.entries(record).map(([k, v]) => [k, typeof v === 'string' ? substitute(v, values) : v]));
  if ('command' in config) {
    const out = { ...config, ...(config.args ? { args: config.args.map((a) => (typeof a === 'string' ? substitute(a, values) : a)) } : {}) };
    const env = map(config.env);
    if (env) out.env = env;
    if (typeof config.cwd === 'string') out.cwd = substitute(config.cwd, values);
    return out;
  }
  const headers = map(config.headers);
  return { ...config, url: typeof config.url === 'string' ? substitute(config.url, values) : config.url, ...(headers ? { headers } : {}) };
}

function mentionsPlaceholder(config: McpServerConfig): boolean {
  return /\$\{(agent|workspace)\}/.test(JSON.stringify(config));
}

export class ServerInstances {
  readonly name: string;
  readonly mode: UpstreamInstances;
  /** The shared instance, or the template that lists the tools of a per-caller server. */
  readonly template: UpstreamConnection;
  readonly #options: ServerInstancesOptions;
  readonly #sharedLimit: ConcurrencyLimit | undefined;
  /** A fresh limit for one instance, or undefined without `max_concurrency`. */
  readonly #limitOf: () => ConcurrencyLimit | undefined;
  readonly #instances = new Map<string, Instance>();
  /** The bound on each per-caller instance's resident memory, MiB (`max_memory_mb`). */
  readonly #maxMemoryMb: number;
  #sweep: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: ServerInstancesOptions) {
    this.name = options.name;
    this.#options = options;
    const raw = options.config as { instances?: unknown; max_concurrency?: unknown; max_memory_mb?: unknown };
    this.#maxMemoryMb = typeof raw.max_memory_mb === 'number' && raw.max_memory_mb > 0 ? raw.max_memory_mb : DEFAULT_INSTANCE_MEMORY_MB;
    this.mode = raw.instances === 'per-agent' || raw.instances === 'per-workspace' ? raw.instances : 'shared';
    const limit = typeof raw.max_concurrency === 'number' && Number.isInteger(raw.max_concurrency) && raw.max_concurrency >= 1 ? raw.max_concurrency : undefined;
    this.#limitOf = () => (limit === undefined ? undefined : new ConcurrencyLimit(limit));
    if (this.mode === 'shared') {
      this.template = options.connect(options.config, true);
      this.#sharedLimit = this.#limitOf();
      return;
    }
    this.#sharedLimit = undefined;
    this.template = options.connect(configFor(options.config, { agent: TEMPLATE_VALUE, workspace: TEMPLATE_VALUE }), true);
    if (!mentionsPlaceholder(options.config)) {
      options.logger.warn(
        { code: 'UPSTREAM_INSTANCES_SHARE_STATE', server: this.name, instances: this.mode },
        'this server runs one instance per caller, but its args, env, cwd or url do not use ${agent} or ${workspace}: if it keeps state in a file, the instances share that file',
      );
    }
  }

  /** Per-caller instances running now. */
  get instanceCount(): number {
    return this.#instances.size;
  }

  /** The template's status plus the instance count and calls waiting for a slot. */
  status(): Omit<UpstreamServerStatus, 'calls' | 'failures'> {
    const waiting = this.#sharedLimit?.waiting ?? [...this.#instances.values()].reduce((n, i) => n + (i.limit?.waiting ?? 0), 0);
    return { ...this.template.status(), instances_mode: this.mode, ...(this.mode === 'shared' ? {} : { instances: this.#instances.size }), waiting };
  }

  /**
   * The connection this caller's call goes to, once it holds a slot; `release` frees the slot.
   * A per-caller instance is started on first use; one that fails to start is dropped (the next
   * call starts a fresh one) and its reason thrown as SERVER_UNAVAILABLE.
   */
  async acquire(caller: Caller, tool: string, signal: AbortSignal | undefined, refuse: LimitRefusals): Promise<{ connection: UpstreamConnection; release: () => void }> {
    if (this.mode === 'shared') {
      const release = this.#sharedLimit ? await this.#sharedLimit.acquire(signal, refuse) : () => undefined;
      return { connection: this.template, release };
    }
    const key = this.mode === 'per-agent' ? caller.agent : caller.workspaceNamespace;
    const instance = this.#instances.get(key) ?? this.#start(key, caller, tool);
    instance.inFlight++;
    instance.lastUsed = this.#options.now();
    try {
      await untilAborted(instance.started, signal, refuse);
      if (instance.connection.state !== 'ready') {
        const error = instance.connection.unavailableError(tool);
        this.#drop(instance);
        throw error;
      }
      this.#checkMemory(instance, tool);
      const release = instance.limit ? await instance.limit.acquire(signal, refuse) : () => undefined;
      let done = false;
      return {
        connection: instance.connection,
        release: () => {
          if (done) return;
          done = true;
          release();
          instance.inFlight--;
          instance.lastUsed = this.#options.now();
        },
      };
    } catch (error) {
      instance.inFlight--;
      throw error;
    }
  }

  #start(key: string, caller: Caller, tool: string): Instance {
    if (this.#closed) throw this.template.unavailableError(tool);
    if (this.#instances.size >= this.#options.maxInstances) {
      // Make room by closing the least recently used idle instance.
      const idle = [...this.#instances.values()].filter((i) => i.inFlight === 0).sort((a, b) => a.lastUsed - b.lastUsed)[0];
      if (idle === undefined) {
        throw new UpstreamError(
          'SERVER_UNAVAILABLE',
          `Upstream server "${this.name}" already runs ${this.#instances.size} ${this.mode} instances, all busy; try again shortly (idle instances are closed after ${Math.round(this.#options.idleMs / 1000)} s)`,
          { server: this.name, tool },
        );
      }
      this.#drop(idle);
    }
    const values = { agent: placeholderValue(caller.agent), workspace: placeholderValue(caller.workspaceNamespace) };
    const connection = this.#options.connect(configFor(this.#options.config, values), false);
    const instance: Instance = { key, connection, started: connection.start(), limit: this.#limitOf(), inFlight: 0, lastUsed: this.#options.now(), memoryCheckedAt: performance.now() };
    this.#instances.set(key, instance);
    this.#options.logger.info({ code: 'UPSTREAM_INSTANCE_STARTED', server: this.name, instances: this.mode, instance: key }, 'started an upstream instance for a caller');
    this.#armSweep();
    return instance;
  }

  /**
   * Refuses the call when the caller's instance holds more than `max_memory_mb`: the instance is
   * closed with what it held (the next call starts a fresh one), so what one agent stores in its
   * instance cannot grow the host for the others. Read at most once per MEMORY_CHECK_MS.
   */
  #checkMemory(instance: Instance, tool: string): void {
    const at = performance.now();
    if (at - instance.memoryCheckedAt < MEMORY_CHECK_MS) return;
    instance.memoryCheckedAt = at;
    const pid = instance.connection.status().pid;
    const mb = pid === undefined ? undefined : processTreeRssMb(pid);
    if (mb === undefined || mb <= this.#maxMemoryMb) return;
    this.#drop(instance);
    this.#options.logger.warn({ code: 'UPSTREAM_INSTANCE_MEMORY', server: this.name, instance: instance.key, rss_mb: Math.round(mb), max_memory_mb: this.#maxMemoryMb }, 'closed an upstream instance over its memory bound');
    throw new UpstreamError(
      'SERVER_UNAVAILABLE',
      `Upstream server "${this.name}": this caller's ${this.mode} instance held ${Math.round(mb)} MB, over its ${this.#maxMemoryMb} MB bound (mcpServers.${this.name}.max_memory_mb); it was closed with what it held in memory, and the next call starts a fresh one`,
      { server: this.name, tool },
    );
  }

  #drop(instance: Instance): void {
    if (this.#instances.get(instance.key) === instance) this.#instances.delete(instance.key);
    void instance.connection.close();
  }

  #armSweep(): void {
    if (this.#sweep !== undefined) return;
    this.#sweep = setInterval(() => this.sweepIdle(), Math.max(1_000, Math.min(60_000, this.#options.idleMs / 2)));
    this.#sweep.unref();
  }

  /** Closes per-caller instances idle for `idleMs` or more; returns how many were closed. */
  sweepIdle(): number {
    const now = this.#options.now();
    let closed = 0;
    for (const instance of [...this.#instances.values()]) {
      if (instance.inFlight === 0 && now - instance.lastUsed >= this.#options.idleMs) {
        this.#drop(instance);
        closed++;
        this.#options.logger.debug({ code: 'UPSTREAM_INSTANCE_IDLE', server: this.name, instance: instance.key }, 'closed an idle upstream instance');
      }
    }
    if (this.#instances.size === 0 && this.#sweep !== undefined) {
      clearInterval(this.#sweep);
      this.#sweep = undefined;
    }
    return closed;
  }

  /** Closes the template and every instance. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweep);
    this.#sweep = undefined;
    const all = [this.template, ...[...this.#instances.values()].map((i) => i.connection)];
    this.#instances.clear();
    await Promise.all(all.map((c) => c.close()));
  }
}

/** `promise`, or the caller's abort error if its signal fires first. */
function untilAborted(promise: Promise<void>, signal: AbortSignal | undefined, refuse: LimitRefusals): Promise<void> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(refuse.aborted(signal));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(refuse.aborted(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
