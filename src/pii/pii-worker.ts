// The PII helper thread (piscina): runs the detectors over one slice of a long text, off the
// coordinator's event loop (src/pii/pii-helper.ts sends the slices). Pure computation on a copy
// of the text; what comes back is plain data.

import { lowerThreadPriority } from '../util/helper-thread-priority.js';
import { findPii } from './detectors.js';
import type { PiiMatch } from './pii-types.js';

lowerThreadPriority();

export interface PiiSliceTask {
  text: string;
}

export default function detectSlice(task: PiiSliceTask): PiiMatch[] {
  return findPii(task.text).map(({ type, start, end, value }) => ({ type, start, end, value }));
}
