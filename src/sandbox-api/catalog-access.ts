// What one caller may see of the catalog and what it can call: the single home of the visibility
// rule, used by search_tools, get_tool_definition and list_tool_categories (MCP and from code) and
// by the servers/ tree, and of the "why not callable" answers call_tool gives as errors.

import { allows } from '../access/index.js';
import type { Config, Permissions } from '../config/config-types.js';
import type { Callability, Catalog, CatalogViewer, ToolEntry } from '../catalog/index.js';
import type { UpstreamManager, UpstreamServerStatus } from '../upstream/index.js';
import { toolAllowed } from './permissions.js';
import { skillVisibleTo } from '../skills/index.js';

/** The server name of the sandbox's own functions: always visible and callable. */
export const SANDBOX_SERVER = 'sandbox';
/** The category of saved skills. */
export const SKILLS_CATEGORY = 'skills';

export interface CatalogAccessDeps {
  config: Pick<Config, 'agents' | 'mcpServers'>;
  catalog?: Catalog;
  upstream?: UpstreamManager;
}

/** Who is asking: an agent's name (skill authorship) and its permissions. */
export interface Viewer {
  agent: string;
  permissions: Permissions;
}

function isSkill(entry: ToolEntry): boolean {
  return entry.source === 'skill' || entry.category === SKILLS_CATEGORY;
}

/**
 * Whether `entry` exists for the caller: the sandbox's own functions always; a skill when no
 * agents are configured, or it is not private, or the caller wrote it; any other tool when the
 * caller's `tools` permission includes `server.tool`.
 */
export function entryVisible(config: Pick<Config, 'agents'>, who: Viewer, entry: ToolEntry): boolean {
  if (entry.mcp_server === SANDBOX_SERVER) return true;
  if (isSkill(entry)) return skillVisibleTo(config.agents.length === 0 ? null : who.agent, entry.author, entry.visibility);
  return toolAllowed(who.permissions, entry.mcp_server, entry.name);
}

/**
 * Why the caller cannot use `server` now, or null when it is connected. `setup` is the catalog's
 * `mcpServers` entry for a server nobody configured.
 */
export function serverProblem(deps: CatalogAccessDeps, server: string, status: UpstreamServerStatus | undefined): Exclude<Callability, { callable: true }> | null {
  // The upstream manager holds exactly the configured servers: no status means not configured.
  if (status === undefined) {
    const setup = deps.catalog?.categorySetup(server) ?? null;
    const snippet = setup ? { [server]: setup } : undefined;
    const fix = snippet ? `add this to mcpServers in the daemon's configuration and restart it: ${JSON.stringify(snippet)}` : `add a "${server}" entry to mcpServers in the daemon's configuration and restart it`;
    const why = `not connected: server "${server}" is not configured; `;
    return {
      callable: false,
      why: why + fix,
      ...(snippet ? { mcp_server_config: snippet, brief: `${why}add setup.${server} of this result to mcpServers and restart the daemon` } : {}),
    };
  }
  const reason = status.error === undefined ? '' : `: ${status.error}`;
  switch (status.state) {
    case 'ready':
      return null;
    case 'connecting':
      return { callable: false, why: `server "${server}" is still starting; try again in a moment` };
    case 'reconnecting':
      return { callable: false, why: `server "${server}" lost its connection and is reconnecting${reason}; try again in a moment` };
    case 'failed':
      return { callable: false, why: `server "${server}" failed to start${reason}; fix its entry in mcpServers (command, args, env, url) — get_execution_stats shows its status` };
    case 'closed':
      return { callable: false, why: `server "${server}" is closed: the daemon is shutting down` };
  }
}

/** A CatalogViewer for one caller, with the upstream servers' states as they are now. */
export function catalogViewer(deps: CatalogAccessDeps, who: Viewer): CatalogViewer {
  const statuses = deps.upstream?.status() ?? {};
  const states = Object.entries(statuses)
    .map(([name, s]) => `${name}=${s.state}`)
    .sort()
    .join(',');
  const permissions = who.permissions;
  return {
    key: [who.agent, permissions.tools.join('\u0001'), permissions.skills, states].join('\u0000'),
    visible: (entry) => entryVisible(deps.config, who, entry),
    callability(entry) {
      if (entry.mcp_server === SANDBOX_SERVER) return { callable: true };
      if (isSkill(entry)) {
        return !allows({ permissions }, { kind: 'skills', needs: 'read' }) ? { callable: false, why: 'your skills permission is "none"; importing skills needs "read"' } : { callable: true };
      }
      if (!toolAllowed(permissions, entry.mcp_server, entry.name)) {
        return { callable: false, why: `your tools permission does not include ${entry.mcp_server}.${entry.name}` };
      }
      const problem = serverProblem(deps, entry.mcp_server, statuses[entry.mcp_server]);
      if (problem) return problem;
      if (entry.source !== 'upstream') return { callable: false, why: `server "${entry.mcp_server}" does not list the tool ${entry.name}; search_tools shows the tools it has` };
      return { callable: true };
    },
  };
}
