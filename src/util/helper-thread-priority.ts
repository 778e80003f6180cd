// Run inside a helper thread (src/util/helper-threads.ts): on Linux the thread lowers its own
// scheduling priority, so on a busy machine the coordinator's event loop wins the CPU over it.

import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** Nice value of helper threads (the coordinator runs at 0). */
const HELPER_NICE = 10;

export function lowerThreadPriority(): void {
  try {
    // /proc/thread-self names this thread's id; setpriority on a thread id renices that thread only.
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isSafeInteger(tid) && tid > 0) setPriority(tid, HELPER_NICE);
  } catch {
    // Not Linux, or not permitted: the helper runs at the coordinator's priority.
  }
}
