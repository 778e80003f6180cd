// The contract of PII vault storage (src/pii/vault-store.ts), written once and run against every
// implementation: the embedded vaults (memory only, and journaled to a folder) and the Redis vaults.
// What callers rely on: a value tokenizes to the same token every time for its agent and restores
// for that agent only; structured values round-trip; two writers minting at once agree; a store
// reopened over the same backing restores what was acknowledged; a bad owner is refused by name.

import { afterEach, describe, expect, it } from 'vitest';
import type { VaultOwner, VaultStore } from '../../src/pii/vault-store.js';

export interface VaultStoreHarness {
  /** A fresh, empty store (its own backing). */
  store(): Promise<VaultStore>;
  /**
   * A new store over the same backing as `store()` last made, once that one is closed (a
   * restart); absent when the implementation keeps nothing beyond its process.
   */
  reopen?(): Promise<VaultStore>;
  /** A second store over the same backing while the first runs (another daemon); absent when one process owns the backing. */
  peer?(): Promise<VaultStore>;
  /**
   * Moves the store's vaults past their token lifetime with no use in between (a clock moved on,
   * or the shared store's keys expired after checking they carry the lifetime); absent when the
   * harness cannot.
   */
  pastTtl?(): Promise<void>;
  /** Frees what the harness made (after each test). */
  cleanup?(): Promise<void>;
}

const TOKEN = /\[(EMAIL|PHONE)_[0-9a-f]{8}\]/g;

export function describeVaultStoreContract(name: string, harness: VaultStoreHarness): void {
  describe(`VaultStore contract: ${name}`, () => {
    const alice = (sessionId = 's-1'): VaultOwner => ({ sessionId, agent: 'alice' });
    const bob: VaultOwner = { sessionId: 's-2', agent: 'bob' };

    afterEach(async () => {
      await harness.cleanup?.();
    });

    it('restores its own tokens and gives a value the same token every time', async () => {
      const store = await harness.store();
      const text = 'write to ann@example.com or call +1 415 555 0100';
      const out = await store.tokenize(alice(), text);
      expect(out.found).toBe(2);
      expect(out.text).not.toContain('ann@example.com');
      expect(out.text.match(TOKEN)).toHaveLength(2);
      expect((await store.tokenize(alice(), text)).text).toBe(out.text);
      const back = await store.detokenize(alice(), out.text);
      expect(back.text).toBe(text);
      expect(back.unknown).toEqual([]);
      expect([...back.types].sort()).toEqual(['EMAIL', 'PHONE']);
      await store.close();
    });

    it('keeps agents apart: another agent never restores a token, and gets its own for the same value', async () => {
      const store = await harness.store();
      const mine = (await store.tokenize(alice(), 'ann@example.com')).text;
      const theirs = await store.detokenize(bob, mine);
      expect(theirs.text).toBe(mine);
      expect(theirs.unknown).toEqual([mine]);
      expect(JSON.stringify(theirs)).not.toContain('ann@example.com');
      const bobs = (await store.tokenize(bob, 'ann@example.com')).text;
      expect(bobs).not.toBe(mine);
      expect((await store.detokenize(alice(), bobs)).unknown).toEqual([bobs]);
      await store.close();
    });

    it('round-trips structured values, keys included, and leaves non-strings alone', async () => {
      const store = await harness.store();
      const value = { 'ann@example.com': { phone: '+1 415 555 0100', n: 3, ok: true, list: ['bob@example.org', null] } };
      const tokenized = await store.tokenizeValue(alice(), value);
      expect(JSON.stringify(tokenized)).not.toMatch(/example\.(com|org)|555 0100/);
      const back = await store.detokenizeValue(alice(), tokenized);
      expect(back.value).toEqual(value);
      expect(back.unknown).toEqual([]);
      await store.close();
    });

    it('two writers minting the same values at once agree on their tokens', async () => {
      const store = await harness.store();
      const other = harness.peer ? await harness.peer() : store;
      const text = Array.from({ length: 20 }, (_, i) => `user${i}@example.com`).join(' ');
      const [a, b] = await Promise.all([store.tokenize(alice(), text), other.tokenize(alice('s-other'), text)]);
      expect(a.text).toBe(b.text);
      expect((await store.detokenize(alice(), b.text)).text).toBe(text);
      await store.close();
      if (other !== store) await other.close();
    });

    // Only for stores that keep anything past their process (not the memory-only one).
    it.runIf(harness.reopen !== undefined)('a store reopened over the same backing restores what was acknowledged', async () => {
      if (!harness.reopen) throw new Error('unreachable');
      const store = await harness.store();
      const token = (await store.tokenize(alice(), 'carol@example.com')).text;
      await store.close();
      const again = await harness.reopen();
      expect((await again.detokenize(alice('a-new-session'), token)).text).toBe('carol@example.com');
      expect((await again.detokenize(bob, token)).unknown).toEqual([token]);
      await again.close();
    });

    // Only for stores whose backing another process may share (Redis; a vault folder two stdio
    // coordinators of one user both use).
    it.runIf(harness.peer !== undefined)('a token minted through one store restores through a peer, and both survive a restart', async () => {
      if (!harness.peer) throw new Error('unreachable');
      const store = await harness.store();
      const peer = await harness.peer();
      const [x, y] = await Promise.all([store.tokenize(alice(), 'ann@example.com'), peer.tokenize(alice('s-peer'), 'ann@example.com')]);
      expect(y.text).toBe(x.text);
      const later = (await store.tokenize(alice(), 'zed@example.com')).text;
      expect((await peer.detokenize(alice('s-peer'), later)).text).toBe('zed@example.com');
      expect((await peer.detokenize(bob, later)).unknown).toEqual([later]);
      await store.close();
      await peer.close();
      if (!harness.reopen) return;
      const again = await harness.reopen();
      expect((await again.detokenize(alice('after-restart'), `${x.text} ${later}`)).text).toBe('ann@example.com zed@example.com');
      await again.close();
    });

    it.runIf(harness.pastTtl !== undefined)('a token no longer restores once its lifetime passed unused, and the value gets a token again', async () => {
      if (!harness.pastTtl) throw new Error('unreachable');
      const store = await harness.store();
      const token = (await store.tokenize(alice(), 'erin@example.com')).text;
      await harness.pastTtl();
      const gone = await store.detokenize(alice(), token);
      expect(gone.text).toBe(token);
      expect(gone.unknown).toEqual([token]);
      expect(JSON.stringify(gone)).not.toContain('erin@example.com');
      const fresh = (await store.tokenize(alice(), 'erin@example.com')).text;
      expect((await store.detokenize(alice(), fresh)).text).toBe('erin@example.com');
      await store.close();
    });

    it('refuses an owner without an agent, naming it, and keeps serving the others', async () => {
      const store = await harness.store();
      await expect(store.tokenize({ sessionId: 's', agent: '' }, 'ann@example.com')).rejects.toThrow(/agent must be a non-empty string/);
      await expect(store.tokenize({ sessionId: 's' } as VaultOwner, 'ann@example.com')).rejects.toThrow(/agent must be a non-empty string/);
      expect((await store.tokenize(alice(), 'ann@example.com')).found).toBe(1);
      await store.close();
    });

    it('text without PII passes unchanged, and stats count tokens, never values', async () => {
      const store = await harness.store();
      expect(await store.tokenize(alice(), 'nothing to see')).toMatchObject({ text: 'nothing to see', found: 0 });
      await store.tokenize(alice(), 'ann@example.com and dan@example.com');
      const stats = await store.stats();
      expect(stats.tokens).toBeGreaterThanOrEqual(2);
      expect(JSON.stringify(stats)).not.toContain('example.com');
      await store.close();
    });
  });
}
