// Checks for the options only the JSON file carries: agents, permissions, upstream servers and
// PII flow rules. Each problem is pushed as a message naming the offending key.

import path from 'node:path';
import type { AgentConfig, AgentLimitsConfig, McpServerConfig, Permissions, PiiFlowRule, SkillsAccess, UpstreamCommon, UpstreamInstances, WorkspaceAccess } from './config-types.js';
import { isRecord } from './defaults.js';
import { internalIdentityProblem } from './identities.js';
import { closest } from './values.js';

export const MIN_TOKEN_CHARS = 16;
const ACCESS_LEVELS = ['none', 'read', 'read-write'] as const;
const SKILL_LEVELS = ['none', 'read', 'read-write', 'publish'] as const;
const INSTANCE_MODES = ['shared', 'per-agent', 'per-workspace'] as const;
const AGENT_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;
const SERVER_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

type Problems = string[];

function unknownKeys(key: string, value: Record<string, unknown>, known: readonly string[], problems: Problems): void {
  for (const k of Object.keys(value)) {
    if (known.includes(k)) continue;
    const hint = closest(k, known);
    problems.push(`${key}.${k} is not an option${hint ? `; did you mean ${key}.${hint}?` : ''} (known: ${known.join(', ')})`);
  }
}

function stringList(key: string, value: unknown, problems: Problems): string[] | undefined {
  if (Array.isArray(value) && value.every((v): v is string => typeof v === 'string' && v.trim() !== '')) return value.map((v) => v.trim());
  problems.push(`${key} must be a list of non-empty strings; got ${JSON.stringify(value)}`);
  return undefined;
}

function stringMap(key: string, value: unknown, problems: Problems): Record<string, string> | undefined {
  if (isRecord(value) && Object.values(value).every((v) => typeof v === 'string')) return { ...(value as Record<string, string>) };
  problems.push(`${key} must be an object of string values`);
  return undefined;
}

/** Permissions, with missing fields taken from `base`. */
export function checkPermissions(key: string, raw: unknown, base: Permissions, problems: Problems): Permissions {
  if (raw === undefined) return { ...base };
  if (!isRecord(raw)) {
    problems.push(`${key} must be an object like {"workspace": "read-write", "skills": "read", "tools": ["github.*"], "net": ["api.example.com"]}`);
    return { ...base };
  }
  unknownKeys(key, raw, ['workspace', 'skills', 'tools', 'net', 'operator'], problems);
  const out: Permissions = { ...base };
  const access = <T extends string>(field: 'workspace' | 'skills', levels: readonly T[]): T | undefined => {
    const v = raw[field];
    if (v === undefined) return undefined;
    if (typeof v === 'string' && (levels as readonly string[]).includes(v)) return v as T;
    problems.push(`${key}.${field} must be one of ${levels.join(', ')}; got ${JSON.stringify(v)}`);
    return undefined;
  };
  out.workspace = access<WorkspaceAccess>('workspace', ACCESS_LEVELS) ?? base.workspace;
  out.skills = access<SkillsAccess>('skills', SKILL_LEVELS) ?? base.skills;
  const operator = raw['operator'];
  if (operator !== undefined) {
    if (typeof operator === 'boolean') out.operator = operator;
    else problems.push(`${key}.operator must be true or false; got ${JSON.stringify(operator)}`);
  }
  if (raw['tools'] !== undefined) out.tools = stringList(`${key}.tools`, raw['tools'], problems) ?? base.tools;
  if (raw['net'] !== undefined) out.net = stringList(`${key}.net`, raw['net'], problems) ?? base.net;
  return out;
}

export function checkAgents(raw: unknown, defaults: Permissions, problems: Problems): AgentConfig[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) {
    problems.push('agents must be a list like [{"name": "alice", "token": "<16+ chars>", "permissions": {...}}]');
    return [];
  }
  const agents: AgentConfig[] = [];
  const names = new Set<string>();
  const tokens = new Set<string>();
  raw.forEach((entry: unknown, i) => {
    const key = `agents[${i}]`;
    if (!isRecord(entry)) {
      problems.push(`${key} must be an object with "name" and "token"`);
      return;
    }
    unknownKeys(key, entry, ['name', 'token', 'workspace', 'permissions', 'limits'], problems);
    const name = entry['name'];
    const token = entry['token'];
    if (typeof name !== 'string' || !AGENT_NAME.test(name)) {
      problems.push(`${key}.name must be 1-64 characters of letters, digits, _ . - (got ${JSON.stringify(name)})`);
      return;
    }
    const reserved = internalIdentityProblem(name);
    if (reserved !== null) {
      problems.push(`${key}.name ${reserved}`);
      return;
    }
    if (names.has(name)) problems.push(`${key}.name "${name}" is used by another agent; agent names must be unique`);
    names.add(name);
    if (typeof token !== 'string' || token.length < MIN_TOKEN_CHARS) {
      problems.push(`${key}.token (agent "${name}") must be a string of at least ${MIN_TOKEN_CHARS} characters`);
      return;
    }
    if (tokens.has(token)) problems.push(`${key}.token (agent "${name}") is the same as another agent's token; tokens must be unique`);
    tokens.add(token);
    const ns = entry['workspace'] ?? name;
    if (typeof ns !== 'string' || !isSafeNamespace(ns)) {
      problems.push(`${key}.workspace (agent "${name}") must be a relative folder name inside the workspace root, without "..": got ${JSON.stringify(ns)}`);
      return;
    }
    const agent: AgentConfig = { name, token, permissions: checkPermissions(`${key}.permissions`, entry['permissions'], defaults, problems) };
    agent.workspace = ns;
    const limits = checkAgentLimits(`${key}.limits`, entry['limits'], problems);
    if (limits) agent.limits = limits;
    agents.push(agent);
  });
  return agents;
}

/** `agents[i].limits`: this agent's sandbox shares, overriding limits.maxCallsInFlightPerAgent / maxQueuedPerAgent. */
function checkAgentLimits(key: string, raw: unknown, problems: Problems): AgentLimitsConfig | undefined {
  if (raw === undefined) return undefined;
  if (!isRecord(raw)) {
    problems.push(`${key} must be an object like {"maxCallsInFlight": 2, "maxQueued": 50}`);
    return undefined;
  }
  unknownKeys(key, raw, ['maxCallsInFlight', 'maxQueued'], problems);
  const out: AgentLimitsConfig = {};
  for (const [field, min] of [['maxCallsInFlight', 1], ['maxQueued', 0]] as const) {
    const v = raw[field];
    if (v === undefined) continue;
    if (typeof v === 'number' && Number.isInteger(v) && v >= min && v <= 1_000_000) out[field] = v;
    else problems.push(`${key}.${field} must be an integer between ${min} and 1000000; got ${JSON.stringify(v)}`);
  }
  return out;
}

/** A namespace is '' (the root) or relative segments without '.', '..', NUL or backslashes. */
export function isSafeNamespace(ns: string): boolean {
  if (ns === '') return true;
  if (ns.length > 255 || path.isAbsolute(ns) || ns.includes('\\') || ns.includes('\0')) return false;
  return ns.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..');
}

export function checkMcpServers(raw: unknown, baseDir: string, problems: Problems): Record<string, McpServerConfig> {
  if (raw === undefined) return {};
  if (!isRecord(raw)) {
    problems.push('mcpServers must be an object: {"NAME": {"command": "npx", "args": [...]}} or {"NAME": {"url": "https://..."}}');
    return {};
  }
  const servers: Record<string, McpServerConfig> = {};
  for (const [name, value] of Object.entries(raw)) {
    const key = `mcpServers.${name}`;
    if (!SERVER_NAME.test(name)) {
      problems.push(`${key}: server names must start with a letter or _ and hold only letters, digits, _ and - (they become tools.${name}.TOOL in code)`);
      continue;
    }
    if (!isRecord(value)) {
      problems.push(`${key} must be an object with "command" or "url"`);
      continue;
    }
    if (value['disabled'] === true) continue;
    const timeout = value['timeout_ms'];
    if (timeout !== undefined && !(typeof timeout === 'number' && Number.isInteger(timeout) && timeout >= 100 && timeout <= 3_600_000)) {
      problems.push(`${key}.timeout_ms must be an integer between 100 and 3600000 (milliseconds)`);
    }
    const common = upstreamCommon(key, value, problems);
    if (typeof value['command'] === 'string' && value['url'] === undefined) {
      unknownKeys(key, value, ['command', 'args', 'env', 'cwd', ...COMMON_SERVER_KEYS], problems);
      const args = value['args'] === undefined ? undefined : stringListAllowEmpty(`${key}.args`, value['args'], problems);
      const env = value['env'] === undefined ? undefined : stringMap(`${key}.env`, value['env'], problems);
      const cwd = value['cwd'];
      if (cwd !== undefined && typeof cwd !== 'string') problems.push(`${key}.cwd must be a folder path`);
      servers[name] = {
        command: value['command'],
        ...(args ? { args } : {}),
        ...(env ? { env } : {}),
        ...(typeof cwd === 'string' ? { cwd: path.resolve(baseDir, cwd) } : {}),
        ...common,
      };
    } else if (typeof value['url'] === 'string' && value['command'] === undefined) {
      unknownKeys(key, value, ['url', 'headers', ...COMMON_SERVER_KEYS], problems);
      let ok = false;
      try {
        const u = new URL(value['url']);
        ok = u.protocol === 'http:' || u.protocol === 'https:';
      } catch {
        ok = false;
      }
      if (!ok) problems.push(`${key}.url must be an http:// or https:// URL; got ${JSON.stringify(value['url'])}`);
      const headers = value['headers'] === undefined ? undefined : stringMap(`${key}.headers`, value['headers'], problems);
      servers[name] = { url: value['url'], ...(headers ? { headers } : {}), ...common };
    } else {
      problems.push(`${key} needs exactly one of "command" (a program to start over stdio) or "url" (a Streamable HTTP endpoint)`);
    }
  }
  return servers;
}

const COMMON_SERVER_KEYS = ['timeout_ms', 'instances', 'max_concurrency', 'max_memory_mb', 'type', 'disabled'] as const;

/** timeout_ms, instances and max_concurrency, checked (timeout_ms was checked by the caller). */
function upstreamCommon(key: string, value: Record<string, unknown>, problems: Problems): UpstreamCommon {
  const out: UpstreamCommon = {};
  if (typeof value['timeout_ms'] === 'number') out.timeout_ms = value['timeout_ms'];
  const instances = value['instances'];
  if (instances !== undefined) {
    if (typeof instances === 'string' && (INSTANCE_MODES as readonly string[]).includes(instances)) out.instances = instances as UpstreamInstances;
    else problems.push(`${key}.instances must be one of ${INSTANCE_MODES.join(', ')}; got ${JSON.stringify(instances)}`);
  }
  const limit = value['max_concurrency'];
  if (limit !== undefined) {
    if (typeof limit === 'number' && Number.isInteger(limit) && limit >= 1 && limit <= 1024) out.max_concurrency = limit;
    else problems.push(`${key}.max_concurrency must be an integer between 1 and 1024; got ${JSON.stringify(limit)}`);
  }
  const memory = value['max_memory_mb'];
  if (memory !== undefined) {
    if (typeof memory === 'number' && Number.isInteger(memory) && memory >= 16 && memory <= 1_048_576) out.max_memory_mb = memory;
    else problems.push(`${key}.max_memory_mb must be an integer between 16 and 1048576 (MiB); got ${JSON.stringify(memory)}`);
  }
  return out;
}

function stringListAllowEmpty(key: string, value: unknown, problems: Problems): string[] | undefined {
  if (Array.isArray(value) && value.every((v): v is string => typeof v === 'string')) return [...value];
  problems.push(`${key} must be a list of strings`);
  return undefined;
}

export function checkFlows(raw: unknown, problems: Problems): PiiFlowRule[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) {
    problems.push('pii.flows must be a list like [{"tools": "crm.*", "types": ["EMAIL"], "action": "allow"}]');
    return [];
  }
  const rules: PiiFlowRule[] = [];
  raw.forEach((entry: unknown, i) => {
    const key = `pii.flows[${i}]`;
    if (!isRecord(entry)) {
      problems.push(`${key} must be an object with "tools", "types" and "action"`);
      return;
    }
    unknownKeys(key, entry, ['tools', 'types', 'action'], problems);
    const tools = entry['tools'];
    const action = entry['action'];
    const types = stringList(`${key}.types`, entry['types'], problems);
    if (typeof tools !== 'string' || tools.trim() === '') problems.push(`${key}.tools must be a tool pattern such as "crm.*"`);
    if (action !== 'allow' && action !== 'deny') problems.push(`${key}.action must be "allow" or "deny"`);
    if (typeof tools === 'string' && types && (action === 'allow' || action === 'deny')) {
      rules.push({ tools, types: types.map((t) => (t === '*' ? t : t.toUpperCase())), action });
    }
  });
  return rules;
}
