// The progress reporter streams each output line as a notification. Lines pass the PII boundary
// first (async), so on a loaded machine a line printed just before the end could still be in that
// check when the call returned: it was dropped (CI saw "alice line 2" missing). stop() now lets
// the lines taken before the end go out, in order, before the result.

import { describe, expect, it } from 'vitest';
import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { ProgressReporter } from '../../src/mcp/progress.js';

function reporter(transformMs: (line: string) => number): { r: ProgressReporter; sent: string[] } {
  const sent: string[] = [];
  const r = new ProgressReporter({
    token: 't',
    intervalMs: 60_000,
    totalSeconds: 30,
    now: () => performance.now(),
    send: async (n: ServerNotification) => {
      sent.push(String((n.params as { message?: unknown }).message));
    },
    transformLine: (line) => new Promise((resolve) => setTimeout(() => resolve(`safe ${line}`), transformMs(line))),
  });
  return { r, sent };
}

describe('progress reporter', () => {
  it('sends the lines printed before the end, in order, before stop() resolves', async () => {
    const { r, sent } = reporter((line) => (line === 'first' ? 80 : 10));
    r.start();
    r.line('first');
    r.line('second');
    await r.stop();
    expect(sent).toEqual(['safe first', 'safe second']);
    r.line('after the end');
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(sent).toEqual(['safe first', 'safe second']);
  });

  it('does not wait past its limit for a line whose check never ends', async () => {
    const { r, sent } = reporter(() => 1e9);
    r.line('stuck');
    const started = performance.now();
    await r.stop();
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(sent).toEqual([]);
  });
});
