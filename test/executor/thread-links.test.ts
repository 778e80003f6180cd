// The frame rules of every call's one channel (src/executor/thread-links.ts): a call is tied to
// the link it went out on and to its key. Frames an escaped thread could forge - another call's id,
// a wrong or missing key, a replay of an answer, a frame on another thread's link, a malformed
// outcome - reach nobody; a link that closes mid-call ends that call with a clear error, never a
// hang; a thread takes a call only once it says 'serving', one at a time, and nothing waits here.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LinkConnection } from '../../src/executor/host-link-server.js';
import { LINK_LOST_MS, ThreadLinks } from '../../src/executor/thread-links.js';
import type { Outcome, RunRequest } from '../../workers/kit/protocol.js';

const request = (key: string, agent = 'a', memoryMb = 64): RunRequest => ({ code: 'return 1', language: 'javascript', timeoutMs: 1000, memoryMb, workspaceName: 'w', agent, fetchAllowed: false, streamOutput: true, maxArgChars: 100, callKey: key });
const OK: Outcome = { ok: true, value: 1, output: [] };

function conn(thread: number): LinkConnection & { frames: string[]; open: boolean } {
  const c = { thread, frames: [] as string[], open: true, write: (f: string) => (c.open ? (c.frames.push(f), true) : false) };
  return c;
}

describe('ThreadLinks', () => {
  let events: { done: [number, Outcome][]; output: [number, string[]][]; lost: number[]; free: number };
  let links: ThreadLinks;
  beforeEach(() => {
    events = { done: [], output: [], lost: [], free: 0 };
    links = new ThreadLinks({
      done: (id, o) => events.done.push([id, o]),
      output: (id, l) => events.output.push([id, l]),
      lost: (id) => events.lost.push(id),
      free: () => events.free++,
    });
  });
  afterEach(() => vi.useRealTimers());

  it('sends nothing to a thread until it says it serves, then one call at a time, and nothing waits here', () => {
    const t = conn(1);
    links.frame(t, { kind: 'output', id: 1, key: 'k', lines: ['early'] });
    expect(links.send(1, request('k1'))).toBe(false);
    links.frame(t, { kind: 'serving' });
    expect(links.free).toBe(1);
    expect(links.send(1, request('k1'))).toBe(true);
    expect(links.free).toBe(0);
    // Busy: the next call, of this agent or another, is not sent (it waits in the pool's one queue).
    expect(links.send(2, request('k2'))).toBe(false);
    expect(links.send(3, request('k3', 'bob'))).toBe(false);
    expect(t.frames.map((f) => (JSON.parse(f) as { id: number }).id)).toEqual([1]);
    // A 'serving' while the call runs does not free the thread for a second one.
    links.frame(t, { kind: 'serving' });
    expect(links.free).toBe(0);
    links.frame(t, { kind: 'done', id: 1, key: 'k1', outcome: OK });
    expect(events.done.map(([id]) => id)).toEqual([1]);
    expect(links.free).toBe(1);
    expect(links.send(2, request('k2'))).toBe(true);
  });

  it('a thread that still works for its answered call (busy) is free only once it says serving again', () => {
    const t = conn(1);
    links.frame(t, { kind: 'serving' });
    links.send(1, request('k1'));
    links.frame(t, { kind: 'done', id: 1, key: 'k1', outcome: OK, busy: true });
    expect(events.done.map(([id]) => id)).toEqual([1]);
    expect(links.free).toBe(0);
    expect(links.send(2, request('k2'))).toBe(false);
    // Its interpreter grew: a call with less memory_mb than that needs a pristine one.
    links.frame(t, { kind: 'serving', minMemoryMb: 300 });
    expect(links.free).toBe(1);
    expect(links.fits(100)).toBe(false);
    expect(links.send(2, request('k2', 'a', 100))).toBe(false);
    expect(links.fits(500)).toBe(true);
    expect(links.send(2, request('k2', 'a', 500))).toBe(true);
  });

  it('after a recycle, no thread of the old generation takes a call, whatever it says', () => {
    const old = conn(1);
    links.frame(old, { kind: 'serving' });
    links.retireAll();
    expect(links.free).toBe(0);
    links.frame(old, { kind: 'serving' });
    expect(links.free).toBe(0);
    expect(links.send(1, request('k1'))).toBe(false);
    const fresh = conn(2);
    links.frame(fresh, { kind: 'serving' });
    expect(links.send(1, request('k1'))).toBe(true);
    expect(fresh.frames).toHaveLength(1);
    expect(old.frames).toHaveLength(0);
  });

  it('takes a call\'s frames only from its own link and with its own key', () => {
    const a = conn(1);
    const b = conn(2);
    links.frame(a, { kind: 'serving' });
    links.frame(b, { kind: 'serving' });
    links.send(1, request('alice-key'));
    links.send(2, request('bob-key'));
    const onA = links.carries(a, 1) ? a : b;
    const onB = onA === a ? b : a;
    // Thread B forges call 1's answer and output, with and without its key.
    links.frame(onB, { kind: 'done', id: 1, key: 'alice-key', outcome: OK });
    links.frame(onB, { kind: 'output', id: 1, key: 'alice-key', lines: ['forged'] });
    links.frame(onA, { kind: 'done', id: 1, key: 'wrong', outcome: OK });
    links.frame(onA, { kind: 'done', id: 1, outcome: OK });
    links.frame(onA, { kind: 'done', id: 2, key: 'bob-key', outcome: OK });
    // Malformed outcomes are dropped too.
    links.frame(onA, { kind: 'done', id: 1, key: 'alice-key', outcome: { ok: false, output: [] } });
    links.frame(onA, { kind: 'done', id: 1, key: 'alice-key', outcome: 'yes' });
    expect(events.done).toEqual([]);
    expect(events.output).toEqual([]);
    expect(links.carries(onB, 1)).toBe(false);
    links.frame(onA, { kind: 'output', id: 1, key: 'alice-key', lines: ['mine', 7] });
    links.frame(onA, { kind: 'done', id: 1, key: 'alice-key', outcome: OK });
    expect(events.output).toEqual([[1, ['mine']]]);
    expect(events.done).toEqual([[1, OK]]);
    // A replay of the answer, once the call is over, reaches nobody.
    links.frame(onA, { kind: 'done', id: 1, key: 'alice-key', outcome: { ok: true, value: 'replayed', output: [] } });
    expect(events.done).toHaveLength(1);
  });

  it('a link that closes mid-call ends the call within LINK_LOST_MS unless its process answers first', () => {
    vi.useFakeTimers();
    const a = conn(1);
    const b = conn(2);
    links.frame(a, { kind: 'serving' });
    links.frame(b, { kind: 'serving' });
    links.send(1, request('k1'));
    links.send(2, request('k2'));
    const first = links.carries(a, 1) ? a : b;
    const second = first === a ? b : a;
    links.closed(first);
    links.closed(second);
    // The process answered for call 2 (it ended that thread): nothing is lost twice.
    links.release(2);
    vi.advanceTimersByTime(LINK_LOST_MS + 1);
    expect(events.lost).toEqual([1]);
    expect(links.free).toBe(0);
  });

  it('a thread whose call its process answered for (the thread was ended) gets no further call', () => {
    const a = conn(1);
    links.frame(a, { kind: 'serving' });
    links.send(1, request('k1'));
    links.release(1);
    expect(links.free).toBe(0);
    links.frame(a, { kind: 'serving' });
    expect(links.send(2, request('k2'))).toBe(false);
  });
});
