// The vault rules (vault-rules.ts) over the in-memory store; Redis runs them in
// test/cluster/redis-contracts.test.ts. What needs a clock (expiry, a budget freed by time) is here.

import { describe, expect, it } from 'vitest';
import { PiiVaultStore } from '../../src/pii/index.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { describeVaultRules } from './vault-rules.js';

describeVaultRules('memory', async () => new MemoryStore());

describe('PII vault byte budget over time', () => {
  it('frees the budget as the tokens that spent it expire', async () => {
    let now = 1_000_000;
    const v = new PiiVaultStore({ tokenTtlSeconds: 3_600, maxBytesPerAgent: 8 * 1024, now: () => now });
    const agent = { sessionId: 's', agent: 'alpha' };
    const big = (i: number): string => `key=-----BEGIN PRIVATE KEY-----\n${'A'.repeat(3_000)}${i}\n-----END PRIVATE KEY-----`;
    await v.tokenize(agent, big(1));
    await v.tokenize(agent, big(2));
    await expect(v.tokenize(agent, big(3))).rejects.toMatchObject({ code: 'STORE_FULL' });
    // a lifetime and one bucket later every charge has lapsed
    now += 3_600_000 + 3_600_000 / 24 + 1;
    expect((await v.tokenize(agent, big(3))).found).toBe(1);
  });
});
