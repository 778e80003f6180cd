// Permission checks of the MCP tools, Deno-style: a refused action names the permission it needs,
// what the agent has, and where an operator grants it.

import type { SkillsAccess, WorkspaceAccess } from '../config/config-types.js';
import type { AgentIdentity } from './mcp-types.js';
import { ToolFailure } from './tool-result.js';

const RANK: Record<WorkspaceAccess | SkillsAccess, number> = { none: 0, read: 1, 'read-write': 2, publish: 3 };

export function requireAccess(agent: AgentIdentity, area: 'workspace' | 'skills', needed: 'read' | 'read-write' | 'publish', tool: string): void {
  const have: WorkspaceAccess | SkillsAccess = agent.permissions[area];
  if (RANK[have] >= RANK[needed]) return;
  throw new ToolFailure(
    'PERMISSION_DENIED',
    `permission denied: ${tool} needs the "${area}" permission "${needed}", and agent "${agent.name}" has "${have}". ` +
      `An operator can grant it in the agent's "permissions.${area}" in the daemon configuration.`,
    'denied',
  );
}
