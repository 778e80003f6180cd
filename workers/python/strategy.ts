// How a sandbox process supervises its Python thread (workers/kit/runtime-strategy.ts). One
// interpreter serves one agent and holds more state than any sweep can list: a recycle, and any
// thread that ended, put a pristine interpreter in its place (the warm standby, thread-pool.ts). A
// runaway call is first asked to unwind through Pyodide's interrupt buffer, so the warm interpreter
// usually survives it.

import { SLOT_INTERRUPT } from '../kit/protocol.js';
import type { RuntimeStrategy } from '../kit/runtime-strategy.js';

/** What Pyodide's interrupt buffer takes for SIGINT. */
const SIGINT = 2;

const strategy: RuntimeStrategy = {
  watchExit: false,
  interrupt(slots) {
    Atomics.store(slots, SLOT_INTERRUPT, SIGINT);
    return true;
  },
  recycle: (threads) => threads.replace(),
  replace: (threads) => threads.replace().then(() => undefined),
};

export default strategy;
