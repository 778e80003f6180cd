// The executor owns a call from its code to its result: it checks the request, decides its
// language when the caller names none (call-language.ts), hands it to the sandbox pool of that
// language, routes the guest's host calls to the HostApi, and shapes the outcome into
// execute_code's result (output budget, spill file, token accounting, the language and a syntax
// error's hint). The MCP tool and the exec command only adapt it. It never throws for anything a
// guest or caller does.

import { homedir } from 'node:os';
import path from 'node:path';
import { createHistogram } from 'node:perf_hooks';
import type { RecordableHistogram } from 'node:perf_hooks';
import { TOOL_NAMES_METHOD } from '../../workers/kit/protocol.js';
import type { Outcome, ReadGrant, RunRequest } from '../../workers/kit/protocol.js';
import { SANDBOX_API_NAMES } from '../../workers/js/api-names.js';
import type { Config } from '../config/config-types.js';
import type { Logger } from '../util/logger.js';
import { TokenLedger } from '../util/tokens.js';
import type { TokenCount } from '../util/tokens.js';
import type { HostLinkServer } from './host-link-server.js';
import { applyBudget } from './result-budget.js';
import type { WorkspaceStore } from '../workspace/index.js';
import { CallLanguage } from './call-language.js';
import { chargeRunTrap, typescriptRefusal } from './detect-helper.js';
import type { Detection } from './detect-language.js';
import type { SyntaxVerdict } from './call-language.js';
import type {
  CallIdentity,
  ExecuteOptions,
  ExecutionRequest,
  ExecutionResult,
  Executor,
  ExecutorHealth,
  ExecutorStats,
  HostApi,
  HostCallContext,
  Language,
} from './executor-types.js';
import { maxHostArgChars, MIN_MEMORY_MB } from './executor-types.js';
import { spillWhole } from './host-api.js';
import { agentLimits, clusterLimit } from './admission.js';
import { LOCAL_GATE } from './call-gate.js';
import { addCount, IncomingTokens } from './incoming-tokens.js';
import type { CountTokens } from './incoming-tokens.js';
import type { CallGate, GateSlot } from './call-gate.js';
import { orList, RuntimePools } from './runtime-pools.js';
import { RUNTIMES } from './runtimes.js';
import type { RuntimeRow, RuntimeTuning } from './runtimes.js';
import type { SandboxPool } from './sandbox-pool.js';
import type { AgentLimits, PoolCall } from './sandbox-pool.js';
import type { LaunchSandbox } from './sandbox-process.js';
import { adaptError } from '../util/daemon-error.js';
import { packContext } from './context-vars.js';
import type { ContextFields } from './context-vars.js';

export interface ExecutorOptions {
  config: Config;
  hostApi: HostApi;
  logger: Logger;
  /** What tests control in the sandbox pools: how long a recycle may take, ms; the process launcher. */
  pool?: { recycleTimeoutMs?: number; launch?: LaunchSandbox } & RuntimeTuning;
  /** The runtimes this executor runs, one row each (runtimes.ts); RUNTIMES by default. */
  runtimes?: readonly RuntimeRow[];
  /** Where over-budget output is spilled; without it output is only cut. */
  workspace?: WorkspaceStore;
  /** Token counter for context_savings (a real tokenizer in production); a TokenCount may say it estimated, a budget bounds one call's counting time. */
  countTokens?: CountTokens;
  /** Every sandbox thread's link to this process, the one channel of every call (createExecutor opens one). */
  hostLink?: HostLinkServer;
  /** Where calls in flight are counted beyond this daemon (a cluster); the pools alone by default. */
  gate?: CallGate;
}

const RESERVED = new Set<string>([...SANDBOX_API_NAMES, '__proto__', 'constructor', 'globalThis', 'eval', 'Function', 'Compartment', 'harden', 'lockdown']);
/** Characters per token when a count is estimated (English text and JSON average about 4). */
const CHARS_PER_TOKEN = 4;

/** The reason a call's signal carries once it ended (a shared value: no stack captured per call). */
const CALL_ENDED = Object.freeze(new Error('the execute_code call ended'));

export class PooledExecutor implements Executor {
  readonly #config: Config;
  readonly #host: HostApi;
  readonly #log: Logger;
  readonly #workspace: WorkspaceStore | undefined;
  readonly #countTokens: CountTokens | undefined;
  /** One pool per runtime the rows and the config enable (runtime-pools.ts). */
  readonly #pools: RuntimePools;
  readonly #gate: CallGate;
  readonly #latency: RecordableHistogram = createHistogram();
  readonly #byOutcome: Record<string, number> = {};
  readonly #ledger = new TokenLedger();
  /** Host folders whose names must never reach a guest in an error message, longest first. */
  readonly #hostRoots: string[];
  readonly #link: HostLinkServer;
  readonly #language: CallLanguage;
  #completed = 0;
  #failed = 0;
  #closed = false;

  constructor(options: ExecutorOptions) {
    this.#config = options.config;
    this.#host = options.hostApi;
    this.#log = options.logger;
    this.#workspace = options.workspace;
    this.#countTokens = options.countTokens;
    this.#gate = options.gate ?? LOCAL_GATE;
    this.#hostRoots = [...new Set([options.config.workspaceDir, options.config.skillsDir, options.config.catalogDir, process.cwd(), homedir()].map((p) => path.resolve(p)))]
      .filter((p) => p.length > 1)
      .sort((a, b) => b.length - a.length);
    if (!options.hostLink) throw new Error('the executor needs a host link (createExecutor opens one)');
    this.#link = options.hostLink;
    const shares = (slots: number) => (agent: string): AgentLimits => agentLimits(options.config, agent, slots);
    this.#pools = new RuntimePools({ config: options.config, runtimes: options.runtimes ?? RUNTIMES, log: this.#log, shares, tuning: options.pool ?? {}, hostLink: this.#link });
    this.#language = new CallLanguage({
      run: (request, identity) => this.#run(request, identity),
      defaultLanguage: options.config.limits.defaultLanguage,
      enabled: this.#pools.languages(true),
    });
  }

  /** Starts each pool as its row says (JavaScript awaited: no cold start; Python in the background, on demand: nothing yet). */
  start(): Promise<void> {
    return this.#pools.start();
  }

  /** Starts one sandbox of `language` ahead of its first call when its pool starts on demand and none runs; true once one is ready. */
  warm(language: string): Promise<boolean> {
    return this.#pools.find(language).pool?.warm() ?? Promise.resolve(false);
  }

  /** Runs one call: its language detected when the request names none, the result named with it. */
  async execute(request: ExecutionRequest, identity: CallIdentity, options: ExecuteOptions = {}): Promise<ExecutionResult> {
    // The code is checked before detection parses it.
    const problem = codeProblem(request.code, this.#config.limits.maxCodeBytes);
    if (problem) return this.#finish(performance.now(), failure('ValidationError', problem), identity, NO_TOKENS);
    const names = typeof request.contextVars === 'object' && request.contextVars !== null ? Object.keys(request.contextVars) : [];
    // Detection's time (a CPython check may wait for the Python pool) is not the call's.
    const detection = request.language === undefined ? await this.#language.detect(request.code, names, identity.agent) : undefined;
    const language = request.language ?? (detection as Detection).language;
    // TypeScript that trapped detection's stripper is answered with its refusal, not run to trap the
    // sandbox's too; an agent that keeps trapping it cools down (detect-helper.ts).
    const refused = language === 'typescript' ? (detection?.tooDeep ?? typescriptRefusal(identity.agent)) : undefined;
    if (refused !== undefined) return { ...(await this.#finish(performance.now(), failure('SyntaxError', refused), identity, NO_TOKENS)), language };
    const result = await this.#run({ ...request, language }, identity, options);
    if (language === 'typescript' && result.error_type === 'SyntaxError') chargeRunTrap(identity.agent, result.error);
    return this.#pools.find(language).row ? this.#language.named(result, request.code, language, identity.agent) : result;
  }

  /** `language`'s own parser on `code` (Python: CPython's ast.parse), as `agent` with no powers (call-language.ts). */
  checkSyntax(language: string, code: string, agent?: string): Promise<SyntaxVerdict> {
    return this.#language.checkSyntax(language, code, agent);
  }

  async #run(request: ExecutionRequest & { language: Language }, identity: CallIdentity, options: ExecuteOptions = {}): Promise<ExecutionResult> {
    const started = performance.now();
    // context_vars are packed once, as this language's sandbox takes them, their size checked on the way.
    const context = this.#validate(request);
    if (typeof context === 'string') return this.#finish(started, failure('ValidationError', context), identity, NO_TOKENS);
    const { row, pool } = this.#pools.find(request.language) as { row: RuntimeRow; pool: SandboxPool | undefined };
    if (!pool) {
      const others = orList(this.#pools.languages(true));
      return this.#finish(started, failure('ValidationError', `${request.language} is not enabled on this daemon (${row.disabledBy ?? 'it has no sandbox processes'}); use ${others}`), identity, NO_TOKENS);
    }
    const timeoutMs = Math.round(request.timeoutSeconds * 1000);
    const { limits } = this.#config;
    const run: RunRequest = {
      code: request.code,
      language: request.language,
      ...context,
      timeoutMs,
      memoryMb: request.memoryMb,
      workspaceName: identity.workspaceNamespace || 'workspace',
      agent: identity.agent,
      toolNames: row.toolNamesUpFront ? this.#host.toolNames(identity) : undefined,
      fetchAllowed: this.#host.fetchAllowed(identity),
      readGrant: await this.#readGrant(identity),
      streamOutput: options.onOutput !== undefined,
      maxArgChars: maxHostArgChars(limits),
    };
    // Only calls that use a host power need a signal: made on first use, so a trivial call
    // allocates no AbortController and ending it creates no DOMException.
    let callEnded: AbortController | undefined;
    let ended = false;
    const tokensIn = new IncomingTokens(this.#countTokens);
    const ctx: HostCallContext = {
      identity,
      language: request.language,
      get signal() {
        if (!callEnded) {
          callEnded = new AbortController();
          // A host call that arrives after the end sees an ended call.
          if (ended) callEnded.abort(CALL_ENDED);
        }
        return callEnded.signal;
      },
      account: (direction, payload) => {
        if (direction === 'in') tokensIn.add(payload);
      },
    };
    try {
      const call: PoolCall = {
        request: run,
        deadline: started + timeoutMs,
        signal: options.signal,
        onHostCall: (callId, method, args, reply) => {
          const answer = method === TOOL_NAMES_METHOD ? Promise.resolve().then(() => this.#host.toolNames(identity)) : this.#host.call(method, args, ctx);
          answer.then(
            (value) => reply({ kind: 'host-reply', callId, ok: true, value }),
            (err: unknown) => reply({ kind: 'host-reply', callId, ok: false, error: hostErrorOf(err, this.#hostRoots) }),
          );
        },
        onOutput: (lines) => {
          for (const line of lines) options.onOutput?.(line);
        },
      };
      const slot = this.#gate === LOCAL_GATE ? undefined : this.#clusterSlot(row.process.kind, identity.agent);
      const finished = await (slot ? this.#gate.run(slot, call, () => pool.run(call)) : pool.run(call));
      // Reads the worker served itself were not counted here: estimated from their length.
      if (finished.outcome.readChars) tokensIn.addEstimate(Math.ceil(finished.outcome.readChars / CHARS_PER_TOKEN));
      // Waiting for a sandbox to start is not the call's time (sandbox-pool.ts run()); the result says it waited.
      const waited = call.startupWaitMs ?? 0;
      return await this.#finish(started + waited, finished.outcome, identity, tokensIn.total(), waited);
    } finally {
      ended = true;
      callEnded?.abort(CALL_ENDED);
    }
  }

  stats(): ExecutorStats {
    const h = this.#latency;
    const ms = (ns: number): number => Math.round(ns / 1e4) / 100;
    const count = this.#completed + this.#failed;
    const sum = (of: (p: SandboxPool) => number): number => this.#pools.sum(of);
    return {
      processes: this.#pools.all.reduce((n, p) => n + p.count, 0),
      threads: sum((p) => p.threads),
      busy: sum((p) => p.busy),
      queued: sum((p) => p.queued),
      completed: this.#completed,
      failed: this.#failed,
      timeouts: this.#byOutcome.TimeoutError ?? 0,
      memory_kills: this.#byOutcome.MemoryLimitError ?? 0,
      cancelled: this.#byOutcome.CancelledError ?? 0,
      process_restarts: sum((p) => p.counters.processRestarts),
      direct_calls: sum((p) => p.counters.directCalls),
      latency: {
        count,
        p50_ms: count ? ms(h.percentile(50)) : 0,
        p95_ms: count ? ms(h.percentile(95)) : 0,
        p99_ms: count ? ms(h.percentile(99)) : 0,
        mean_ms: count ? ms(h.mean) : 0,
      },
      by_outcome: { ...this.#byOutcome },
      ...(this.#countTokens ? { context_savings: this.#ledger.totals() } : {}),
    };
  }

  /** Live figures per runtime, named by its first language; 'down' when JavaScript cannot run (no ready process). */
  health(): ExecutorHealth {
    return this.#pools.health();
  }

  /** Per-process detail for health and metrics endpoints. */
  processes(): { kind: string; pid: number | undefined; state: string; busy: number; agent: string | undefined; pristine: boolean }[] {
    return this.#pools.processes();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // The link's folder goes at once, not after the processes' exit: a command that exits without
    // waiting for them (daemon.ts CloseOptions) leaves nothing behind in the temporary folder.
    await Promise.all([this.#pools.close(), this.#link.close()]);
  }

  /** The agent's slot in a cluster-wide limit, when one is configured for it. */
  #clusterSlot(pool: string, agent: string): GateSlot | undefined {
    const limit = clusterLimit(this.#config, agent);
    return limit === undefined ? undefined : { pool, agent, limit, maxQueued: agentLimits(this.#config, agent, 1).maxQueued };
  }

  /** The error text of an invalid request; else its context_vars as the sandbox gets them (context-vars.ts). */
  #validate(r: ExecutionRequest & { language: Language }): string | ContextFields {
    const { limits } = this.#config;
    const { row } = this.#pools.find(r.language);
    if (!row) {
      return `language must be ${orList(this.#pools.languages().map((l) => JSON.stringify(l)))}, got ${JSON.stringify(r.language)}`;
    }
    if (typeof r.timeoutSeconds !== 'number' || !(r.timeoutSeconds > 0) || r.timeoutSeconds > limits.maxTimeoutSeconds) {
      return `timeout_seconds must be a number greater than 0 and at most ${limits.maxTimeoutSeconds}`;
    }
    if (!Number.isInteger(r.memoryMb) || r.memoryMb < MIN_MEMORY_MB || r.memoryMb > limits.maxMemoryMb) {
      return `memory_mb must be an integer between ${MIN_MEMORY_MB} and ${limits.maxMemoryMb}`;
    }
    if (r.contextVars !== undefined) {
      if (r.contextVars === null || typeof r.contextVars !== 'object' || Array.isArray(r.contextVars)) return 'context_vars must be an object mapping names to JSON values';
      for (const key of Object.keys(r.contextVars)) {
        if (RESERVED.has(key)) return `context_vars key "${key}" would hide the sandbox's own ${key}; rename it`;
        if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key)) return `context_vars key ${JSON.stringify(key.slice(0, 80))} is not a valid identifier`;
      }
      return packContext(r.contextVars);
    }
    return {};
  }

  /** The host's grant to serve read_file in the worker; without one (or if it fails) reads go to the host. */
  async #readGrant(identity: CallIdentity): Promise<ReadGrant | undefined> {
    if (!this.#host.readGrant) return undefined;
    try {
      return await this.#host.readGrant(identity);
    } catch {
      return undefined;
    }
  }

  async #finish(started: number, outcome: Outcome, identity: CallIdentity, tokensIn: TokenCount, startupWaitMs = 0): Promise<ExecutionResult> {
    const result: ExecutionResult = {
      success: outcome.ok,
      result: outcome.ok ? outcome.value : null,
      output: outcome.output,
      execution_time_ms: 0,
      ...(startupWaitMs >= 1 ? { sandbox_start_wait_ms: Math.round(startupWaitMs) } : {}),
    };
    if (!outcome.ok) {
      result.error = outcome.error.message;
      result.error_type = outcome.error.type;
      if (outcome.error.traceback) result.traceback = outcome.error.traceback;
    }
    if (outcome.outputDropped) {
      result.output = [...result.output, `[${outcome.outputDropped} more output lines were dropped: the per-call output limit was reached]`];
      result.truncated = true;
    }
    await applyBudget(result, this.#config.limits.maxOutputChars, async (whole) => {
      try {
        return await spillWhole(this.#workspace, identity, whole);
      } catch (err) {
        this.#log.warn({ code: 'OUTPUT_SPILL_FAILED', err: (err as Error).message }, 'could not write the full output to the workspace');
        return undefined;
      }
    });
    if (this.#countTokens) {
      const tokensOut = addCount({ tokens: 0, estimated: false }, this.#countTokens({ result: result.result, output: result.output }));
      result.context_savings = this.#ledger.add(tokensIn.tokens, tokensOut.tokens);
      if (tokensIn.estimated || tokensOut.estimated) result.context_savings.estimated = true;
    }
    const elapsed = performance.now() - started;
    result.execution_time_ms = Math.round(elapsed * 100) / 100;
    this.#latency.record(Math.max(1, Math.round(elapsed * 1e6)));
    const key = outcome.ok ? 'success' : outcome.error.type;
    this.#byOutcome[key] = (this.#byOutcome[key] ?? 0) + 1;
    if (outcome.ok) this.#completed++;
    else this.#failed++;
    return result;
  }
}

/** Replaces the known host folders, exactly (spaces and all), before any pattern is tried. */
function scrub(message: string, roots: readonly string[]): string {
  let out = message;
  for (const root of roots) out = out.split(root).join('<path>');
  return out;
}

const NO_TOKENS: TokenCount = Object.freeze({ tokens: 0, estimated: false });

/**
 * What is wrong with `code` as a call's code (a string within limits.maxCodeBytes), or undefined.
 * The MCP tool refuses with the same words before a call starts.
 */
export function codeProblem(code: unknown, maxCodeBytes: number): string | undefined {
  if (typeof code !== 'string') return 'code must be a string';
  const bytes = Buffer.byteLength(code, 'utf8');
  if (bytes <= maxCodeBytes) return undefined;
  return `code is ${bytes} bytes, over the ${maxCodeBytes}-byte limit (limits.maxCodeBytes); put large data in a workspace file (write_workspace_file) and read it with read_file()`;
}

/** An outcome the executor decides itself (a refused request). */
function failure(type: string, message: string): Outcome {
  return { ok: false, error: { type, message }, output: [] };
}

/** A host-side failure as the guest will see it (its code's row, util/daemon-error.ts): a name it can catch on and a message, no stack. */
function hostErrorOf(err: unknown, roots: readonly string[]): { name: string; message: string; code?: string } {
  const adapted = adaptError(err);
  if (adapted.daemon) return { name: adapted.guest, message: scrub(adapted.message, roots), code: adapted.code };
  // Messages of unexpected errors may name host paths; the guest sees them scrubbed.
  const message = scrub(adapted.message, roots).replace(/(?:\/[\w.@+-]+){2,}/g, '<path>');
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return { name: adapted.guest, message, code: typeof code === 'string' ? code : undefined };
}
