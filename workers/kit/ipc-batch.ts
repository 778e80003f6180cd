// One IPC write per event-loop turn instead of one per message. Under load the coordinator and a
// sandbox process exchange dozens of small messages per turn ('run', 'done', host calls and
// replies); each write is a syscall that also wakes the other side, which cost more than the
// messages themselves. Messages keep their order; a turn with a single message sends it as is.

/** What crosses the channel: one message, or several sent in one write. */
export type Batch<T> = { type: 'batch'; messages: T[] };

export interface BatchingSender<T> {
  /** Queues `msg`; everything queued in this turn is written once, in order, before the next. */
  (msg: T): void;
  /** Writes what is queued now (before the process exits, or a message that must not wait). */
  flush(): void;
}

export function batchingSender<T>(write: (msg: T | Batch<T>) => void): BatchingSender<T> {
  let pending: T[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (pending.length === 0) return;
    const out = pending;
    pending = [];
    write(out.length === 1 ? (out[0] as T) : { type: 'batch', messages: out });
  };
  const send = (msg: T): void => {
    pending.push(msg);
    if (!scheduled) {
      scheduled = true;
      // The check phase of this same turn: after every I/O callback that could add to the batch,
      // before the loop waits again, so a lone message is not delayed.
      setImmediate(flush);
    }
  };
  return Object.assign(send, { flush });
}

/** Hands each message of `msg` (a batch or a single one) to `handle`, in order. */
export function unbatch<T extends { type: string }>(msg: T | Batch<T>, handle: (m: T) => void): void {
  if (msg.type === 'batch') {
    for (const m of (msg as Batch<T>).messages) handle(m);
  } else {
    handle(msg as T);
  }
}
