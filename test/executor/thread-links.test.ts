// The frame rules of the direct path (src/executor/thread-links.ts): a call is tied to the link it
// went out on and to its key. Frames an escaped thread could forge - another call's id, a wrong or
// missing key, a replay of an answer, a frame on another thread's link, a malformed outcome - reach
// nobody; a link that closes mid-call ends that call with a clear error, never a hang; a thread
// takes calls only once it says 'serving', runs one at a time, and holds at most one more sent
// ahead, of the same agent only.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LinkConnection } from '../../src/executor/host-link-server.js';
import { LINK_LOST_MS, ThreadLinks } from '../../src/executor/thread-links.js';
import type { Outcome, RunRequest } from '../../workers/kit/protocol.js';

const request = (key: string, agent = 'a'): RunRequest => ({ code: 'return 1', language: 'javascript', timeoutMs: 1000, memoryMb: 64, workspaceName: 'w', agent, fetchAllowed: false, streamOutput: true, maxArgChars: 100, callKey: key });
const OK: Outcome = { ok: true, value: 1, output: [] };

function conn(thread: number): LinkConnection & { frames: string[]; open: boolean } {
  const c = { thread, frames: [] as string[], open: true, write: (f: string) => (c.open ? (c.frames.push(f), true) : false) };
  return c;
}

describe('ThreadLinks', () => {
  let events: { done: [number, Outcome][]; output: [number, string[]][]; lost: number[]; started: number[]; free: number };
  let links: ThreadLinks;
  beforeEach(() => {
    events = { done: [], output: [], lost: [], started: [], free: 0 };
    links = new ThreadLinks({
      done: (id, o) => events.done.push([id, o]),
      output: (id, l) => events.output.push([id, l]),
      lost: (id) => events.lost.push(id),
      started: (id) => events.started.push(id),
      free: () => events.free++,
    });
  });
  afterEach(() => vi.useRealTimers());

  it('sends nothing to a thread until it says it serves, then one call and one more sent ahead', () => {
    const t = conn(1);
    links.frame(t, { kind: 'output', id: 1, key: 'k', lines: ['early'] });
    expect(links.send(1, request('k1'))).toBe(false);
    links.frame(t, { kind: 'serving' });
    expect(links.free).toBe(1);
    expect(links.send(1, request('k1'))).toBe(true);
    expect(links.free).toBe(0);
    expect(links.aheadRoom).toBe(1);
    expect(links.submit(2, request('k2'))).toBe(false);
    expect(links.running(2)).toBe(false);
    expect(links.aheadRoom).toBe(0);
    expect(links.send(3, request('k3'))).toBe(false);
    expect(t.frames.map((f) => (JSON.parse(f) as { id: number }).id)).toEqual([1, 2]);
    // The call sent ahead answers on the same link, with its own key; then the thread is free.
    links.frame(t, { kind: 'done', id: 2, key: 'k1', outcome: OK });
    expect(events.done).toEqual([]);
    expect(events.started).toEqual([]);
    links.frame(t, { kind: 'done', id: 1, key: 'k1', outcome: OK });
    // Sent ahead, it counts as started (its process dying now may have run some of it) only now.
    expect(events.started).toEqual([2]);
    expect(links.running(2)).toBe(true);
    links.frame(t, { kind: 'done', id: 2, key: 'k2', outcome: OK });
    expect(events.done.map(([id]) => id)).toEqual([1, 2]);
    expect(links.free).toBe(1);
  });

  it('never sends a call ahead behind another agent\'s call (its long call would hold it up)', () => {
    const t = conn(1);
    links.frame(t, { kind: 'serving' });
    expect(links.send(1, request('k1', 'alice'))).toBe(true);
    expect(links.send(2, request('k2', 'bob'))).toBe(false);
    expect(links.submit(2, request('k2', 'bob'))).toBe(false);
    expect(t.frames).toHaveLength(1);
    links.frame(t, { kind: 'done', id: 1, key: 'k1', outcome: OK });
    // Bob's call went out once the thread was free, not before.
    expect(events.started).toEqual([2]);
    expect(t.frames.map((f) => (JSON.parse(f) as { id: number }).id)).toEqual([1, 2]);
  });

  it('a link that closes with a call running and one sent ahead ends both within LINK_LOST_MS', () => {
    vi.useFakeTimers();
    const t = conn(1);
    links.frame(t, { kind: 'serving' });
    links.send(1, request('k1'));
    links.send(2, request('k2'));
    links.closed(t);
    vi.advanceTimersByTime(LINK_LOST_MS + 1);
    expect(events.lost.sort()).toEqual([1, 2]);
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
    links.release(2, true);
    vi.advanceTimersByTime(LINK_LOST_MS + 1);
    expect(events.lost).toEqual([1]);
    expect(links.free).toBe(0);
  });

  it('a thread whose call its process answered for (the thread was ended) gets no further call', () => {
    const a = conn(1);
    links.frame(a, { kind: 'serving' });
    links.send(1, request('k1'));
    links.release(1, true);
    expect(links.free).toBe(0);
    expect(links.send(2, request('k2'))).toBe(false);
  });

  it('keeps calls while no thread is free, sends them in order as threads free, and gives back one not yet sent', () => {
    const a = conn(1);
    expect(links.submit(1, request('k1'))).toBe(false);
    expect(links.submit(2, request('k2'))).toBe(false);
    expect(links.submit(3, request('k3'))).toBe(false);
    expect(links.withdraw(2)).toBe(true);
    links.frame(a, { kind: 'serving' });
    expect(events.started).toEqual([1]);
    expect(links.free).toBe(0);
    links.frame(a, { kind: 'done', id: 1, key: 'k1', outcome: OK });
    expect(events.started).toEqual([1, 3]);
    expect(links.withdraw(3)).toBe(false);
    expect(a.frames.map((f) => (JSON.parse(f) as { id: number }).id)).toEqual([1, 3]);
  });

  it('a cancel goes to the link that carries the call', () => {
    const a = conn(1);
    links.frame(a, { kind: 'serving' });
    links.send(1, request('k1'));
    links.cancel(1, 'timeout');
    expect(JSON.parse(a.frames[1] as string)).toEqual({ kind: 'cancel', id: 1, reason: 'timeout' });
  });
});
