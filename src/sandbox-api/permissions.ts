// Permission checks shared by the sandbox methods: each refusal names the permission that is missing.

import type { Permissions } from '../config/config-types.js';
import { HostError } from '../executor/index.js';
import { toolPatternMatches } from '../pii/index.js';

const SKILLS_RANK: Record<Permissions['skills'], number> = { none: 0, read: 1, 'read-write': 2, publish: 3 };

/** Refuses unless the agent's `skills` permission is at least `needed`; `action` names what was tried. */
export function requireSkills(permissions: Permissions, needed: 'read' | 'read-write' | 'publish', action: string): void {
  const access = permissions.skills;
  if (SKILLS_RANK[access] >= SKILLS_RANK[needed]) return;
  throw new HostError(
    'PERMISSION_DENIED',
    `permission denied: ${action} needs the skills permission "${needed}", and this agent's skills permission is "${access}". An operator can grant it in the agent's "permissions.skills".`,
    'PermissionError',
  );
}

/** Whether `server.tool` matches one of the agent's `tools` patterns. */
export function toolAllowed(permissions: Permissions, server: string, tool: string): boolean {
  const target = `${server}.${tool}`;
  return permissions.tools.some((pattern) => pattern === '*' || toolPatternMatches(pattern, target));
}

export function requireTool(permissions: Permissions, server: string, tool: string): void {
  if (!toolAllowed(permissions, server, tool)) {
    throw new HostError(
      'PERMISSION_DENIED',
      `permission denied: your tools permission (${permissions.tools.length ? permissions.tools.join(', ') : 'none'}) does not include ${server}.${tool}; the daemon's operator can add "${server}.${tool}" or "${server}.*" to this agent's permissions.tools`,
      'PermissionError',
    );
  }
}

/**
 * Whether `host` (and `port`) is allowed by the agent's `net` patterns: `example.com`,
 * `*.example.com` (subdomains, not the apex), `example.com:8443`, or `*`.
 */
export function hostAllowed(permissions: Permissions, host: string, port: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return permissions.net.some((raw) => {
    const pattern = raw.toLowerCase();
    if (pattern === '*') return true;
    const [pHost = '', pPort] = splitHostPort(pattern);
    if (pPort !== undefined && pPort !== port) return false;
    if (pHost.startsWith('*.')) return h.endsWith(pHost.slice(1)) && h.length > pHost.length - 1;
    return h === pHost;
  });
}

function splitHostPort(pattern: string): [string, string | undefined] {
  if (pattern.startsWith('[')) {
    const end = pattern.indexOf(']');
    const rest = pattern.slice(end + 1);
    return [pattern.slice(1, end), rest.startsWith(':') ? rest.slice(1) : undefined];
  }
  const colon = pattern.lastIndexOf(':');
  if (colon > 0 && pattern.indexOf(':') === colon) return [pattern.slice(0, colon), pattern.slice(colon + 1)];
  return [pattern, undefined];
}
