// Public surface of the executor: create it (it resolves once its sandboxes are warm), run calls.
import { PooledExecutor } from './executor.js';
import { maxHostArgChars } from './executor-types.js';
import type { ExecutorOptions } from './executor.js';
import { HostLinkServer } from './host-link-server.js';

export { PooledExecutor } from './executor.js';
export type { ExecutorOptions } from './executor.js';
export { createHostApi } from './host-api.js';
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

/** The worker threads' direct line for awaited host calls; without one (no socket here) they use IPC. */
async function openHostLink(options: ExecutorOptions): Promise<HostLinkServer | false> {
  // One frame holds one call's arguments, JSON-escaped: at most six characters per character.
  try {
    return await HostLinkServer.open(6 * maxHostArgChars(options.config.limits) + 1024 * 1024, options.logger.child({ subsystem: 'host-link' }));
  } catch (err) {
    options.logger.warn({ err: (err as Error).message }, 'no host link socket; awaited host calls go through the sandbox processes');
    return false;
  }
}
