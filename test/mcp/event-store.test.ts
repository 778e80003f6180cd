// The bounds of the SSE event store: a stream keeps its newest events, a session its newest
// bytes, all sessions together one budget; a resume from an event that was dropped is refused
// (never a replay with a hole in it), and closing a session gives its bytes back.

import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { EventBudget, SessionEventStore } from '../../src/mcp/http/event-store.js';

const note = (n: number, pad = 0): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: n, message: 'x'.repeat(pad) } });

async function replay(store: SessionEventStore, after: string): Promise<number[]> {
  const got: number[] = [];
  await store.replayEventsAfter(after, { send: async (_id, m) => void got.push((m as unknown as { params: { progress: number } }).params.progress) });
  return got;
}

describe('SessionEventStore', () => {
  it('replays what came after an event, in order, skipping the priming event', async () => {
    const store = new SessionEventStore(new EventBudget(1e9));
    const priming = await store.storeEvent('s1', {} as JSONRPCMessage);
    const ids = [];
    for (let i = 1; i <= 3; i++) ids.push(await store.storeEvent('s1', note(i)));
    await store.storeEvent('s2', note(99));
    expect(await replay(store, priming)).toEqual([1, 2, 3]);
    expect(await replay(store, ids[1] as string)).toEqual([3]);
    expect(await store.getStreamIdForEventId(ids[0] as string)).toBe('s1');
    expect(await store.getStreamIdForEventId('unknown.1')).toBeUndefined();
  });

  it('a stream keeps its newest events; a resume from a dropped one is refused with the reason', async () => {
    const store = new SessionEventStore(new EventBudget(1e9), { maxEventsPerStream: 3, maxBytesPerSession: 1e9, maxStreamsPerSession: 100 });
    const ids = [];
    for (let i = 1; i <= 5; i++) ids.push(await store.storeEvent('s', note(i)));
    expect(await replay(store, ids[1] as string)).toEqual([3, 4, 5]);
    await expect(replay(store, ids[0] as string)).rejects.toThrow(/no longer kept/);
  });

  it('a session keeps its newest streams; a forgotten stream is an unknown Last-Event-ID', async () => {
    const budget = new EventBudget(1e9);
    const store = new SessionEventStore(budget, { maxEventsPerStream: 10, maxBytesPerSession: 1e9, maxStreamsPerSession: 2 });
    const first = await store.storeEvent('s1', note(1));
    await store.storeEvent('s1', note(2));
    await store.storeEvent('s2', note(3));
    const third = await store.storeEvent('s3', note(4));
    await store.storeEvent('s3', note(5));
    expect(await store.getStreamIdForEventId(first)).toBeUndefined();
    await expect(replay(store, first)).rejects.toThrow(/unknown Last-Event-ID/);
    expect(await replay(store, third)).toEqual([5]);
    expect(budget.used).toBe(store.bytes);
  });

  it('sessions share one byte budget; a session that ends gives its bytes back', async () => {
    const budget = new EventBudget(20_000);
    const a = new SessionEventStore(budget, { maxEventsPerStream: 1_000, maxBytesPerSession: 1e9, maxStreamsPerSession: 100 });
    const b = new SessionEventStore(budget, { maxEventsPerStream: 1_000, maxBytesPerSession: 1e9, maxStreamsPerSession: 100 });
    for (let i = 0; i < 20; i++) await a.storeEvent('a', note(i, 1_000));
    expect(budget.used).toBeLessThanOrEqual(20_000);
    // b cannot take a's room: its events beyond the budget are not kept.
    const first = await b.storeEvent('b', note(0, 1_000));
    await b.storeEvent('b', note(1, 1_000));
    expect(budget.used).toBeLessThanOrEqual(20_000);
    a.close();
    expect(budget.used).toBe(b.bytes);
    // The event after `first` was not kept (the budget was full): a resume from it is refused.
    await expect(replay(b, first)).rejects.toThrow(/no longer kept/);
    const later = await b.storeEvent('b', note(2, 1_000));
    await b.storeEvent('b', note(3, 1_000));
    expect(b.bytes).toBeGreaterThan(0);
    expect(await replay(b, later)).toEqual([3]);
  });

  it("one agent's sessions hold at most its share, and another agent under its fair share takes room back", async () => {
    const budget = new EventBudget(40_000, 30_000);
    const flood = [0, 1, 2].map(() => new SessionEventStore(budget, { maxEventsPerStream: 1_000, maxBytesPerSession: 20_000, maxStreamsPerSession: 10 }, 'mallory'));
    for (let i = 0; i < 60; i++) await flood[i % 3]!.storeEvent('s', note(i, 500));
    expect(budget.usedBy('mallory')).toBeLessThanOrEqual(30_000);
    const alice = new SessionEventStore(budget, { maxEventsPerStream: 1_000, maxBytesPerSession: 20_000, maxStreamsPerSession: 10 }, 'alice');
    const first = await alice.storeEvent('a', note(1000, 500));
    for (let i = 1; i <= 10; i++) await alice.storeEvent('a', note(1000 + i, 500));
    // alice got room up to her fair share (half the budget with two agents holding events).
    expect(await replay(alice, first)).toHaveLength(10);
    expect(budget.usedBy('alice')).toBeGreaterThan(10_000);
    expect(budget.used).toBeLessThanOrEqual(40_000);
    alice.close();
    expect(budget.usedBy('alice')).toBe(0);
  });
});
