// The composition root: the one place that builds the subsystems from the resolved config and
// wires them together (workspace, PII vaults, skills, catalog, upstream servers, host API,
// executor, MCP services). The CLI commands (serve, stdio, exec) start from here; subsystems
// never reach for each other's globals.

import path from 'node:path';
import { Catalog } from './catalog/index.js';
import type { DynamicToolEntry } from './catalog/index.js';
import type { Config } from './config/config-types.js';
import { packageVersion } from './config/defaults.js';
import { DAEMON_AGENT_NAME } from './config/identities.js';
import { createExecutor, createHostApi } from './executor/index.js';
import type { CallIdentity, Executor } from './executor/index.js';
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
import { measureTokens, measureTokensWhenLoaded, prepareTokenizer } from './util/tokens.js';

/** The daemon's own calls (skill checks): no workspace, skills, tools or network. */
const CHECKER_IDENTITY: CallIdentity = {
  agent: DAEMON_AGENT_NAME,
  sessionId: 'daemon-checks',
  workspaceNamespace: '',
  permissions: { workspace: 'none', skills: 'none', tools: [], net: [] },
};
import { parseCheckRequest, PYTHON_RUNTIME } from './executor/runtimes.js';
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
  /** Close everything; idempotent, never throws. */
  close(): Promise<void>;
}

export interface CoordinatorOptions {
  /** Watch catalog/ for changes (the daemon and stdio do; exec does not). Default true. The skill store always watches skills/. */
  watch?: boolean;
  /**
   * One call and out (exec): sandboxes start on demand (only the call's language), no Python
   * standby, no skill watcher, no semantic-search model.
   */
  oneShot?: boolean;
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
    const late: { executor?: Executor } = {};
    const skills = openSkills(config, logger, late, closers);
    // One-shot: the skill store reads the disk per call instead of loading and watching it all.
    await Promise.all([catalog.start(), options.oneShot ? undefined : skills.start()]);
    await publishSkills(skills, catalog, bus, logger);
    const upstream = startUpstreams(config, logger, catalog, closers);
    const executor = await startExecutor(config, logger, options, { shared, workspace, skills, catalog, upstream }, closers);
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
      close: () => (closing ??= closers.closeAll()),
    };
  } catch (error) {
    await closers.closeAll();
    throw error;
  }
}

/** What start-up has opened, closed in reverse order (on close, or when a later step fails). */
class Closers {
  readonly #logger: Logger;
  readonly #closers: (() => Promise<void>)[] = [];

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  push(close: () => Promise<void>): void {
    this.#closers.push(close);
  }

  async closeAll(): Promise<void> {
    for (const close of this.#closers.splice(0).reverse()) {
      try {
        await close();
      } catch (error) {
        this.#logger.warn({ err: error }, 'error while closing');
      }
    }
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
    ...(shared.quotas ? { quotaCounter: shared.quotas } : {}),
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
    semanticSearch: options.oneShot ? false : config.semanticSearch,
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
function openSkills(config: Readonly<Config>, logger: Logger, late: { executor?: Executor }, closers: Closers): SkillStore {
  // The check runs as the saving agent (with no powers), in an interpreter already bound to it:
  // a check under an identity of its own would take a Python process from the agents and force
  // recycles. It parses only (ast.parse); nothing of the skill runs.
  const validatePython = async (code: string, agent?: string): Promise<{ line: number; message: string } | null> => {
    if (!late.executor || config.sandbox.pythonProcesses === 0) return null;
    const r = await late.executor.execute(
      parseCheckRequest(PYTHON_RUNTIME, code, 60),
      agent === undefined ? CHECKER_IDENTITY : { ...CHECKER_IDENTITY, agent, sessionId: `daemon-checks-${agent}` },
    );
    if (!r.success) {
      logger.warn({ code: 'PYTHON_SKILL_CHECK_FAILED', error_type: r.error_type }, 'could not check a Python skill; accepted unchecked');
      return null;
    }
    return (r.result as { line: number; message: string } | null) ?? null;
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

/** Upstream servers add their live tools as category = server name; they connect in the background. */
function startUpstreams(config: Readonly<Config>, logger: Logger, catalog: Catalog, closers: Closers): UpstreamManager {
  const upstream = new UpstreamManager({
    servers: config.mcpServers,
    logger,
    clientInfo: { name: 'code-execution-mcp', version: packageVersion() },
    onToolsChanged: (server, tools) => catalog.setDynamicTools(server, tools ? tools.map(upstreamEntry) : null, `Tools of the upstream MCP server "${server}"`),
  });
  closers.push(() => upstream.close());
  void upstream.start();
  return upstream;
}

/** The sandbox's powers (host API) and the executor with its pools; resolves when the sandboxes are warm. */
async function startExecutor(config: Readonly<Config>, logger: Logger, options: CoordinatorOptions, built: Built, closers: Closers): Promise<Executor> {
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
  logMissingPackages(config, logger, options);
  const executor = await createExecutor({
    config: config as Config,
    hostApi,
    logger: logger.child({ subsystem: 'executor' }),
    workspace,
    // One call (exec) counts exactly at once: nobody waits on this event loop while the tokenizer loads.
    countTokens: options.oneShot ? measureTokens : measureTokensWhenLoaded,
    gate: shared.gate,
    ...(options.oneShot ? { pool: { jsOnDemand: true, pythonStandby: 'never' as const } } : {}),
  });
  closers.push(() => executor.close());
  return executor;
}

/** What the default install leaves out is a normal state (info, not a warning); /healthz lists it too. */
function logMissingPackages(config: Readonly<Config>, logger: Logger, options: CoordinatorOptions): void {
  for (const pkg of options.oneShot ? [] : [OPTIONAL_PACKAGES.tokenizer, OPTIONAL_PACKAGES.wordnet, ...(config.semanticSearch ? [OPTIONAL_PACKAGES.encoder] : [])]) {
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
