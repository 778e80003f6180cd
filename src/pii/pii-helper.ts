// PII detection off the coordinator's event loop. The detectors are linear, but their cost per
// character on adversarial shapes is high enough that megabytes of it held every other agent for
// seconds. So: a short text (up to INLINE_MAX_CHARS) is detected inline, and all callers together
// detect at most TURN_INLINE_CHARS inline per turn of the event loop (past that a caller waits a
// turn); anything longer goes to a helper thread (pii-worker.ts, a piscina pool) in
// slices (detect-chunked.ts), one slice of a job in the queue at a time, each in its owner's turn
// (util/helper-threads.ts), so agents take turns on the helper instead of waiting behind one agent's
// megabytes, however many jobs that agent runs at once.
// Bound per turn of the coordinator: about TURN_INLINE_CHARS of detection (a few milliseconds on
// the slowest shapes) plus copying slices to the helper.

import { HelperThreads } from '../util/helper-threads.js';
import type { HelperThreadsStats } from '../util/helper-threads.js';
import { findPii } from './detectors.js';
import type { PiiMatch } from './pii-types.js';

/** Texts up to this many characters are detected on the calling thread. */
export const INLINE_MAX_CHARS = 8 * 1024;
/** Characters all callers together detect inline per turn of the event loop. */
export const TURN_INLINE_CHARS = 16 * 1024;

/** Two threads (the machine's other cores do the scanning; the coordinator only waits), gone after 30 s idle. */
const helper = new HelperThreads(import.meta.url, 'src/pii/pii-worker.js', { threads: 2, idleMs: 30_000 });

let inlineThisTurn = 0;
let resetScheduled = false;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Counts `chars` against this turn's inline allowance; waits for later turns while it is spent. */
async function takeInlineTurn(chars: number): Promise<void> {
  while (inlineThisTurn > 0 && inlineThisTurn + chars > TURN_INLINE_CHARS) await nextTurn();
  inlineThisTurn += chars;
  if (!resetScheduled) {
    resetScheduled = true;
    setImmediate(() => {
      resetScheduled = false;
      inlineThisTurn = 0;
    });
  }
}

/**
 * findPii of one text of at most a slice's length (detect-chunked.ts slices longer ones), without
 * holding the event loop: short texts inline under the per-turn allowance, others on the helper.
 */
export async function findPiiOffLoop(text: string, turn?: string): Promise<readonly PiiMatch[]> {
  const onHelper = text.length > INLINE_MAX_CHARS ? helper.run<PiiMatch[]>({ text }, turn) : undefined;
  if (onHelper) return onHelper;
  // Without a helper (a build without its worker file), a long text still waits its turns.
  await takeInlineTurn(Math.min(text.length, TURN_INLINE_CHARS));
  return findPii(text);
}

/** Ends the helper threads (daemon shutdown, tests); a later call starts them again. */
export function closePiiHelper(): Promise<void> {
  return helper.close();
}

/** Figures for get_execution_stats: helper threads, queued slices and slices done. */
export function piiHelperStats(): HelperThreadsStats {
  return helper.stats();
}
