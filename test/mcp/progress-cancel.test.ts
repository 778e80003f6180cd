// Long calls: progress notifications (ticks and output lines) for clients that send a progress
// token, and cancellation through notifications/cancelled and the end of the session.

import { afterEach, describe, expect, it } from 'vitest';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { startHarness } from '../fixtures/mcp/harness.js';
import type { Harness } from '../fixtures/mcp/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('progress', () => {
  it('streams output lines as progress messages, with increasing progress and the timeout as total', async () => {
    h = await startHarness({ configure: (c) => (c.server = { ...c.server!, progressIntervalMs: 50 }) });
    const seen: Progress[] = [];
    const result = await h.client.callTool(
      { name: 'execute_code', arguments: { code: 'console.log("line 1"); await sleep(150); console.log("line 2"); await sleep(150); return 7', timeout_seconds: 20 } },
      undefined,
      { onprogress: (p) => seen.push(p) },
    );
    expect(result.structuredContent).toMatchObject({ success: true, result: 7 });
    const messages = seen.map((p) => p.message);
    expect(messages).toContain('line 1');
    expect(messages).toContain('line 2');
    expect(messages.some((m) => m?.startsWith('running for'))).toBe(true);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.progress).toBeGreaterThan(seen[i - 1]!.progress);
    expect(seen.every((p) => p.total === 20)).toBe(true);
  });

  it('sends no progress when the client did not ask for it', async () => {
    h = await startHarness({ configure: (c) => (c.server = { ...c.server!, progressIntervalMs: 50 }) });
    let notifications = 0;
    h.client.fallbackNotificationHandler = async () => {
      notifications++;
    };
    await h.client.callTool({ name: 'execute_code', arguments: { code: 'console.log("x"); await sleep(120); return 1' } });
    expect(notifications).toBe(0);
  });
});

describe('cancellation', () => {
  it('notifications/cancelled aborts the running call and the session keeps serving', async () => {
    h = await startHarness();
    const abort = new AbortController();
    const started = h.executor.nextStart();
    const ended = h.executor.nextEnd();
    const pending = h.client.callTool({ name: 'execute_code', arguments: { code: 'await sleep(60000)' } }, undefined, { signal: abort.signal });
    await started;
    abort.abort('user pressed stop');
    await expect(pending).rejects.toThrow();
    expect(await ended).toMatchObject({ success: false, error_type: 'CancelledError' });
    const next = await h.client.callTool({ name: 'execute_code', arguments: { code: 'return "next"' } });
    expect(next.structuredContent).toMatchObject({ result: 'next' });
    const stats = (await h.client.callTool({ name: 'get_execution_stats', arguments: {} })).structuredContent as { calls: { by_outcome: Record<string, number> } };
    expect(stats.calls.by_outcome['cancelled']).toBe(1);
  });

  it('closing the connection aborts calls in flight', async () => {
    h = await startHarness();
    const started = h.executor.nextStart();
    const ended = h.executor.nextEnd();
    const pending = h.client.callTool({ name: 'execute_code', arguments: { code: 'await sleep(60000)' } });
    await started;
    await h.client.close();
    await expect(pending).rejects.toThrow();
    expect(await ended).toMatchObject({ error_type: 'CancelledError' });
  });
});
