// `serve` logs JSON lines for machines and short human lines on a terminal; --log-format decides
// when the terminal guess is wrong.

import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createCliLogger, resolveLogFormat, textLine } from '../../src/cli/log-format.js';

function stream(isTTY: boolean): PassThrough & { isTTY?: boolean } {
  const s = new PassThrough() as PassThrough & { isTTY?: boolean };
  if (isTTY) s.isTTY = true;
  return s;
}

describe('log format', () => {
  it('auto is text on a terminal and JSON otherwise; an explicit format wins', () => {
    expect(resolveLogFormat({ logFormat: 'auto' }, stream(true))).toBe('text');
    expect(resolveLogFormat({ logFormat: 'auto' }, stream(false))).toBe('json');
    expect(resolveLogFormat({}, stream(false))).toBe('json');
    expect(resolveLogFormat({ logFormat: 'json' }, stream(true))).toBe('json');
    expect(resolveLogFormat({ logFormat: 'text' }, stream(false))).toBe('text');
  });

  it('a text line carries the level, message and fields, not pid or hostname', () => {
    const line = textLine(JSON.stringify({ level: 40, time: Date.UTC(2026, 0, 2, 3, 4, 5), pid: 1, hostname: 'h', service: 's', msg: 'tool call', agent: 'alice', outcome: 'timeout', duration_ms: 12 }));
    expect(line).toBe('03:04:05 WARN  tool call agent=alice outcome=timeout duration_ms=12\n');
  });

  it('the text logger writes human lines to the stream it is given', async () => {
    const out = stream(true);
    let written = '';
    out.on('data', (chunk: Buffer) => (written += chunk.toString('utf8')));
    const { logger, format } = createCliLogger({ logLevel: 'info', logFormat: 'auto' }, out, { service: 'x' });
    expect(format).toBe('text');
    logger.info({ port: 7337 }, 'listening');
    await new Promise((resolve) => setImmediate(resolve));
    expect(written).toMatch(/^\d\d:\d\d:\d\d INFO {2}listening port=7337\n$/);
  });
});
