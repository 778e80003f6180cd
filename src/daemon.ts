// The composition root: the one place that builds the subsystems from the resolved config and
// wires them together (workspace, PII vaults, skills, catalog, upstream servers, host API,
// executor, MCP services). The CLI commands (serve, stdio, exec) start from here; subsystems
// never reach for each other's globals.

import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Catalog } from './catalog/index.js';
import type { DynamicToolEntry } from './catalog/index.js';
import type { Config } from './config/config-types.js';
import { packageVersion } from './config/defaults.js';
import { createExecutor, createHostApi } from './executor/index.js';
import type { Executor, ExecutorOptions, PooledExecutor } from './executor/index.js';
import type { CountTokens } from './executor/incoming-tokens.js';
import { CallRecorder } from './mcp/call-recorder.js';
import type { McpServices } from './mcp/mcp-types.js';
import { PASS_THROUGH_BOUNDARY, createPiiBoundary } from './mcp/pii-boundary.js';
import type { VaultStore } from './pii/index.js';
import type { ChangeBus } from './cluster/change-bus.js';
import { openSharedState } from './cluster/shared-state.js';
import type { SharedState } from './cluster/shared-state.js';
import type { ClusterMembership } from './cluster/cluster-membership.js';
import { createSandboxApi } from './sandbox-api/index.js';
import { SkillStore } from './skills/index.js';
import type { SkillSummary } from './skills/index.js';
import { UpstreamManager } from './upstream/index.js';
import type { UpstreamTool } from './upstream/index.js';
import type { Logger } from './util/logger.js';
import { OPTIONAL_PACKAGES, isInstalled, missingPackageMessage } from './util/optional-package.js';
import { measureTokensWhenLoaded, prepareTokenizer } from './util/tokens.js';
import { PYTHON_LANGUAGE } from './config/languages.js';
import { Workspace } from './workspace/index.js';

export interface Coordinator {
  readonly config: Readonly<Config>;
  readonly logger: Logger;
  readonly workspace: Workspace;
  readonly executor: Executor;
  readonly pii: VaultStore;
  /** Change notices to and from the other daemons of a cluster (none when embedded). */
  readonly changes: ChangeBus;
  /** Joins the cluster once the daemon listens (serve); absent when embedded. */
  readonly membership?: ClusterMembership;
  readonly skills: SkillStore;
  readonly catalog: Catalog;
  readonly upstream: UpstreamManager;
  /** The services every MCP session shares. */
  readonly services: McpServices;
  /** Close everything; idempotent, never throws. The first call's options apply. */
  close(options?: CloseOptions): Promise<void>;
}

export interface CloseOptions {
  /**
   * How long to wait for the sandbox processes to exit once everything else is closed, ms
   * (default: until they have). A command about to exit gives a short bound: they end with it,
   * their IPC channel closing, and nothing of theirs is left to save.
   */
  sandboxExitWaitMs?: number;
}

export interface CoordinatorOptions {
  /** Watch catalog/ for changes (the daemon and stdio do; exec does not). Default true. The skill store always watches skills/. */
  watch?: boolean;
  /** How the pools start (ExecutorOptions.pool): exec starts only what its call needs. */
  pool?: ExecutorOptions['pool'];
  /** How context_savings counts tokens; default the tokenizer once it has loaded (after the first session or call), estimated before. */
  countTokens?: CountTokens;
  now?: () => number;
}

/** Builds and starts every subsystem; resolves when the sandboxes are warm. */
export async function startCoordinator(config: Readonly<Config>, logger: Logger, options: CoordinatorOptions = {}): Promise<Coordinator> {
  const now = options.now ?? (() => performance.now());
  const startedAtMs = now();
  const closers = new Closers(logger);
  try {
    const { shared, workspace } = await openStorage(config, logger, closers);
    const { vaults: pii, bus } = shared;
    const catalog = loadCatalog(config, logger, options, bus, closers);
    // Python skills are checked by CPython itself, in the Python pool, once the executor exists.
    const late: { executor?: PooledExecutor } = {};
    const skills = openSkills(config, logger, late, closers);
    const upstream = openUpstreams(config, logger, catalog, closers);
    const loading = Promise.all([catalog.start(), skills.start()]).then(async () => {
      // Upstream servers connect in the background, once the catalog they add their tools to is loaded.
      void upstream.start();
      await publishSkills(skills, catalog, bus, logger);
    });
    // The sandbox processes boot (other processes, other cores) while the catalog and skills load.
    const executor = await settleAll(startExecutor(config, logger, options, { shared, workspace, skills, catalog, upstream }, closers), loading);
    late.executor = executor;
    const services = buildServices(config, logger, { shared, workspace, executor, catalog, skills, upstream, now, startedAtMs });
    let closing: Promise<void> | undefined;
    return {
      config,
      logger,
      workspace,
      executor,
      pii,
      changes: bus,
      ...(shared.membership ? { membership: shared.membership } : {}),
      skills,
      catalog,
      upstream,
      services,
      close: (closeOptions) => (closing ??= closers.closeAll(closeOptions?.sandboxExitWaitMs)),
    };
  } catch (error) {
    await closers.closeAll();
    throw error;
  }
}

/** `first`'s value once every step has settled (none is left running behind a failure); else the first failure. */
async function settleAll<T>(first: Promise<T>, ...rest: Promise<unknown>[]): Promise<T> {
  const settled = await Promise.allSettled([first, ...rest]);
  for (const step of settled) if (step.status === 'rejected') throw step.reason;
  return (settled[0] as PromiseFulfilledResult<T>).value;
}

/**
 * What start-up has opened, closed in reverse order (on close, or when a later step fails). A
 * closer pushed as `awaitLast` (the sandbox processes' exit) is started in its turn, so nothing new
 * reaches it, but awaited only after every other closer, and for at most the bound given.
 */
class Closers {
  readonly #logger: Logger;
  readonly #closers: { close: () => Promise<void>; awaitLast: boolean }[] = [];

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  push(close: () => Promise<void>, awaitLast = false): void {
    this.#closers.push({ close, awaitLast });
  }

  async closeAll(lastWaitMs?: number): Promise<void> {
    const last: Promise<void>[] = [];
    for (const { close, awaitLast } of this.#closers.splice(0).reverse()) {
      const closing = close().catch((error: unknown) => this.#logger.warn({ err: error }, 'error while closing'));
      if (awaitLast) last.push(closing);
      else await closing;
    }
    const all = Promise.all(last).then(() => undefined);
    await (lastWaitMs === undefined ? all : Promise.race([all, delay(lastWaitMs, undefined, { ref: false })]));
  }
}

/** The subsystems the later steps are built from. */
interface Built {
  shared: SharedState;
  workspace: Workspace;
  skills: SkillStore;
  catalog: Catalog;
  upstream: UpstreamManager;
}

/** Opens the shared state (PII vaults, change bus, quotas) and the workspace folder. */
async function openStorage(config: Readonly<Config>, logger: Logger, closers: Closers): Promise<{ shared: SharedState; workspace: Workspace }> {
  // Embedded (this process) or shared with the other daemons of a cluster (Redis).
  const shared = await openSharedState(config, logger);
  closers.push(() => shared.close());
  const { limits } = config;
  const workspace = new Workspace({
    root: config.workspaceDir,
    maxFileBytes: limits.maxFileBytes,
    quotaBytes: limits.workspaceQuotaBytes,
    quotaFiles: limits.workspaceQuotaFiles,
    spillFilesKept: limits.outputFilesKept,
    spillMaxAgeMs: limits.outputFileMaxAgeHours * 3600_000,
    quotaCounter: shared.quotas,
  });
  closers.push(async () => workspace.close());
  return { shared, workspace };
}

/** The tool catalog (started later, beside the skills), reloading the files another daemon changed. */
function loadCatalog(config: Readonly<Config>, logger: Logger, options: CoordinatorOptions, bus: ChangeBus, closers: Closers): Catalog {
  const catalog = new Catalog({
    dir: config.catalogDir,
    logger: logger.child({ subsystem: 'catalog' }),
    watch: options.watch ?? true,
    onFilesChanged: (paths) => bus.publish({ topic: 'catalog', names: paths }),
    semanticSearch: config.semanticSearch,
    // The encoder (about 130 MB) starts with the first MCP session, not with the daemon.
    deferModel: true,
    // Tool vectors cached beside the skills (the data directory when installed).
    vectorCacheDir: path.join(config.dataDir ?? path.dirname(config.skillsDir), 'embeddings'),
  });
  closers.push(() => catalog.close());
  bus.subscribe('catalog', (paths) => {
    catalog.reloadPaths(paths).catch((error: unknown) => logger.warn({ err: error }, 'could not reload catalog files another daemon changed'));
  });
  return catalog;
}

/** The skill store (started later, beside the catalog); Python skills are parsed by the executor once `late` has it. */
function openSkills(config: Readonly<Config>, logger: Logger, late: { executor?: PooledExecutor }, closers: Closers): SkillStore {
  // The check runs as the saving agent (with no powers), in an interpreter already bound to it
  // (the executor's checkSyntax). It parses only (ast.parse); nothing of the skill runs.
  const validatePython = async (code: string, agent?: string): Promise<{ line: number; message: string } | null> => {
    if (!late.executor || config.sandbox.pythonProcesses === 0) return null;
    const verdict = await late.executor.checkSyntax(PYTHON_LANGUAGE.languages[0] ?? '', code, agent);
    if (verdict === undefined) {
      logger.warn({ code: 'PYTHON_SKILL_CHECK_FAILED' }, 'could not check a Python skill; accepted unchecked');
      return null;
    }
    return verdict;
  };
  const skills = new SkillStore({
    dir: config.skillsDir,
    logger: logger.child({ subsystem: 'skills' }),
    maxCodeBytes: config.limits.maxCodeBytes,
    validatePython,
    quota: { count: config.limits.skillQuotaCount, bytes: config.limits.skillQuotaBytes },
  });
  closers.push(() => skills.close());
  return skills;
}

/** Skills are searchable as the catalog category 'skills', kept current here and across the cluster. */
async function publishSkills(skills: SkillStore, catalog: Catalog, bus: ChangeBus, logger: Logger): Promise<void> {
  const publish = async (): Promise<void> => {
    const { skills: list } = await skills.list();
    catalog.setDynamicTools('skills', list.map(skillEntry), 'Skills saved by agents: call import_skill(name) in execute_code');
  };
  await publish();
  skills.onChange((change) => {
    publish().catch((error: unknown) => logger.warn({ err: error }, 'could not publish skills to the catalog'));
    // Saves and deletes made through this daemon: the others reload the name at once.
    if (change.source === 'api') bus.publish({ topic: 'skills', names: [change.name] });
  });
  bus.subscribe('skills', (names) => {
    for (const name of names) void skills.reload(name);
  });
}

/** Upstream servers add their live tools as category = server name; started (in the background) once the catalog is loaded. */
function openUpstreams(config: Readonly<Config>, logger: Logger, catalog: Catalog, closers: Closers): UpstreamManager {
  const upstream = new UpstreamManager({
    servers: config.mcpServers,
    logger,
    clientInfo: { name: 'code-execution-mcp', version: packageVersion() },
    onToolsChanged: (server, tools) => catalog.setDynamicTools(server, tools ? tools.map(upstreamEntry) : null, `Tools of the upstream MCP server "${server}"`),
  });
  closers.push(() => upstream.close());
  return upstream;
}

/** The sandbox's powers (host API) and the executor with its pools; resolves when the sandboxes are warm. */
async function startExecutor(config: Readonly<Config>, logger: Logger, options: CoordinatorOptions, built: Built, closers: Closers): Promise<PooledExecutor> {
  const { shared, workspace, skills, catalog, upstream } = built;
  // The sandbox's powers: workspace (host API core) plus what each subsystem contributes
  // (skills, PII, search_tools and the servers/ tree, upstream tools, fetch).
  const sandboxApi = createSandboxApi({ config: config as Config, skills, pii: shared.vaults, catalog, upstream });
  const hostApi = createHostApi({
    config: config as Config,
    workspace,
    logger,
    extensions: sandboxApi.extensions,
    toolNames: sandboxApi.toolNames,
    virtual: sandboxApi.virtual,
  });
  logMissingPackages(config, logger);
  const executor = await createExecutor({
    config: config as Config,
    hostApi,
    logger: logger.child({ subsystem: 'executor' }),
    workspace,
    countTokens: options.countTokens ?? measureTokensWhenLoaded,
    gate: shared.gate,
    ...(options.pool ? { pool: options.pool } : {}),
  });
  closers.push(() => executor.close(), true);
  return executor;
}

/** What the default install leaves out is a normal state (info, not a warning); /healthz lists it too. */
function logMissingPackages(config: Readonly<Config>, logger: Logger): void {
  for (const pkg of [OPTIONAL_PACKAGES.tokenizer, OPTIONAL_PACKAGES.wordnet, ...(config.semanticSearch ? [OPTIONAL_PACKAGES.encoder] : [])]) {
    if (!isInstalled(pkg)) logger.info({ code: 'OPTIONAL_PACKAGE_MISSING', package: pkg.name }, missingPackageMessage(pkg));
  }
}

/** The services every MCP session shares. */
function buildServices(
  config: Readonly<Config>,
  logger: Logger,
  built: Built & { executor: Executor; now: () => number; startedAtMs: number },
): McpServices {
  const { shared, workspace, executor, catalog, skills, upstream, now, startedAtMs } = built;
  return {
    config,
    executor,
    workspace,
    logger,
    recorder: new CallRecorder(logger),
    boundary: config.pii.auto ? createPiiBoundary(shared.vaults) : PASS_THROUGH_BOUNDARY,
    pii: shared.vaults,
    catalog,
    skills,
    upstream,
    ...(shared.eventStores ? { eventStores: shared.eventStores } : {}),
    ...(shared.store ? { sharedStore: shared.store } : {}),
    ...(shared.membership ? { mintSessionId: shared.membership.mintSessionId.bind(shared.membership), clusterSessions: shared.membership } : {}),
    version: packageVersion(),
    now,
    startedAtMs,
    // The tokenizer's tables and the sentence encoder load when the first client connects, not
    // at start (an idle daemon stays light) nor in a call.
    onSession: () => {
      prepareTokenizer();
      catalog.startSemanticModel();
    },
  };
}

function skillEntry(skill: SkillSummary): DynamicToolEntry {
  return {
    name: skill.name,
    description: skill.description,
    mcp_server: 'skills',
    functions: [`await import_skill(${JSON.stringify(skill.name)})`, ...skill.exports.map((e) => `(await import_skill(${JSON.stringify(skill.name)})).${e}`)],
    use_cases: [],
    input_schema: { type: 'object' },
    source: 'skill',
    // Search shows a private skill to its author only (skillVisibleTo in src/skills).
    ...(skill.author !== undefined && { author: skill.author }),
    visibility: skill.visibility,
  };
}

function upstreamEntry(tool: UpstreamTool): DynamicToolEntry {
  return {
    name: tool.name,
    description: tool.description,
    mcp_server: tool.server,
    functions: [`tools.${tool.server}.${tool.name}(args)`],
    use_cases: tool.title ? [tool.title] : [],
    input_schema: tool.inputSchema as DynamicToolEntry['input_schema'],
    ...(tool.outputSchema ? { output_schema: tool.outputSchema as DynamicToolEntry['input_schema'] } : {}),
    source: 'upstream',
  };
}
