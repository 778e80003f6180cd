// A sandbox process's watch over its calls' memory. resourceLimits do not count ArrayBuffers and
// some allocations outrun them, so the process watches its real footprint. But resident memory
// also holds what earlier calls freed and the allocator kept, so growth only triggers a probe: the
// call's worker reports what the call itself retains, and only a call over its own limit is
// stopped. A worker too busy to answer (a synchronous allocation loop) is judged on RSS alone.

const MB = 1024 * 1024;
/** How long a probed worker may take to say what its call holds before RSS alone decides, ms. */
const PROBE_TIMEOUT_MS = 250;
/**
 * A worker too busy to answer (a synchronous loop) is judged on RSS alone, which also holds what
 * earlier calls freed and the allocator kept: it is stopped only past twice its limit plus this.
 */
const UNANSWERED_MARGIN_BYTES = 256 * MB;

/** What the watch needs of a running call. */
export interface WatchedCall {
  rssAtStart: number;
  memoryMb: number;
  /** When a memory probe was sent and not yet answered (performance.now()). */
  probeSentAt?: number;
  /** Set once the call is being stopped, for whatever reason. */
  reason?: unknown;
}

export class MemoryWatch<C extends WatchedCall> {
  /** The resident memory last read: a call's starting figure, without a syscall per call. */
  lastRss = process.memoryUsage.rss();

  constructor(
    private readonly running: ReadonlyMap<number, C>,
    /** Asks the call's worker what it holds; false when it is not on a thread yet (holds nothing). */
    private readonly probe: (id: number, call: C, limitBytes: number) => boolean,
    /** Stops a call that is over its limit. */
    private readonly stop: (id: number) => void,
  ) {}

  /** One look, made by the owner's poll while calls run (an idle sandbox process does not wake). */
  check(): void {
    const rss = process.memoryUsage.rss();
    this.lastRss = rss;
    if (this.running.size === 0) return;
    const now = performance.now();
    let baseline = Infinity;
    let allowance = 0;
    for (const r of this.running.values()) {
      baseline = Math.min(baseline, r.rssAtStart);
      allowance += r.memoryMb * MB;
    }
    if (rss - baseline <= allowance) return;
    for (const [id, r] of this.running) {
      if (r.reason) continue;
      if (r.probeSentAt === undefined) {
        if (this.probe(id, r, r.memoryMb * MB)) r.probeSentAt = now;
      } else if (now - r.probeSentAt > PROBE_TIMEOUT_MS && rss - r.rssAtStart > 2 * r.memoryMb * MB + UNANSWERED_MARGIN_BYTES) {
        this.stop(id);
      }
    }
  }

  /** The worker's answer to a probe: what the call itself retains, bytes. */
  answer(id: number, call: C, bytes: number): void {
    call.probeSentAt = undefined;
    if (bytes > call.memoryMb * MB) {
      this.stop(id);
      return;
    }
    // A false alarm: the growth is not this call's. Count from here, so it is not probed again
    // until the process grows by a whole limit more.
    call.rssAtStart = process.memoryUsage.rss();
  }
}
