// The contract of resumable-stream storage (src/mcp/http/event-store.ts SessionEventsFactory),
// written once and run against the in-memory stores and the Redis ones. What the HTTP transport
// relies on: a resume replays what came after the client's last event, in order, once; an event
// id only ever resumes in the session it was issued in; a resume from an event that is gone is
// refused, never served with a hole; two writers on one stream keep one order; a bad or closed
// id is refused with a message; each agent's bytes are its own and come back when a session ends.

import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import type { SessionEvents, SessionEventsFactory } from '../../src/mcp/http/event-store.js';

export interface EventStoreHarness {
  /** A factory whose streams keep at most `maxEventsPerStream` events each. */
  factory(limits: { maxEventsPerStream: number }): Promise<SessionEventsFactory>;
}

const note = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: n } });
const PRIMING = {} as JSONRPCMessage;
let sessions = 0;

async function replay(store: SessionEvents, after: string): Promise<{ ids: string[]; values: number[] }> {
  const ids: string[] = [];
  const values: number[] = [];
  await store.replayEventsAfter(after, {
    send: async (id, m) => {
      ids.push(id);
      values.push((m as unknown as { params: { progress: number } }).params.progress);
    },
  });
  return { ids, values };
}

export function describeEventStoreContract(name: string, harness: EventStoreHarness): void {
  describe(`event store contract: ${name}`, () => {
    const session = (f: SessionEventsFactory, agent = 'alice'): SessionEvents => f.create(`contract-${process.pid}-${++sessions}`, agent);

    it('replays what came after an event, in order, skipping the priming event, and names its stream', async () => {
      const store = session(await harness.factory({ maxEventsPerStream: 100 }));
      const priming = await store.storeEvent('s1', PRIMING);
      const ids: string[] = [];
      for (let i = 1; i <= 4; i++) ids.push(await store.storeEvent('s1', note(i)));
      await store.storeEvent('s2', note(99));
      expect((await replay(store, priming)).values).toEqual([1, 2, 3, 4]);
      expect(await replay(store, ids[1] as string)).toEqual({ ids: ids.slice(2), values: [3, 4] });
      expect(await store.storeEvent('s1', note(5))).not.toBe(ids[3]);
      expect(await store.getStreamIdForEventId?.(ids[0] as string)).toBe('s1');
      expect(await store.replayEventsAfter(ids[0] as string, { send: async () => {} })).toBe('s1');
      store.close();
    });

    it("keeps sessions apart: one session's event id never resumes in another, even on the same stream name", async () => {
      const factory = await harness.factory({ maxEventsPerStream: 100 });
      const a = session(factory, 'alice');
      const b = session(factory, 'bob');
      const fromA = await a.storeEvent('shared', PRIMING);
      await a.storeEvent('shared', note(1));
      await expect(replay(b, fromA)).rejects.toThrow(/unknown Last-Event-ID/);
      expect(await b.getStreamIdForEventId?.(fromA)).toBeUndefined();
      const fromB = await b.storeEvent('shared', PRIMING);
      await b.storeEvent('shared', note(2));
      expect((await replay(b, fromB)).values).toEqual([2]);
      expect((await replay(a, fromA)).values).toEqual([1]);
      a.close();
      b.close();
    });

    it('refuses a resume from an event that is no longer kept, never replaying with a hole', async () => {
      const store = session(await harness.factory({ maxEventsPerStream: 3 }));
      const ids: string[] = [];
      for (let i = 1; i <= 6; i++) ids.push(await store.storeEvent('s1', note(i)));
      await expect(replay(store, ids[0] as string)).rejects.toThrow(/no longer kept/);
      expect((await replay(store, ids[3] as string)).values).toEqual([5, 6]);
      store.close();
    });

    it('two writers on one stream at once: every event kept once, replayed in the order of its id', async () => {
      const store = session(await harness.factory({ maxEventsPerStream: 100 }));
      const priming = await store.storeEvent('s1', PRIMING);
      const ids = await Promise.all(Array.from({ length: 30 }, (_, i) => store.storeEvent('s1', note(i + 1))));
      expect(new Set(ids).size).toBe(30);
      const got = await replay(store, priming);
      expect(got.ids).toEqual(ids);
      expect(got.values).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      store.close();
    });

    it('refuses a malformed or unknown id, and everything once the session is closed', async () => {
      const store = session(await harness.factory({ maxEventsPerStream: 100 }));
      const id = await store.storeEvent('s1', note(1));
      for (const bad of ['', 'garbage', 's1', 's1.x', 'nope.1']) await expect(replay(store, bad)).rejects.toThrow(/unknown Last-Event-ID/);
      store.close();
      await expect(replay(store, id)).rejects.toThrow(/unknown Last-Event-ID/);
      await store.storeEvent('s1', note(2));
      await expect(replay(store, id)).rejects.toThrow(/unknown Last-Event-ID/);
    });

    it("counts each agent's bytes apart and gives them back when the session ends", async () => {
      const factory = await harness.factory({ maxEventsPerStream: 100 });
      if (!factory.usage) throw new Error('the factory must report usage per agent (get_execution_stats shows it)');
      const agent = `carol-${++sessions}`;
      const store = session(factory, agent);
      await store.storeEvent('s1', note(1));
      expect(factory.usage(agent).event_bytes).toBeGreaterThan(0);
      expect(factory.usage(`${agent}-other`).event_bytes).toBe(0);
      store.close();
      expect(factory.usage(agent).event_bytes).toBe(0);
    });
  });
}
