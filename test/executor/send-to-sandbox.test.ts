// What the coordinator writes to a sandbox process when a message holds a value its channel
// cannot carry (src/executor/sandbox-launch.ts sendToSandbox): it goes as JSON data, and a host
// reply that is not JSON data fails that host call, never the daemon.

import { EventEmitter } from 'node:events';
import { serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { sendToSandbox } from '../../src/executor/sandbox-launch.js';
import type { SandboxChild } from '../../src/executor/sandbox-launch.js';
import type { ToSandbox } from '../../workers/kit/protocol.js';

/** A child whose channel serializes as node's does ('json' or 'advanced'), throwing before it writes. */
function child(mode: 'json' | 'advanced'): SandboxChild & { written: unknown[] } {
  const written: unknown[] = [];
  return Object.assign(new EventEmitter(), {
    pid: 1,
    connected: true,
    written,
    send(message: unknown, callback: (error: Error | null) => void): boolean {
      written.push(mode === 'json' ? JSON.parse(JSON.stringify(message)) : (serialize(message), message));
      callback(null);
      return true;
    },
    kill: () => true,
  });
}

const run: ToSandbox = { type: 'recycle' };
const reply = (callId: number, value: unknown): ToSandbox => ({ type: 'host-reply', id: 7, reply: { kind: 'host-reply', callId, ok: true, value } });

describe('sendToSandbox', () => {
  it('writes a message as it is when the channel can carry it', () => {
    for (const mode of ['json', 'advanced'] as const) {
      const c = child(mode);
      sendToSandbox(c, run, () => {});
      sendToSandbox(c, reply(1, { a: [1, 'x'] }), () => {});
      expect(c.written).toEqual([run, reply(1, { a: [1, 'x'] })]);
    }
  });

  it('a function in a host reply: dropped as JSON drops it, the other messages in order', () => {
    const c = child('advanced');
    sendToSandbox(c, reply(1, { ok: true, fn: () => 1 }), () => {});
    sendToSandbox(c, reply(2, 'next'), () => {});
    expect(c.written).toEqual([reply(1, { ok: true }), reply(2, 'next')]);
  });

  it('a BigInt in a host reply on a JSON channel fails that host call with a TypeError', () => {
    const c = child('json');
    const failed: Error[] = [];
    sendToSandbox(c, reply(1, { n: 10n }), (err) => failed.push(err));
    sendToSandbox(c, reply(2, 'next'), (err) => failed.push(err));
    expect(c.written).toEqual([
      { type: 'host-reply', id: 7, reply: { kind: 'host-reply', callId: 1, ok: false, error: { name: 'TypeError', message: expect.stringMatching(/^the host's answer is not JSON data \(.*BigInt/) } } },
      reply(2, 'next'),
    ]);
    expect(failed).toEqual([]);
  });
});
