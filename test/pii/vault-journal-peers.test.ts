// Two processes on one vault folder (two stdio coordinators of one user): the first secret written
// for an agent wins, and a process reads what the other appended since, only the new whole lines.

import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { VaultJournal } from '../../src/pii/vault-journal.js';
import type { VaultRecord } from '../../src/pii/vault.js';

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
    await one.rewrite('v3', new Uint8Array(32).fill(4), [record(1)]);
    expect(await one.since('v3', loaded?.position ?? { ino: 0, bytes: 0 })).toBeUndefined();
  });
});
