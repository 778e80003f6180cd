// Who is calling: bearer tokens to agents. Tokens are looked up by their SHA-256, so comparing a
// presented token never leaks how much of a real one it matched.

import { createHash } from 'node:crypto';
import type { Config, Permissions } from '../config/config-types.js';
import { DEFAULT_AGENT_NAME, LOCAL_AGENT_NAME } from '../config/identities.js';
import type { AgentIdentity } from './mcp-types.js';

// The daemon's own identities live with the config, which refuses agents named like them.
export { DEFAULT_AGENT_NAME, LOCAL_AGENT_NAME };

export function localAgent(config: Pick<Config, 'defaultPermissions'>): AgentIdentity {
  return { name: LOCAL_AGENT_NAME, workspaceNamespace: '', permissions: operatorPermissions(config.defaultPermissions) };
}

/** The single-user agent and the authToken caller run the daemon: they see daemon-wide figures. */
function operatorPermissions(permissions: Permissions): Permissions {
  return permissions.operator === undefined ? { ...permissions, operator: true } : permissions;
}

export type AuthResult = { ok: true; agent: AgentIdentity } | { ok: false; reason: 'missing' | 'malformed' | 'unknown' };

export class AgentDirectory {
  readonly #byTokenHash = new Map<string, AgentIdentity>();
  readonly #local: AgentIdentity;

  constructor(config: Pick<Config, 'agents' | 'authToken' | 'defaultPermissions'>) {
    this.#local = localAgent(config);
    for (const agent of config.agents) {
      this.#byTokenHash.set(hash(agent.token), { name: agent.name, workspaceNamespace: agent.workspace ?? agent.name, permissions: agent.permissions });
    }
    if (config.authToken !== undefined) {
      this.#byTokenHash.set(hash(config.authToken), { name: DEFAULT_AGENT_NAME, workspaceNamespace: '', permissions: operatorPermissions(config.defaultPermissions) });
    }
  }

  /** Whether HTTP callers must present a bearer token. */
  get authRequired(): boolean {
    return this.#byTokenHash.size > 0;
  }

  /** Resolve the Authorization header of a request. */
  authenticate(authorization: string | undefined): AuthResult {
    if (!this.authRequired) return { ok: true, agent: this.#local };
    if (authorization === undefined || authorization.trim() === '') return { ok: false, reason: 'missing' };
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match?.[1]) return { ok: false, reason: 'malformed' };
    const agent = this.#byTokenHash.get(hash(match[1]));
    return agent ? { ok: true, agent } : { ok: false, reason: 'unknown' };
  }
}

function hash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
