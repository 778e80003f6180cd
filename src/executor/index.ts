// Public surface of the executor: create it (it resolves once its sandboxes are warm), run calls.
import { PooledExecutor } from './executor.js';
import type { ExecutorOptions } from './executor.js';

export { PooledExecutor } from './executor.js';
export type { ExecutorOptions } from './executor.js';
export { createHostApi } from './host-api.js';
export type { HostApiDeps, HostMethod, VirtualTree } from './host-api.js';
export * from './executor-types.js';

export async function createExecutor(options: ExecutorOptions): Promise<PooledExecutor> {
  const executor = new PooledExecutor(options);
  try {
    await executor.start();
  } catch (err) {
    await executor.close();
    throw err;
  }
  return executor;
}
