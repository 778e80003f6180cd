// PII detection off the coordinator's event loop. The detectors are linear, but their cost per
// character on adversarial shapes is high enough that megabytes of it held every other agent for
// seconds. So: a short text (up to INLINE_MAX_CHARS) is detected inline, and all callers together
// detect at most TURN_INLINE_CHARS inline per turn of the event loop (past that a caller waits a
// turn); anything longer goes to a helper thread (pii-worker.ts, a piscina pool) in
// slices (detect-chunked.ts), one slice of a job in the queue at a time, so concurrent jobs of
// different agents take turns on the helper instead of waiting behind one agent's megabytes.
// Bound per turn of the coordinator: about TURN_INLINE_CHARS of detection (a few milliseconds on
// the slowest shapes) plus copying slices to the helper.

import { existsSync } from 'node:fs';
import { Piscina } from 'piscina';
import { findPii } from './detectors.js';
import type { PiiMatch } from './pii-types.js';

/** Texts up to this many characters are detected on the calling thread. */
export const INLINE_MAX_CHARS = 8 * 1024;
/** Characters all callers together detect inline per turn of the event loop. */
export const TURN_INLINE_CHARS = 16 * 1024;
/** Helper threads (the machine's other cores do the scanning; the coordinator only waits). */
const HELPER_THREADS = 2;
/** An idle helper thread exits after this long, ms. */
const HELPER_IDLE_MS = 30_000;

let inlineThisTurn = 0;
let resetScheduled = false;
let pool: Piscina | undefined;
let poolMissing = false;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function workerFile(): string | undefined {
  // From source (vitest) the worker is taken from the build, as the sandbox workers are.
  const fromSource = import.meta.url.endsWith('.ts');
  const url = fromSource ? new URL('../../dist/src/pii/pii-worker.js', import.meta.url) : new URL('./pii-worker.js', import.meta.url);
  return existsSync(url) ? url.href : undefined;
}

function helper(): Piscina | undefined {
  if (pool || poolMissing) return pool;
  const filename = workerFile();
  if (filename === undefined) {
    poolMissing = true;
    return undefined;
  }
  pool = new Piscina({ filename, minThreads: 0, maxThreads: HELPER_THREADS, idleTimeout: HELPER_IDLE_MS });
  return pool;
}

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
export async function findPiiOffLoop(text: string): Promise<readonly PiiMatch[]> {
  const threads = text.length > INLINE_MAX_CHARS ? helper() : undefined;
  if (threads === undefined) {
    // Without a helper (a build without its worker file), a long text still waits its turns.
    await takeInlineTurn(Math.min(text.length, TURN_INLINE_CHARS));
    return findPii(text);
  }
  return (await threads.run({ text })) as PiiMatch[];
}

/** Ends the helper threads (daemon shutdown, tests); a later call starts them again. */
export async function closePiiHelper(): Promise<void> {
  const running = pool;
  pool = undefined;
  await running?.destroy();
}

/** Figures for get_execution_stats: helper threads, queued slices and slices done. */
export function piiHelperStats(): { threads: number; queued: number; completed: number } {
  return pool ? { threads: pool.threads.length, queued: pool.queueSize, completed: pool.completed } : { threads: 0, queued: 0, completed: 0 };
}
