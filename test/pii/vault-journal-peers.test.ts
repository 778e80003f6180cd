// Two processes on one vault folder (two stdio coordinators of one user): the first secret written
// for an agent wins, and a process reads what the other appended since, only the new whole lines.

import { appendFileSync, existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { VaultJournal } from '../../src/pii/vault-journal.js';
import type { VaultRecord } from '../../src/pii/vault-journal.js';

const dir = mkdtempSync(path.join(tmpdir(), 'vault-peers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const record = (n: number): VaultRecord => ({ token: `[EMAIL_0000000${n}]`, type: 'EMAIL', value: `u${n}@example.com`, expiresAt: Infinity });

describe('vault journal shared by two processes', () => {
  it('creates a vault file once: the second creator gets the first secret', async () => {
    const one = new VaultJournal(dir);
    const two = new VaultJournal(dir);
    expect(await one.create('v1', new Uint8Array(32).fill(1))).toBeUndefined();
    const theirs = await two.create('v1', new Uint8Array(32).fill(2));
    expect(Buffer.from(theirs?.secret ?? []).equals(Buffer.alloc(32, 1))).toBe(true);
  });

  it('reads only what was appended since, leaving a line still being written for next time', async () => {
    const one = new VaultJournal(dir);
    const two = new VaultJournal(dir);
    await one.create('v2', new Uint8Array(32).fill(3));
    const start = await two.load('v2');
    expect(start?.records).toEqual([]);
    await one.append('v2', [record(1), record(2)]);
    const first = await two.since('v2', start?.position ?? { ino: 0, bytes: 0 });
    expect(first?.records.map((r) => r.token)).toEqual([record(1).token, record(2).token]);
    appendFileSync(path.join(dir, 'v2.vault'), '{"t":"[EMAIL_00000009]","x":null,"s":"half');
    const none = await two.since('v2', first?.position ?? { ino: 0, bytes: 0 });
    expect(none?.records).toEqual([]);
    expect(none?.position).toEqual(first?.position);
  });

  it('asks for a full read once the file was rewritten (a compaction)', async () => {
    const one = new VaultJournal(dir);
    await one.create('v3', new Uint8Array(32).fill(4));
    await one.append('v3', [record(1)]);
    const loaded = await one.load('v3');
    expect(await one.rewrite('v3', new Uint8Array(32).fill(4), [record(1)], loaded?.position ?? { ino: 0, bytes: 0 })).toBe(true);
    expect(await one.since('v3', loaded?.position ?? { ino: 0, bytes: 0 })).toBeUndefined();
  });

  // Nothing acknowledged is lost: before, a compaction wrote only what its process had read, and a
  // token the other process appended (and acknowledged) in between was gone from the new file.
  it("keeps what another process appended between the compactor's read and its rewrite", async () => {
    const one = new VaultJournal(dir);
    const two = new VaultJournal(dir);
    await one.create('v4', new Uint8Array(32).fill(5));
    await one.append('v4', [record(1)]);
    const loaded = await one.load('v4');
    await two.append('v4', [record(2)]);
    expect(await one.rewrite('v4', new Uint8Array(32).fill(5), loaded?.records ?? [], loaded?.position ?? { ino: 0, bytes: 0 })).toBe(true);
    await two.append('v4', [record(3)]);
    const after = await new VaultJournal(dir).load('v4');
    expect(after?.records.map((r) => r.token)).toEqual([record(1).token, record(2).token, record(3).token]);
  });

  it('compacts a file once at a time across processes; a lock left by a dead process is broken', async () => {
    const one = new VaultJournal(dir);
    await one.create('v5', new Uint8Array(32).fill(6));
    await one.append('v5', [record(1)]);
    const lock = path.join(dir, 'v5.vault.compacting');
    writeFileSync(lock, '1\n');
    const loaded = await one.load('v5');
    const at = loaded?.position ?? { ino: 0, bytes: 0 };
    expect(await one.rewrite('v5', new Uint8Array(32).fill(6), loaded?.records ?? [], at)).toBe(false);
    const old = new Date(Date.now() - 120_000);
    utimesSync(lock, old, old);
    expect(await one.rewrite('v5', new Uint8Array(32).fill(6), loaded?.records ?? [], at)).toBe(true);
    expect(existsSync(lock)).toBe(false);
    // A second compaction from the same (now stale) read finds the file replaced and does nothing.
    expect(await one.rewrite('v5', new Uint8Array(32).fill(6), [], at)).toBe(false);
    expect((await one.load('v5'))?.records.map((r) => r.token)).toEqual([record(1).token]);
  });

  it('loses no acknowledged token while two processes append and compact at once', async () => {
    const secret = new Uint8Array(32).fill(7);
    const one = new VaultJournal(dir);
    const two = new VaultJournal(dir);
    await one.create('v6', secret);
    const acknowledged: string[] = [];
    const appender = async (journal: VaultJournal, base: number): Promise<void> => {
      for (let i = 0; i < 40; i++) {
        const r = { ...record(0), token: `[EMAIL_${String(base + i).padStart(8, '0')}]` };
        await journal.append('v6', [r]);
        acknowledged.push(r.token);
      }
    };
    const compactor = async (journal: VaultJournal): Promise<void> => {
      for (let i = 0; i < 15; i++) {
        const loaded = await journal.load('v6');
        if (loaded) await journal.rewrite('v6', secret, loaded.records, loaded.position);
      }
    };
    await Promise.all([appender(one, 1000), appender(two, 2000), compactor(new VaultJournal(dir)), compactor(new VaultJournal(dir))]);
    const tokens = new Set((await new VaultJournal(dir).load('v6'))?.records.map((r) => r.token));
    expect(acknowledged.filter((t) => !tokens.has(t))).toEqual([]);
    expect(acknowledged.length).toBe(80);
  });
});
