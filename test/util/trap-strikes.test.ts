// The strike register behind the stripper's cool-down: strikes count within their window, the
// last allowed one starts the cool-down, the refusal says why and for how long, and both the
// strikes and the cool-down expire.

import { describe, expect, it } from 'vitest';
import { TrapStrikes } from '../../src/util/trap-strikes.js';

describe('TrapStrikes', () => {
  it('refuses an agent for the cool-down once it reached its strikes within the window, and no one else', () => {
    let now = 1_000_000;
    const strikes = new TrapStrikes('the type stripper', { strikes: 3, windowMs: 60_000, coolDownMs: 30_000, now: () => now });
    strikes.strike('alpha');
    strikes.strike('alpha');
    expect(strikes.refusal('alpha')).toBeUndefined();
    strikes.strike('alpha');
    expect(strikes.refusal('alpha')).toMatch(/^TypeScript refused for this agent for 30 s more: its code trapped the type stripper 3 times within 60 s/);
    expect(strikes.refusal('beta')).toBeUndefined();
    now += 29_000;
    expect(strikes.refusal('alpha')).toMatch(/for 1 s more/);
    now += 1_000;
    expect(strikes.refusal('alpha')).toBeUndefined();
  });

  it('forgets strikes older than the window', () => {
    let now = 0;
    const strikes = new TrapStrikes('the type stripper', { strikes: 3, windowMs: 10_000, coolDownMs: 5_000, now: () => now });
    strikes.strike('alpha');
    strikes.strike('alpha');
    now += 10_001;
    strikes.strike('alpha');
    expect(strikes.refusal('alpha')).toBeUndefined();
    strikes.strike('alpha');
    strikes.strike('alpha');
    expect(strikes.refusal('alpha')).toBeDefined();
  });
});
