// The only way an agent's request reaches its workspace: a view opened from a Grant of the access
// check (src/access). A view from a "read" grant refuses writes and deletes itself, so a surface
// that asked for too little cannot write by mistake. `WorkspaceStore.namespace` stays for the
// daemon's own use (tests, tooling), which acts for no agent.

import { PermissionDenied, requireGrant } from '../access/index.js';
import type { Grant } from '../access/index.js';
import type { WorkspaceNamespace, WorkspaceStore } from './workspace-store.js';

/** The agent's namespace as `grant` allows it; a forged or non-workspace grant is a TypeError. */
export function workspaceView(store: WorkspaceStore, grant: Grant): WorkspaceNamespace {
  const g = requireGrant(grant, 'workspace', 'read');
  const view = store.namespace(g.subject.workspaceNamespace);
  if (g.resource.needs === 'read-write') return view;
  const refuse = (what: string): Promise<never> =>
    Promise.reject(
      new PermissionDenied(
        g.subject.name,
        g.action,
        { kind: 'workspace', needs: 'read-write' },
        `permission denied: ${what} needs the "workspace" permission "read-write", and ${g.action} was granted "read" only`,
      ),
    );
  return {
    namespaceName: view.namespaceName,
    readFile: (file) => view.readFile(file),
    writeFile: () => refuse('writing'),
    deleteFile: () => refuse('deleting'),
    listFiles: (subpath) => view.listFiles(subpath),
    usage: () => view.usage(),
    stats: () => view.stats(),
    ...(view.localFolder ? { localFolder: view.localFolder } : {}),
  };
}
