// The tokens a call pulled in are counted a loop turn after each payload arrives (off the host
// call's path), and all of them by the time the call's total is asked for.

import { describe, expect, it } from 'vitest';
import { IncomingTokens } from '../../src/executor/incoming-tokens.js';

describe('IncomingTokens', () => {
  it('counts nothing on the path of the call, everything by total()', () => {
    const counted: unknown[] = [];
    const tokens = new IncomingTokens((value) => {
      counted.push(value);
      return String(value).length;
    });
    tokens.add('abcd');
    tokens.add('ef');
    expect(counted).toEqual([]);
    tokens.addEstimate(10);
    expect(tokens.total()).toEqual({ tokens: 16, estimated: true });
    expect(counted).toEqual(['abcd', 'ef']);
  });

  it('counts waiting payloads on the next loop turn', async () => {
    const tokens = new IncomingTokens(() => ({ tokens: 3, estimated: false }));
    tokens.add({ rows: [1, 2, 3] });
    await new Promise((resolve) => setTimeout(resolve, 5));
    tokens.add('x');
    expect(tokens.total()).toEqual({ tokens: 6, estimated: false });
  });

  it('counts one waiting payload per loop turn, so many payloads do not hold one turn', async () => {
    const turns: number[] = [];
    let turn = 0;
    const ticker = setInterval(() => turn++, 0);
    const tokens = new IncomingTokens(() => {
      turns.push(turn);
      return { tokens: 1, estimated: false };
    });
    for (let i = 0; i < 5; i++) tokens.add(i);
    await new Promise((resolve) => setTimeout(resolve, 50));
    clearInterval(ticker);
    expect(turns).toHaveLength(5);
    expect(new Set(turns).size).toBeGreaterThan(1);
    expect(tokens.total()).toEqual({ tokens: 5, estimated: false });
  });

  it('without a counter counts nothing and keeps nothing', () => {
    const tokens = new IncomingTokens(undefined);
    tokens.add('a'.repeat(1000));
    expect(tokens.total()).toEqual({ tokens: 0, estimated: false });
  });
});
