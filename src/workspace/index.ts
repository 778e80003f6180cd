// Public surface of the workspace subsystem.
export { Workspace, WorkspaceView, WorkspaceError, normalizeRelative, MAX_LIST_ENTRIES, MAX_PATH_CHARS, MAX_SEGMENT_BYTES } from './workspace.js';
export type { WorkspaceErrorCode, WorkspaceOptions } from './workspace.js';
export type { LocalFolder, WorkspaceNamespace, WorkspaceStore } from './workspace-store.js';
export { workspaceView } from './granted-view.js';
