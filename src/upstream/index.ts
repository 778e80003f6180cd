// Public API of the upstream subsystem: MCP servers this daemon is a client of.
export { UpstreamManager, DEFAULT_CALL_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS } from './manager.js';
export { UpstreamError, qualifiedName } from './upstream-error.js';
export type { UpstreamErrorCode } from './upstream-error.js';
export type { DescribedBlock } from './result.js';
export { convertToolResult } from './result.js';
export { closestNames } from './suggest.js';
export { DEFAULT_INSTANCE_IDLE_MS, DEFAULT_MAX_INSTANCES } from './server-instances.js';
export type { Caller } from './server-instances.js';
export { DEFAULT_MAX_WAITING } from './concurrency-limit.js';
export type {
  CallToolOptions,
  ToolsChangedListener,
  UpstreamBackoffOptions,
  UpstreamManagerOptions,
  UpstreamServerStatus,
  UpstreamState,
  UpstreamTool,
  UpstreamTransportKind,
} from './upstream-types.js';
