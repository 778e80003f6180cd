// How a sandbox process supervises JavaScript threads (workers/kit/runtime-strategy.ts). Every call
// gets a fresh SES Compartment, pristine by construction: a recycle has nothing to replace, a call
// is stopped by ending its thread, and piscina starts the thread's replacement in the same pool.

import type { RuntimeStrategy } from '../kit/runtime-strategy.js';

const strategy: RuntimeStrategy = {
  watchExit: true,
  interrupt: () => false,
  recycle: () => Promise.resolve(0),
  replace: (_threads, exited) => exited,
};

export default strategy;
