// The sandbox methods' side of the access check (src/access): each asks it for the calling agent
// and gets a Grant, or the refusal adapted to the guest's PermissionError (authorizeCall in
// executor/host-api.ts). The boolean forms filter lists (which tools to show).

import { allows } from '../access/index.js';
import type { Grant } from '../access/index.js';
import type { Permissions } from '../config/config-types.js';
import { authorizeCall } from '../executor/index.js';
import type { CallIdentity } from '../executor/index.js';

/** The caller's grant for the `skills` permission at `needed`; `action` names what was tried. */
export function requireSkills(identity: CallIdentity, needed: 'read' | 'read-write' | 'publish', action: string): Grant {
  return authorizeCall(identity, action, { kind: 'skills', needs: needed });
}

/** The caller's grant to call `server.tool`. */
export function requireTool(identity: CallIdentity, server: string, tool: string): Grant {
  return authorizeCall(identity, `${server}.${tool}`, { kind: 'tool', server, tool });
}

/** Whether `server.tool` matches one of the agent's `tools` patterns. */
export function toolAllowed(permissions: Permissions, server: string, tool: string): boolean {
  return allows({ permissions }, { kind: 'tool', server, tool });
}

/**
 * Whether `host` (and `port`) is allowed by the agent's `net` patterns: `example.com`,
 * `*.example.com` (subdomains, not the apex), `example.com:8443`, or `*`.
 */
export function hostAllowed(permissions: Permissions, host: string, port: string): boolean {
  return allows({ permissions }, { kind: 'net', host, port, target: host });
}
