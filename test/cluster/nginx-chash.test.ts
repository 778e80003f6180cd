// The consistent hash daemons mint session ids with must be nginx's own; the multi-daemon test
// (behind-nginx) checks it against a real nginx, this one the properties minting relies on.

import { describe, expect, it } from 'vitest';
import { buildRing, serverFor } from '../../src/cluster/nginx-chash.js';

const SERVERS = ['127.0.0.1:8001', '127.0.0.1:8002', '127.0.0.1:8003'];

describe('nginx consistent hash', () => {
  it('gives each server 160 points and spreads keys roughly evenly', () => {
    const ring = buildRing(SERVERS);
    expect(ring.length).toBeGreaterThan(470);
    const counts = new Map<string, number>();
    for (let i = 0; i < 3000; i++) {
      const s = serverFor(ring, `key-${i}`) as string;
      counts.set(s, (counts.get(s) ?? 0) + 1);
    }
    for (const s of SERVERS) expect(counts.get(s)).toBeGreaterThan(600);
  });

  it('moves only the keys of a removed server (so minting against a superset ring stays right)', () => {
    const full = buildRing(SERVERS);
    const without = buildRing(SERVERS.slice(0, 2));
    for (let i = 0; i < 2000; i++) {
      const key = `session-${i}`;
      const owner = serverFor(full, key);
      if (owner !== '127.0.0.1:8003') expect(serverFor(without, key)).toBe(owner);
    }
  });

  it('does not depend on the order servers are listed in', () => {
    const a = buildRing(SERVERS);
    const b = buildRing([...SERVERS].reverse());
    for (let i = 0; i < 500; i++) expect(serverFor(a, `k${i}`)).toBe(serverFor(b, `k${i}`));
  });
});
