// The rules of PII vaults (src/pii/vault-store.ts), written once and run over every shared store:
// memory (vault-rules.test.ts) and Redis (test/cluster/redis-contracts.test.ts). Token format and
// stability, agents kept apart, restores and their reasons (another agent's token reads as
// unknown: no oracle), deep JSON walks, collisions, and the per-agent byte budget.

import { describe, expect, it } from 'vitest';
import { describeUnrestorable, PiiVaultStore } from '../../src/pii/index.js';
import type { VaultOwner } from '../../src/pii/index.js';
import { tokenCandidate } from '../../src/pii/tokens.js';
import { vaultFileId } from '../../src/pii/vault-journal.js';
import type { SharedStore } from '../../src/store/shared-store.js';

/** A fresh, empty shared store for each test. */
export type StoreFactory = () => Promise<SharedStore>;

const TOKEN = /^\[(EMAIL|PHONE|SSN|CREDIT_CARD|IP_ADDRESS|IBAN|API_KEY)_[0-9a-f]{8}\]$/;
let agents = 0;
const owner = (name = `agent-${process.pid}-${++agents}`): VaultOwner => ({ sessionId: `s-${name}`, agent: name });

export function describeVaultRules(name: string, freshStore: StoreFactory): void {
  const vaults = async (maxBytesPerAgent?: number): Promise<PiiVaultStore> => new PiiVaultStore({ store: await freshStore(), ...(maxBytesPerAgent !== undefined ? { maxBytesPerAgent } : {}) });

  describe(`PII vault rules over ${name}`, () => {
    it('tokens look like [TYPE_xxxxxxxx], are stable for an agent, differ across agents, and hide the value', async () => {
      const v = await vaults();
      const [a, b] = [owner(), owner()];
      const { text } = await v.tokenize(a, 'jane@example.com');
      expect(text).toMatch(TOKEN);
      expect((await v.tokenize(a, 'again: jane@example.com!')).text).toBe(`again: ${text}!`);
      expect((await v.tokenize(b, 'jane@example.com')).text).not.toBe(text);
      expect((await v.tokenize(a, '555-867-5309')).text).not.toContain('5309');
    });

    it('counts distinct values, lists types in canonical order, and leaves tokens and plain text alone', async () => {
      const v = await vaults();
      const a = owner();
      const result = await v.tokenize(a, 'ip 10.0.0.1, a@example.com, b@example.com, a@example.com');
      expect(result.found).toBe(3);
      expect(result.types).toEqual(['EMAIL', 'IP_ADDRESS']);
      expect(await v.tokenize(a, 'nothing to see')).toEqual({ text: 'nothing to see', found: 0, types: [] });
      const once = (await v.tokenize(a, 'a@example.com 4111 1111 1111 1111 password=Sup3rS3cret')).text;
      expect(await v.tokenize(a, once)).toEqual({ text: once, found: 0, types: [] });
    });

    it('restores its own tokens; forged and foreign ones read as unknown, once each, never as "another agent\'s"', async () => {
      const v = await vaults();
      const [a, b] = [owner(), owner()];
      const original = 'Call (415) 555-0132 or mail jane@example.com; card 4111 1111 1111 1111.';
      const { text } = await v.tokenize(a, original);
      expect(await v.detokenize(a, text)).toEqual({ text: original, unknown: [], types: ['EMAIL', 'PHONE', 'CREDIT_CARD'] });
      const token = (await v.tokenize(a, 'jane@example.com')).text;
      const foreign = await v.detokenize(b, `to ${token} [EMAIL_deadbeef] ${token}`);
      expect(foreign.unknown).toEqual([token, '[EMAIL_deadbeef]']);
      expect(foreign.reasons).toEqual({ [token]: 'unknown', '[EMAIL_deadbeef]': 'unknown' });
      const message = describeUnrestorable(foreign.unknown, foreign.reasons);
      expect(message).not.toMatch(/another agent/i);
      expect(message).not.toContain('jane@example.com');
      const words = '[NOTE_deadbeef] [EMAIL_DEADBEEF] [EMAIL_1234567]';
      expect(await v.detokenize(a, words)).toEqual({ text: words, unknown: [], types: [] });
    });

    it('walks JSON values deeply, keys included, keeps a __proto__ key as data and survives cycles', async () => {
      const v = await vaults();
      const a = owner();
      const value = { 'jane@example.com': { phone: '(415) 555-0132', n: 3, ok: true, none: null }, list: ['10.0.0.1', 7] };
      const tokenized = await v.tokenizeValue(a, value);
      const serialized = JSON.stringify(tokenized);
      expect(serialized).not.toMatch(/jane@example\.com|555-0132|10\.0\.0\.1/);
      expect(serialized).toContain('"n":3,"ok":true,"none":null');
      expect(await v.detokenizeValue(a, tokenized)).toEqual({ value, unknown: [], types: ['EMAIL', 'PHONE', 'IP_ADDRESS'] });
      expect((await v.detokenizeValue(a, { to: ['[EMAIL_0badf00d]'] })).unknown).toEqual(['[EMAIL_0badf00d]']);
      const parsed: unknown = JSON.parse('{"__proto__": {"x": "a@example.com"}}');
      const out = (await v.tokenizeValue(a, parsed)) as Record<string, unknown>;
      expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
      expect(Object.keys(out)).toEqual(['__proto__']);
      const cyclic: Record<string, unknown> = { a: 'b@example.com' };
      cyclic.self = cyclic;
      expect(await v.tokenizeValue(a, cyclic)).toMatchObject({ self: '[Circular]' });
    });

    it('never gives two values of one agent the same token: a collision takes the next deterministic candidate', async () => {
      // Found offline: under this key, these two emails share their first eight HMAC hex digits.
      const secret = Buffer.alloc(32, 7);
      const [first, second] = ['user63302@example.com', 'user89030@example.com'];
      expect(tokenCandidate(secret, 'EMAIL', first, 0)).toBe(tokenCandidate(secret, 'EMAIL', second, 0));
      const store = await freshStore();
      const a = owner();
      await store.set([{ key: `pii:${vaultFileId(a.agent)}:secret`, value: secret.toString('hex'), ttlMs: 60_000 }]);
      const v = new PiiVaultStore({ store });
      const x = (await v.tokenize(a, first)).text;
      const y = (await v.tokenize(a, second)).text;
      expect(x).toBe(tokenCandidate(secret, 'EMAIL', first, 0));
      expect(y).toBe(tokenCandidate(secret, 'EMAIL', second, 1));
      expect((await v.detokenize(a, `${x} ${y}`)).text).toBe(`${first} ${second}`);
      expect((await v.tokenize(a, second)).text).toBe(y);
    });

    it("refuses new values past the agent's byte budget, naming the option, while its tokens restore and another agent is untouched", async () => {
      const v = await vaults(64 * 1024);
      const [alpha, beta] = [owner('alpha'), owner('beta')];
      const pem = (i: number): string => `-----BEGIN PRIVATE KEY-----\n${'A'.repeat(16 * 1024)}${i}\n-----END PRIVATE KEY-----`;
      const tokens: string[] = [];
      let refusal: unknown;
      for (let i = 0; i < 10 && refusal === undefined; i++) {
        try {
          tokens.push((await v.tokenize(alpha, `key=${pem(i)} mail u${i}@example.com`)).text);
        } catch (error) {
          refusal = error;
        }
      }
      expect(tokens.length).toBeGreaterThan(0);
      expect(tokens.length).toBeLessThan(10);
      expect(refusal).toMatchObject({ code: 'STORE_FULL' });
      expect(String((refusal as Error).message)).toContain('pii.maxVaultBytesPerAgent');
      // what was issued still restores, and values already in the vault still tokenize
      expect((await v.detokenize(alpha, tokens[0] as string)).unknown).toEqual([]);
      expect((await v.tokenize(alpha, 'u0@example.com')).found).toBe(1);
      const mine = (await v.tokenize(beta, 'beta@example.org')).text;
      expect((await v.detokenize(beta, mine)).text).toBe('beta@example.org');
      const stats = await v.stats();
      expect(stats.max_bytes_per_agent).toBe(64 * 1024);
      expect(stats.bytes).toBeLessThanOrEqual(2 * 64 * 1024);
    });
  });
}
