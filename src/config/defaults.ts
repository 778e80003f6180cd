// The embedded defaults. Folders default to the package's own catalog/, skills/ and workspace/,
// found from this file's location, so `npm start` in the repository serves the repository;
// installed as a package, skills/ and workspace/ default into the per-user data directory.

import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config, Permissions, ServerConfig } from './config-types.js';
import { defaultDataDir } from './data-dir.js';

const PACKAGE_NAME = 'code-execution-mcp';

/** The folder holding this package's package.json (works from src/ under vitest and from dist/). */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        const parsed: unknown = JSON.parse(readFileSync(manifest, 'utf8'));
        if (isRecord(parsed) && parsed['name'] === PACKAGE_NAME) return dir;
      } catch {
        // not ours; keep walking up
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot find the ${PACKAGE_NAME} package root above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

let cachedVersion: string | undefined;

/** The package version from package.json. */
export function packageVersion(): string {
  if (cachedVersion === undefined) {
    const parsed: unknown = JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8'));
    cachedVersion = isRecord(parsed) && typeof parsed['version'] === 'string' ? parsed['version'] : '0.0.0';
  }
  return cachedVersion;
}

/** Permissions of an agent that does not say otherwise. */
export const DEFAULT_PERMISSIONS: Readonly<Permissions> = Object.freeze({
  workspace: 'read-write',
  skills: 'read-write',
  tools: Object.freeze(['*']),
  net: Object.freeze([]),
});

export const DEFAULT_SERVER: Readonly<ServerConfig> = Object.freeze({
  sessionIdleSeconds: 1800,
  maxSessions: 1000,
  drainSeconds: 10,
  progressIntervalMs: 1000,
  toolProfile: 'seed',
  maxSessionsPerAgent: 64,
  sessionBytesPerAgent: 32 * 1024 * 1024,
  maxConnections: 1024,
  maxConnectionsPerAddress: 512,
  maxConnectionsPerAgent: 128,
  headersTimeoutSeconds: 10,
  bodyTimeoutSeconds: 30,
  keepAliveSeconds: 5,
});

/** The MCP front settings of a config, with defaults for configs built by hand. */
export function serverSettings(config: Pick<Config, 'server'>): Readonly<ServerConfig> {
  return config.server ?? DEFAULT_SERVER;
}

/** A fresh, mutable copy of the defaults (the loader layers file, env and flags on top). */
export function defaultConfig(root: string = packageRoot(), env: Readonly<Record<string, string | undefined>> = {}): Config {
  const dataDir = defaultDataDir(root, env);
  return {
    host: '127.0.0.1',
    port: 7337,
    allowedHosts: [],
    allowedOrigins: [],
    maxBodyBytes: 4 * 1024 * 1024,
    catalogDir: path.join(root, 'catalog'),
    ...(dataDir !== undefined ? { dataDir } : {}),
    skillsDir: path.join(dataDir ?? root, 'skills'),
    workspaceDir: path.join(dataDir ?? root, 'workspace'),
    limits: {
      defaultTimeoutSeconds: 30,
      maxTimeoutSeconds: 300,
      defaultMemoryMb: 500,
      maxMemoryMb: 2048,
      maxOutputChars: 20_000,
      maxCodeBytes: 1024 * 1024,
      maxFileBytes: 50 * 1024 * 1024,
      maxFetchBytes: 10 * 1024 * 1024,
      maxCallsInFlightPerAgent: 0,
      maxQueuedPerAgent: 100,
      maxQueuedCalls: 1000,
      workspaceQuotaBytes: 1024 * 1024 * 1024,
      workspaceQuotaFiles: 10_000,
      skillQuotaCount: 500,
      skillQuotaBytes: 64 * 1024 * 1024,
      outputFilesKept: 100,
      outputFileMaxAgeHours: 24,
      defaultLanguage: 'javascript',
    },
    sandbox: {
      processes: Math.max(2, availableParallelism()),
      threadsPerProcess: 1,
      // Two Python interpreters' processes (each ~180 MB serving + ~150 MB warm standby): a second
      // agent gets its own interpreter at once instead of waiting for a recycle.
      pythonProcesses: 2,
      pythonIdleSeconds: 300,
      pythonWarm: false,
    },
    pii: {
      auto: false,
      flows: [],
      maxTokensPerSession: 100_000,
      maxVaultBytesPerAgent: 16 * 1024 * 1024,
      sessionTtlSeconds: 3600,
      tokenTtlSeconds: 86_400,
      vaultDir: path.join(dataDir ?? root, dataDir !== undefined ? 'pii-vaults' : '.pii-vaults'),
    },
    mcpServers: {},
    agents: [],
    defaultPermissions: { ...DEFAULT_PERMISSIONS, tools: ['*'], net: [] },
    server: { ...DEFAULT_SERVER },
    logFormat: 'auto',
    logLevel: 'info',
  };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
