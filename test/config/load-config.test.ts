// Configuration: defaults, the load order (file, then CODE_EXEC_* environment, then flags),
// messages that name the bad key, and a frozen result.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, packageRoot } from '../../src/config/index.js';
import { optionsHelp } from '../../src/config/help.js';
import { OPTIONS } from '../../src/config/options.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function tempCwd(config?: unknown): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'cem-config-'));
  dirs.push(dir);
  if (config !== undefined) writeFileSync(path.join(dir, 'code-execution-mcp.json'), typeof config === 'string' ? config : JSON.stringify(config));
  return dir;
}

function problems(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('defaults', () => {
  it('serve the package\'s own catalog, skills and workspace on loopback', () => {
    const { config, file } = loadConfig({ cwd: tempCwd(), env: {} });
    const root = packageRoot();
    expect(file).toBeUndefined();
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 7337,
      catalogDir: path.join(root, 'catalog'),
      skillsDir: path.join(root, 'skills'),
      workspaceDir: path.join(root, 'workspace'),
      limits: { defaultTimeoutSeconds: 30, maxTimeoutSeconds: 300, defaultMemoryMb: 500, maxOutputChars: 20_000 },
      agents: [],
      defaultPermissions: { workspace: 'read-write', skills: 'read-write', tools: ['*'], net: [] },
      server: { drainSeconds: 10, progressIntervalMs: 1000 },
    });
    expect(config.authToken).toBeUndefined();
  });

  it('is deeply frozen', () => {
    const { config } = loadConfig({ cwd: tempCwd(), env: {} });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.limits)).toBe(true);
    expect(Object.isFrozen(config.defaultPermissions.tools)).toBe(true);
  });
});

describe('load order', () => {
  it('file, then environment, then flags', () => {
    const cwd = tempCwd({ port: 1111, host: '127.0.0.2', limits: { maxTimeoutSeconds: 100, defaultTimeoutSeconds: 10 } });
    const { config, file } = loadConfig({ cwd, env: { CODE_EXEC_PORT: '2222', CODE_EXEC_MAX_TIMEOUT_SECONDS: '200' }, flags: { port: '3333' } });
    expect(file).toBe(path.join(cwd, 'code-execution-mcp.json'));
    expect(config.port).toBe(3333);
    expect(config.host).toBe('127.0.0.2');
    expect(config.limits.maxTimeoutSeconds).toBe(200);
    expect(config.limits.defaultTimeoutSeconds).toBe(10);
  });

  it('uses --config over ./code-execution-mcp.json, and resolves its folders relative to the file', () => {
    const cwd = tempCwd({ port: 1 });
    const other = tempCwd();
    const file = path.join(other, 'custom.json');
    writeFileSync(file, JSON.stringify({ port: 4444, workspaceDir: 'ws' }));
    const { config } = loadConfig({ cwd, env: {}, configFile: file });
    expect(config.port).toBe(4444);
    expect(config.workspaceDir).toBe(path.join(other, 'ws'));
  });

  it('parses lists, booleans and paths from the environment', () => {
    const cwd = tempCwd();
    const { config } = loadConfig({ cwd, env: { CODE_EXEC_ALLOWED_HOSTS: 'a.local, b.local', CODE_EXEC_PII_AUTO: 'yes', CODE_EXEC_WORKSPACE_DIR: 'data' } });
    expect(config.allowedHosts).toEqual(['a.local', 'b.local']);
    expect(config.pii.auto).toBe(true);
    expect(config.workspaceDir).toBe(path.join(cwd, 'data'));
  });

  it('semantic search: on unless the file, CODE_EXEC_SEMANTIC_SEARCH or --semantic-search turns it off', () => {
    expect(loadConfig({ cwd: tempCwd(), env: {} }).config.semanticSearch ?? true).toBe(true);
    expect(loadConfig({ cwd: tempCwd({ semanticSearch: false }), env: {} }).config.semanticSearch).toBe(false);
    expect(loadConfig({ cwd: tempCwd(), env: { CODE_EXEC_SEMANTIC_SEARCH: 'false' } }).config.semanticSearch).toBe(false);
    expect(loadConfig({ cwd: tempCwd({ semanticSearch: false }), env: {}, flags: { 'semantic-search': 'true' } }).config.semanticSearch).toBe(true);
    expect(() => loadConfig({ cwd: tempCwd(), env: { CODE_EXEC_SEMANTIC_SEARCH: 'maybe' } })).toThrow(/semanticSearch must be true or false; got "maybe" \(from CODE_EXEC_SEMANTIC_SEARCH\)/);
  });

  it('--no-pii-auto overrides a file that turns it on', () => {
    const { config } = loadConfig({ cwd: tempCwd({ pii: { auto: true } }), env: {}, flags: { 'no-pii-auto': true } });
    expect(config.pii.auto).toBe(false);
  });

  it('fills agent permissions from defaultPermissions and namespaces from names', () => {
    const { config } = loadConfig({
      cwd: tempCwd({
        defaultPermissions: { net: ['api.example.com'] },
        agents: [{ name: 'alice', token: 'a'.repeat(20), permissions: { workspace: 'read' } }, { name: 'bob', token: 'b'.repeat(20), workspace: 'shared/bob' }],
      }),
      env: {},
    });
    expect(config.agents[0]).toMatchObject({ name: 'alice', workspace: 'alice', permissions: { workspace: 'read', skills: 'read-write', tools: ['*'], net: ['api.example.com'] } });
    expect(config.agents[1]).toMatchObject({ workspace: 'shared/bob' });
  });

  it('accepts mcpServers in the shape MCP clients use', () => {
    const { config } = loadConfig({
      cwd: tempCwd({
        mcpServers: {
          memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'], env: { DEBUG: '1' } },
          remote: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer x' } },
          off: { command: 'nothing', disabled: true },
        },
      }),
      env: {},
    });
    expect(Object.keys(config.mcpServers)).toEqual(['memory', 'remote']);
    expect(config.mcpServers['remote']).toEqual({ url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer x' } });
  });
});

describe('messages name the bad key', () => {
  it.each([
    [{ limits: { maxTimeoutSeconds: 0 } }, 'limits.maxTimeoutSeconds must be an integer between 1 and 3600; got 0'],
    [{ port: 'eighty' }, 'port must be an integer between 0 and 65535; got "eighty"'],
    [{ logLevel: 'loud' }, 'logLevel must be one of fatal, error, warn, info, debug, trace, silent; got "loud"'],
    [{ limits: { maxTimeout: 5 } }, 'limits.maxTimeout is not an option; did you mean limits.maxTimeoutSeconds?'],
    [{ limits: { defaultTimeoutSeconds: 400 } }, 'limits.defaultTimeoutSeconds (400) must not exceed limits.maxTimeoutSeconds (300)'],
    [{ authToken: 'short' }, 'authToken (CODE_EXEC_TOKEN / --token) must be at least 16 characters'],
    [{ agents: [{ name: 'x', token: 'short' }] }, 'agents[0].token (agent "x") must be a string of at least 16 characters'],
    [{ agents: [{ name: 'x', token: 'x'.repeat(20), workspace: '../up' }] }, 'agents[0].workspace (agent "x") must be a relative folder name inside the workspace root'],
    [{ agents: [{ name: 'x', token: 'x'.repeat(20), permissions: { workspace: 'write' } }] }, 'agents[0].permissions.workspace must be one of none, read, read-write; got "write"'],
    [{ agents: [{ name: 'Daemon', token: 'x'.repeat(20) }] }, 'agents[0].name "Daemon" is the name of the daemon\'s own checks'],
    [{ agents: [{ name: 'default', token: 'x'.repeat(20) }] }, 'agents[0].name "default" is the name of the operator identified by authToken, which the daemon uses for itself'],
    [{ limits: { skillQuotaCount: 0 } }, 'limits.skillQuotaCount must be an integer between 1 and 1000000; got 0'],
    [{ mcpServers: { gh: { command: 'x', url: 'http://y' } } }, 'mcpServers.gh needs exactly one of "command"'],
    [{ mcpServers: { gh: { url: 'ftp://y' } } }, 'mcpServers.gh.url must be an http:// or https:// URL'],
    [{ pii: { flows: [{ tools: 'crm.*', types: ['EMAIL'], action: 'maybe' }] } }, 'pii.flows[0].action must be "allow" or "deny"'],
  ])('%j', (file, message) => {
    expect(problems(() => loadConfig({ cwd: tempCwd(file), env: {} })).join('\n')).toContain(message);
  });

  it('names the environment variable a bad value came from', () => {
    const found = problems(() => loadConfig({ cwd: tempCwd(), env: { CODE_EXEC_MAX_MEMORY_MB: 'lots' } }));
    expect(found).toEqual(['limits.maxMemoryMb must be an integer between 16 and 65536; got "lots" (from CODE_EXEC_MAX_MEMORY_MB)']);
  });

  it('never echoes a secret', () => {
    const found = problems(() => loadConfig({ cwd: tempCwd(), env: { CODE_EXEC_TOKEN: '   ' } }));
    expect(found.join('\n')).toContain('<hidden>');
  });

  it('reports every problem at once, and a broken file clearly', () => {
    expect(problems(() => loadConfig({ cwd: tempCwd({ port: -1, host: '' }), env: {} }))).toHaveLength(2);
    expect(problems(() => loadConfig({ cwd: tempCwd('{ not json'), env: {} }))[0]).toMatch(/is not valid JSON/);
    expect(problems(() => loadConfig({ cwd: tempCwd(), env: {}, configFile: 'missing.json' }))[0]).toMatch(/does not exist; fix the --config path/);
  });
});

describe('--help', () => {
  it('documents every option with its default and environment variable', () => {
    const help = [optionsHelp('serve'), optionsHelp('stdio'), optionsHelp('exec')].join('\n');
    for (const option of OPTIONS) {
      expect(help).toContain(`--${option.flag}`);
      expect(help).toContain(option.env);
      expect(help).toContain(`Default ${option.defaultText}.`);
    }
    expect(optionsHelp('serve')).toContain('mcpServers');
  });
});

describe('cluster options', () => {
  it('take the Redis URL and its sealing key from the environment', () => {
    const key = 'ab'.repeat(32);
    const { config } = loadConfig({ cwd: tempCwd(), env: { CODE_EXEC_REDIS: 'redis://127.0.0.1:6379', CODE_EXEC_REDIS_KEY: key } });
    expect(config).toMatchObject({ redis: 'redis://127.0.0.1:6379', redisKey: key });
  });

  it('refuse redis without redisKey, a URL that is not redis://, and a malformed key, naming the option', () => {
    expect(problems(() => loadConfig({ cwd: tempCwd(), env: { CODE_EXEC_REDIS: 'redis://127.0.0.1:6379' } })).join('\n')).toMatch(/redis needs redisKey/);
    expect(problems(() => loadConfig({ cwd: tempCwd(), env: { CODE_EXEC_REDIS: 'http://x', CODE_EXEC_REDIS_KEY: 'ab'.repeat(32) } })).join('\n')).toMatch(/redis \(CODE_EXEC_REDIS \/ --redis\) must be a URL/);
    expect(problems(() => loadConfig({ cwd: tempCwd(), env: { CODE_EXEC_REDIS: 'redis://h:1', CODE_EXEC_REDIS_KEY: 'short' } })).join('\n')).toMatch(/redisKey .* must be 64 hex digits/);
  });
});
