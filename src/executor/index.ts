// Public surface of the executor: create it (it resolves once its sandboxes are warm), run calls.
import { PooledExecutor } from './executor.js';
import { maxHostArgChars } from './executor-types.js';
import { MAX_ANSWER_CHARS } from '../../workers/kit/protocol.js';
import type { ExecutorOptions } from './executor.js';
import { HostLinkServer } from './host-link-server.js';

export { PooledExecutor } from './executor.js';
export type { ExecutorOptions } from './executor.js';
export { authorizeCall, createHostApi } from './host-api.js';
export type { HostApiDeps, HostMethod, VirtualTree } from './host-api.js';
export * from './executor-types.js';

export async function createExecutor(options: ExecutorOptions): Promise<PooledExecutor> {
  const executor = new PooledExecutor({ ...options, hostLink: options.hostLink ?? (await openHostLink(options)) });
  try {
    await executor.start();
  } catch (err) {
    await executor.close();
    throw err;
  }
  return executor;
}

/**
 * The worker threads' own line to the coordinator: every call, its output, its answer and its
 * awaited host calls travel on it. Without it no sandbox can serve: opening it fails loudly.
 */
function openHostLink(options: ExecutorOptions): Promise<HostLinkServer> {
  // One frame holds one call's arguments or one call's answer (result and output, as the worker
  // bounds them), JSON-escaped: at most six bytes per character.
  const frame = 6 * Math.max(maxHostArgChars(options.config.limits), MAX_ANSWER_CHARS) + 1024 * 1024;
  return HostLinkServer.open(frame, options.logger.child({ subsystem: 'host-link' }));
}
