// Resolves the configuration once: embedded defaults, then the JSON file, then CODE_EXEC_*
// environment variables, then flags. Every problem found is reported together, each naming its
// key, and the result is deeply frozen so nothing downstream can drift from what was validated.

import { parseSealingKey } from '../util/sealing.js';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { watch } from 'chokidar';
import type { Config } from './config-types.js';
import { defaultConfig, isRecord, packageRoot } from './defaults.js';
import { OPTIONS, FILE_ONLY_OPTIONS } from './options.js';
import type { OptionSpec } from './options.js';
import { MIN_TOKEN_CHARS, checkAgents, checkFlows, checkMcpServers, checkPermissions } from './structured.js';
import { checkJsonValue, checkTextValue, closest } from './values.js';
import type { Checked, OptionValue, ValueSource } from './values.js';
import { DaemonError } from '../util/daemon-error.js';

export const DEFAULT_CONFIG_FILE = 'code-execution-mcp.json';

/** One or more configuration problems; `problems` holds one message per bad key. */
export class ConfigError extends DaemonError {
  constructor(readonly problems: readonly string[]) {
    super('CONFIG_INVALID', `invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export interface LoadConfigOptions {
  /** `--config FILE`; when absent, CODE_EXEC_CONFIG, then ./code-execution-mcp.json if present. */
  configFile?: string;
  /** Parsed flags, by long flag name (see OPTIONS[].flag). */
  flags?: Readonly<Record<string, string | boolean | undefined>>;
  env?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
  /** Root that default folders are relative to; the package root by default. */
  root?: string;
  /** Adjusts the embedded defaults before the file, environment and flags are applied (per command defaults). */
  adjustDefaults?: (defaults: Config) => void;
}

export interface LoadedConfig {
  config: Readonly<Config>;
  /** The JSON file that was read, if any. */
  file: string | undefined;
}

const FILE_GROUPS = ['limits', 'sandbox', 'pii', 'server'] as const;

export function loadConfig(options: LoadConfigOptions = {}): LoadedConfig {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? {};
  const flags = options.flags ?? {};
  const config = defaultConfig(options.root ?? packageRoot(), env);
  options.adjustDefaults?.(config);
  const problems: string[] = [];
  const explicit = new Set<string>();

  const file = locateFile(options.configFile ?? env['CODE_EXEC_CONFIG'], cwd, problems);
  let raw: Record<string, unknown> = {};
  if (file !== undefined) raw = readJsonFile(file, problems) ?? {};
  const fileSource: ValueSource = { label: file ? path.basename(file) : DEFAULT_CONFIG_FILE, baseDir: file ? path.dirname(file) : cwd };

  // 1. the file's scalar options
  for (const { key, value } of scalarEntries(raw, problems)) {
    const spec = OPTIONS.find((o) => o.key === key);
    if (spec) apply(config, spec, checkJsonValue(spec, value, { ...fileSource, label: key }), problems, explicit);
  }
  // 2. environment, 3. flags
  for (const spec of OPTIONS) {
    const text = env[spec.env];
    if (text !== undefined) apply(config, spec, checkTextValue(spec, text, { label: spec.env, baseDir: cwd }), problems, explicit);
  }
  for (const spec of OPTIONS) {
    const value = flags[spec.flag];
    const negated = flags[`no-${spec.flag}`];
    if (spec.kind === 'bool' && negated === true) apply(config, spec, { ok: true, value: false }, problems, explicit);
    if (value === undefined) continue;
    const checked = typeof value === 'boolean' ? ({ ok: true, value } as Checked) : checkTextValue(spec, value, { label: `--${spec.flag}`, baseDir: cwd });
    apply(config, spec, checked, problems, explicit);
  }
  // a dataDir given by the user moves the folders the user did not place themselves
  if (explicit.has('dataDir') && config.dataDir !== undefined) {
    if (!explicit.has('skillsDir')) config.skillsDir = path.join(config.dataDir, 'skills');
    if (!explicit.has('workspaceDir')) config.workspaceDir = path.join(config.dataDir, 'workspace');
    if (!explicit.has('pii.vaultDir')) config.pii.vaultDir = path.join(config.dataDir, 'pii-vaults');
  }

  // structured options (file only)
  const piiRaw = isRecord(raw['pii']) ? raw['pii'] : {};
  config.defaultPermissions = checkPermissions('defaultPermissions', raw['defaultPermissions'], config.defaultPermissions, problems);
  config.agents = checkAgents(raw['agents'], config.defaultPermissions, problems);
  config.mcpServers = checkMcpServers(raw['mcpServers'], fileSource.baseDir, problems);
  config.pii.flows = checkFlows(piiRaw['flows'], problems);

  crossCheck(config, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return { config: deepFreeze(config), file };
}

/** The configuration file loadConfig reads with these options (it need not exist yet: ./code-execution-mcp.json). */
export function configFilePath(options: LoadConfigOptions = {}): string {
  const cwd = options.cwd ?? process.cwd();
  const explicit = options.configFile ?? options.env?.['CODE_EXEC_CONFIG'];
  return path.resolve(cwd, explicit ?? DEFAULT_CONFIG_FILE);
}

export interface ConfigWatch {
  close(): Promise<void>;
}

/** Quiet time after a write before the file is read again: an editor's save is several events. */
const RELOAD_DEBOUNCE_MS = 150;

/**
 * Watches the configuration file (chokidar, on its folder, so an editor's save by rename and a
 * file created later are seen) and hands each valid new configuration to `onConfig`, one at a
 * time; a configuration with problems goes to `onProblem` and changes nothing. The same
 * environment and flags apply as at start, so they keep overriding the file.
 */
export async function watchConfigFile(
  options: LoadConfigOptions,
  onConfig: (loaded: LoadedConfig) => Promise<void>,
  onProblem: (message: string) => void,
): Promise<ConfigWatch> {
  const file = configFilePath(options);
  const dir = path.dirname(file);
  const watcher = watch(dir, { ignoreInitial: true, depth: 0, ignored: (p: string) => p !== dir && p !== file });
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<void> = Promise.resolve();
  let closed = false;
  const reload = (): void => {
    chain = chain.then(async () => {
      if (closed || !existsSync(file)) return;
      let loaded: LoadedConfig;
      try {
        loaded = loadConfig(options);
      } catch (error) {
        onProblem(`${file} changed but was not applied: ${error instanceof Error ? error.message : String(error)}`);
        return;
      }
      await onConfig(loaded).catch((error: unknown) => onProblem(`${file} changed but could not be applied: ${error instanceof Error ? error.message : String(error)}`));
    });
  };
  watcher.on('all', (_event: string, changed: string) => {
    if (changed !== file) return;
    clearTimeout(timer);
    timer = setTimeout(reload, RELOAD_DEBOUNCE_MS);
  });
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return {
    close: async () => {
      closed = true;
      clearTimeout(timer);
      await watcher.close();
      await chain;
    },
  };
}

function locateFile(explicit: string | undefined, cwd: string, problems: string[]): string | undefined {
  if (explicit !== undefined) {
    const full = path.resolve(cwd, explicit);
    if (!existsSync(full)) {
      problems.push(`config file ${full} does not exist; fix the --config path (or CODE_EXEC_CONFIG)`);
      return undefined;
    }
    return full;
  }
  const implicit = path.join(cwd, DEFAULT_CONFIG_FILE);
  return existsSync(implicit) ? implicit : undefined;
}

function readJsonFile(file: string, problems: string[]): Record<string, unknown> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    problems.push(`config file ${file} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
  if (!isRecord(parsed)) {
    problems.push(`config file ${file} must hold a JSON object`);
    return undefined;
  }
  return parsed;
}

/** Flattens the file's scalar options to dotted keys, reporting keys that are not options. */
function scalarEntries(raw: Record<string, unknown>, problems: string[]): { key: string; value: unknown }[] {
  const known = new Set(OPTIONS.map((o) => o.key));
  const structured = new Set(FILE_ONLY_OPTIONS.map((o) => o.key));
  const allKeys = [...known, ...structured];
  const entries: { key: string; value: unknown }[] = [];
  for (const [key, value] of Object.entries(raw)) {
    if (key === '$schema' || structured.has(key)) continue;
    if ((FILE_GROUPS as readonly string[]).includes(key)) {
      if (!isRecord(value)) {
        problems.push(`${key} must be an object (e.g. {"${key}": {...}})`);
        continue;
      }
      for (const [sub, subValue] of Object.entries(value)) {
        const dotted = `${key}.${sub}`;
        if (structured.has(dotted)) continue;
        if (known.has(dotted)) entries.push({ key: dotted, value: subValue });
        else problems.push(unknownKeyMessage(dotted, allKeys));
      }
      continue;
    }
    if (known.has(key)) entries.push({ key, value });
    else problems.push(unknownKeyMessage(key, allKeys));
  }
  return entries;
}

function unknownKeyMessage(key: string, all: readonly string[]): string {
  const hint = closest(key, all);
  return `${key} is not an option${hint ? `; did you mean ${hint}?` : ''} (run with --help for the list)`;
}

function apply(config: Config, spec: OptionSpec, checked: Checked, problems: string[], explicit: Set<string>): void {
  if (!checked.ok) {
    problems.push(checked.message);
    return;
  }
  explicit.add(spec.key);
  setPath(config, spec.key, checked.value);
}

function setPath(target: Config, key: string, value: OptionValue): void {
  const parts = key.split('.');
  let node: Record<string, unknown> = target as unknown as Record<string, unknown>;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (!isRecord(next)) throw new Error(`internal: config group ${part} missing`);
    node = next;
  }
  const last = parts[parts.length - 1];
  if (last !== undefined) node[last] = Array.isArray(value) ? [...value] : value;
}

function crossCheck(config: Config, problems: string[]): void {
  const { limits } = config;
  if (limits.defaultTimeoutSeconds > limits.maxTimeoutSeconds) {
    problems.push(`limits.defaultTimeoutSeconds (${limits.defaultTimeoutSeconds}) must not exceed limits.maxTimeoutSeconds (${limits.maxTimeoutSeconds})`);
  }
  if (limits.defaultMemoryMb > limits.maxMemoryMb) {
    problems.push(`limits.defaultMemoryMb (${limits.defaultMemoryMb}) must not exceed limits.maxMemoryMb (${limits.maxMemoryMb})`);
  }
  if (config.authToken !== undefined && config.authToken.length < MIN_TOKEN_CHARS) {
    problems.push(`authToken (CODE_EXEC_TOKEN / --token) must be at least ${MIN_TOKEN_CHARS} characters; generate one with: openssl rand -hex 24`);
  }
  if (config.authToken !== undefined && config.agents.some((a) => a.token === config.authToken)) {
    problems.push('authToken must differ from every agents[].token (it identifies the default agent)');
  }
  if (config.redis !== undefined) {
    let protocol = '';
    try {
      protocol = new URL(config.redis).protocol;
    } catch {
      // reported below
    }
    if (protocol !== 'redis:' && protocol !== 'rediss:') problems.push('redis (CODE_EXEC_REDIS / --redis) must be a URL such as redis://127.0.0.1:6379 or rediss://:PASSWORD@HOST:6380/0');
    if (config.redisKey === undefined) problems.push('redis needs redisKey (CODE_EXEC_REDIS_KEY / --redis-key), the same on every daemon, to seal PII in Redis; generate one with: openssl rand -hex 32');
  }
  if (config.redisKey !== undefined && parseSealingKey(config.redisKey) === null) {
    problems.push('redisKey (CODE_EXEC_REDIS_KEY / --redis-key) must be 64 hex digits (32 bytes); generate one with: openssl rand -hex 32');
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
