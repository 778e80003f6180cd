// The MCP surfaces' side of the access check (src/access): tools and resources ask `authorize`
// for the session's agent; a refusal (PermissionDenied) becomes a tool error with code
// PERMISSION_DENIED (define-tool.ts) or a JSON-RPC error (resources.ts), same text everywhere.

import { authorize } from '../access/index.js';
import type { Grant } from '../access/index.js';
import { workspaceView } from '../workspace/index.js';
import type { WorkspaceNamespace, WorkspaceStore } from '../workspace/index.js';
import type { AgentIdentity } from './mcp-types.js';

/** The agent's workspace for `action`, opened from its grant (read, or read-write for changes). */
export function grantedWorkspace(store: WorkspaceStore, agent: AgentIdentity, action: string, needs: 'read' | 'read-write'): WorkspaceNamespace {
  return workspaceView(store, authorize(agent, action, { kind: 'workspace', needs }));
}

/** The agent's grant for the `skills` permission at `needs`; `action` names what was tried. */
export function requireSkills(agent: AgentIdentity, needs: 'read' | 'read-write' | 'publish', action: string): Grant {
  return authorize(agent, action, { kind: 'skills', needs });
}
