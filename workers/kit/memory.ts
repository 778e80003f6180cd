// What a worker's calls hold in memory: V8 heap in use plus memory outside it (ArrayBuffers, which
// resourceLimits do not count), above what the idle worker held at warm-up. Shared by the
// end-of-call check and by the pool host's probe when the process's resident memory grows.

import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { cachedBytes } from './read-cache.js';

// A collector to call before judging: without it, garbage earlier calls left (ArrayBuffers above
// all) would count against - or hide inside - a call's figure. Set up before lockdown.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

let baselineBytes = 0;

export function heapBytes(): number {
  const s = getHeapStatistics();
  // The thread's cache of file contents is not any call's (read-cache.ts).
  return s.used_heap_size + s.external_memory - cachedBytes();
}

/** Measures the idle worker (at warm-up, after a collection). */
export function setBaseline(): void {
  collectGarbage();
  baselineBytes = heapBytes();
}

/** Memory above the idle worker's, without a collection: may include garbage. */
export function quickBytes(): number {
  return heapBytes() - baselineBytes;
}

/**
 * Memory the running call retains. Only when the quick figure is over `limit` is a collection
 * paid for; ArrayBuffer backing stores are freed by a concurrent sweeper after it, so a few short
 * turns are given before the figure counts.
 */
export async function retainedBytes(limit: number): Promise<number> {
  let used = quickBytes();
  for (let round = 0; round < 4 && used > limit; round++) {
    collectGarbage();
    await new Promise((resolve) => setTimeout(resolve, 5 * (round + 1)));
    used = quickBytes();
  }
  return used;
}
