// The PII helper thread (piscina): runs the detectors over one slice of a long text, off the
// coordinator's event loop (src/pii/pii-helper.ts sends the slices). Pure computation on a copy
// of the text; what comes back is plain data. On Linux the thread lowers its own scheduling
// priority, so on a busy machine the coordinator's event loop wins the CPU over a scan.

import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { findPii } from './detectors.js';
import type { PiiMatch } from './pii-types.js';

/** Nice value of the helper threads (the coordinator runs at 0). */
const HELPER_NICE = 10;

try {
  // /proc/thread-self names this thread's id; setpriority on a thread id renices that thread only.
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isSafeInteger(tid) && tid > 0) setPriority(tid, HELPER_NICE);
} catch {
  // Not Linux, or not permitted: the helper runs at the coordinator's priority.
}

export interface PiiSliceTask {
  text: string;
}

export default function detectSlice(task: PiiSliceTask): PiiMatch[] {
  return findPii(task.text).map(({ type, start, end, value }) => ({ type, start, end, value }));
}
