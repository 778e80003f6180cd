// Vaults keyed by agent (SPEC, PII): a token restores in any session of the agent that made it,
// for pii.tokenTtlSeconds after it was last issued, across a restart of the store (sealed files in
// the vault folder), and never for another agent; a restore that fails says why.

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeUnrestorable, MemoryVaultStore } from '../../src/pii/index.js';
import { vaultFileId } from '../../src/pii/vault-journal.js';
import { tempDir } from '../fixtures/config.js';

const alice1 = { agent: 'alice', sessionId: 'alice-session-1' };
const alice2 = { agent: 'alice', sessionId: 'alice-session-2' };
const bob = { agent: 'bob', sessionId: 'bob-session-1' };
const EMAIL = 'jane.doe@example.com';

describe('MemoryVaultStore keyed by agent', () => {
  it('restores a token in another session of the same agent, never for another agent, and says why', async () => {
    const store = new MemoryVaultStore();
    const { text } = await store.tokenize(alice1, `mail ${EMAIL}`);
    const token = text.slice(5);
    expect((await store.detokenize(alice2, token)).text).toBe(EMAIL);
    const denied = await store.detokenize(bob, token);
    expect(denied.text).toBe(token);
    expect(denied.unknown).toEqual([token]);
    // Another agent's token reads as unknown, as a forged one does: a restore is no oracle.
    expect(denied.reasons).toEqual({ [token]: 'unknown' });
    const forged = await store.detokenize(bob, '[EMAIL_00000000]');
    expect(forged.reasons).toEqual({ '[EMAIL_00000000]': 'unknown' });
    expect(describeUnrestorable(denied.unknown, denied.reasons)).not.toMatch(/another agent/);
    expect(describeUnrestorable(denied.unknown, denied.reasons)).not.toContain(EMAIL);
    // A session's end drops nothing: the vault belongs to the agent.
    await store.dropSession(alice1);
    expect((await store.detokenize(alice2, token)).text).toBe(EMAIL);
  });

  it('expires a token pii.tokenTtlSeconds after it was last issued, says so, and issuing the value again brings it back', async () => {
    let now = 1_000_000;
    const store = new MemoryVaultStore({ tokenTtlSeconds: 60, epochNow: () => now });
    const token = (await store.tokenize(alice1, EMAIL)).text;
    now += 59_000;
    expect((await store.detokenize(alice2, token)).text).toBe(EMAIL);
    now += 2_000;
    const expired = await store.detokenize(alice2, token);
    expect(expired.text).toBe(token);
    expect(expired.reasons).toEqual({ [token]: 'expired' });
    expect(describeUnrestorable(expired.unknown, expired.reasons)).toContain('expired');
    expect((await store.tokenize(alice1, EMAIL)).text).toBe(token);
    expect((await store.detokenize(alice1, token)).text).toBe(EMAIL);
  });

  it('keeps tokens across a restart in sealed files, one per agent, with no value in the clear', async () => {
    const dir = tempDir('cem-vaults-');
    const first = new MemoryVaultStore({ dir });
    const aliceToken = (await first.tokenize(alice1, EMAIL)).text;
    const bobToken = (await first.tokenizeValue(bob, { phone: '+1 415 555 0100' })) as { phone: string };
    await first.close();

    const files = readdirSync(dir).sort();
    expect(files).toEqual([`${vaultFileId('alice')}.vault`, `${vaultFileId('bob')}.vault`, 'vault.key'].sort());
    for (const f of files) {
      const raw = readFileSync(path.join(dir, f), 'latin1');
      expect(raw).not.toContain('jane.doe');
      // The whole number: its digits alone turn up in random base64 ciphertext now and then (CI saw '555').
      expect(raw).not.toContain('415 555 0100');
    }

    const second = new MemoryVaultStore({ dir });
    expect((await second.detokenize(alice2, aliceToken)).text).toBe(EMAIL);
    expect((await second.detokenize(bob, bobToken.phone)).text).toBe('+1 415 555 0100');
    // Restarted, bob has not called yet when alice asks: his token is unknown to her, nothing more.
    const third = new MemoryVaultStore({ dir });
    expect((await third.detokenize(alice1, bobToken.phone)).reasons).toEqual({ [bobToken.phone]: 'unknown' });
    // The same value gets the same token after the restart (the secret is kept, sealed).
    expect((await second.tokenize(alice2, EMAIL)).text).toBe(aliceToken);
  });

  it('does not open a token line copied into another agent\'s file', async () => {
    const dir = tempDir('cem-vaults-');
    const store = new MemoryVaultStore({ dir });
    const token = (await store.tokenize(alice1, EMAIL)).text;
    await store.tokenize(bob, 'nothing here');
    await store.close();
    const aliceFile = path.join(dir, `${vaultFileId('alice')}.vault`);
    const bobFile = path.join(dir, `${vaultFileId('bob')}.vault`);
    const stolen = readFileSync(aliceFile, 'utf8').trim().split('\n')[1] ?? '';
    writeFileSync(bobFile, `${readFileSync(bobFile, 'utf8')}${stolen}\n`);
    const restarted = new MemoryVaultStore({ dir });
    await expect(restarted.detokenize(bob, token)).rejects.toThrow(/does not open/);
  });

  it('skips a torn last line (a crash mid-append) and keeps every whole one', async () => {
    const dir = tempDir('cem-vaults-');
    const store = new MemoryVaultStore({ dir });
    const token = (await store.tokenize(alice1, EMAIL)).text;
    await store.close();
    const file = path.join(dir, `${vaultFileId('alice')}.vault`);
    writeFileSync(file, `${readFileSync(file, 'utf8')}{"t":"[EMAIL_0000`);
    const restarted = new MemoryVaultStore({ dir });
    expect((await restarted.detokenize(alice2, token)).text).toBe(EMAIL);
  });
});
