// The host link's framing (workers/kit/line-reader.ts): lines, and the raw bytes a frame announces
// (a call's long context strings), whatever way the stream is cut into chunks.

import { describe, expect, it } from 'vitest';
import { LineReader } from '../../workers/kit/line-reader.js';

/** Feeds `stream` cut at every `step` bytes; frames `{"raw":N}` take the next N bytes raw. */
function read(stream: Buffer, step: number, max = 1024): { frames: string[]; ok: boolean } {
  const frames: string[] = [];
  const reader: LineReader = new LineReader(max, (line) => {
    const n = (JSON.parse(line) as { raw?: number }).raw;
    if (n === undefined) frames.push(line);
    else if (!reader.expect(n, (bytes) => frames.push(`raw:${bytes.toString('utf8')}`))) frames.push('refused');
  });
  let ok = true;
  for (let at = 0; at < stream.length && ok; at += step) ok = reader.push(stream.subarray(at, at + step));
  return { frames, ok };
}

describe('LineReader', () => {
  const text = 'a "quoted"\nline 😀 with\\escapes';
  const stream = Buffer.concat([Buffer.from(`{"a":1}\n{"raw":${Buffer.byteLength(text)}}\n`), Buffer.from(text), Buffer.from('{"b":2}\n{"raw":0}\n{"c":3}\n')]);

  it('gives the announced bytes whole, newlines included, and reads lines after them, however the chunks fall', () => {
    for (const step of [1, 2, 3, 7, 16, stream.length]) {
      expect(read(stream, step).frames).toEqual(['{"a":1}', `raw:${text}`, '{"b":2}', 'raw:', '{"c":3}']);
    }
  });

  it('refuses raw parts and lines over its limit', () => {
    expect(read(Buffer.from('{"raw":2000}\n'), 5).frames).toEqual(['refused']);
    expect(read(Buffer.from(`{"x":"${'y'.repeat(2000)}"}\n`), 64).ok).toBe(false);
  });
});
