// The pure pieces of the upstream subsystem: result conversion, name suggestions, backoff.
import { describe, expect, it } from 'vitest';
import { Backoff } from '../../src/upstream/backoff.js';
import { UpstreamError, closestNames, convertToolResult } from '../../src/upstream/index.js';

describe('convertToolResult', () => {
  it('prefers structured content, then JSON text, then text', () => {
    expect(convertToolResult('s', 't', { content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { b: 2 } })).toEqual({ b: 2 });
    expect(convertToolResult('s', 't', { content: [{ type: 'text', text: ' [1, 2] ' }] })).toEqual([1, 2]);
    expect(convertToolResult('s', 't', { content: [{ type: 'text', text: 'plain words' }] })).toBe('plain words');
    expect(convertToolResult('s', 't', { content: [{ type: 'text', text: 'line 1' }, { type: 'text', text: 'line 2' }] })).toBe('line 1\nline 2');
    expect(convertToolResult('s', 't', { content: [] })).toBeNull();
  });

  it('describes non-text blocks with their size', () => {
    const result = convertToolResult('s', 't', {
      content: [
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'resource_link', uri: 'file:///x', name: 'x' },
        { type: 'resource', resource: { uri: 'mem://b', mimeType: 'application/octet-stream', blob: 'AAA=' } },
      ],
    });
    expect(result).toEqual([
      { type: 'image', mimeType: 'image/png', bytes: 3, data: 'AAAA' },
      { type: 'resource_link', uri: 'file:///x', name: 'x' },
      { type: 'resource', uri: 'mem://b', mimeType: 'application/octet-stream', blob: 'AAA=', bytes: 2 },
    ]);
  });

  it('throws TOOL_ERROR with server, tool and the tool text for isError', () => {
    let caught: unknown;
    try {
      convertToolResult('github', 'create_issue', { isError: true, content: [{ type: 'text', text: 'rate limited' }] });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(UpstreamError);
    expect(caught).toMatchObject({ code: 'TOOL_ERROR', server: 'github', tool: 'create_issue', message: 'github.create_issue failed: rate limited' });
  });
});

describe('closestNames', () => {
  it('ranks by edit distance, tolerant of case and separators', () => {
    expect(closestNames('get_sum', ['get-sum', 'echo', 'get-env'])[0]).toBe('get-sum');
    expect(closestNames('READ_GRAPH', ['read_graph', 'open_nodes'])).toEqual(['read_graph']);
    expect(closestNames('memroy', ['memory', 'filesystem'])).toEqual(['memory']);
    expect(closestNames('read', ['read_graph', 'search_nodes'])).toEqual(['read_graph']);
    expect(closestNames('zzzzzz', ['echo', 'add'])).toEqual([]);
  });
});

describe('Backoff', () => {
  it('doubles from the initial delay to the cap, within ±20% jitter, and resets', () => {
    const low = new Backoff({ initialMs: 250, maxMs: 30_000, resetAfterMs: 60_000 }, () => 0);
    const high = new Backoff({ initialMs: 250, maxMs: 30_000, resetAfterMs: 60_000 }, () => 1);
    const lows = Array.from({ length: 10 }, () => low.next());
    const highs = Array.from({ length: 10 }, () => high.next());
    expect(lows.slice(0, 4)).toEqual([200, 400, 800, 1600]);
    expect(highs.slice(0, 3)).toEqual([300, 600, 1200]);
    expect(Math.max(...highs)).toBe(30_000);
    expect(lows.at(-1)).toBe(24_000);
    low.reset();
    expect(low.next()).toBe(200);
  });
});
