// Issue 33 item 2, bytes not counts, on a real daemon with two agents: alpha floods its PII vault
// with 64 KiB PEM blocks (the red team's 2,400 tokens from 40 calls grew the daemon 146 -> 587 MB
// and alpha's sealed journal to 179 MB); it gets a clear refusal naming
// pii.maxVaultBytesPerAgent at its budget, its vault file on disk stays near the budget, the
// daemon's memory stays bounded, and beta's tokenize and restore keep working meanwhile.

import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agent, run, startIsolationDaemon, tool } from './helpers.js';
import type { IsolationDaemon } from './helpers.js';

const BUDGET = 2 * 1024 * 1024;
const VAULTS = mkdtempSync(path.join(tmpdir(), 'cem-vault-bytes-'));
let d: IsolationDaemon;

/** Resident memory of a process, bytes (Linux). */
async function rss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

/** Guest code: `count` distinct 64 KiB PEM blocks (from `from` on), each tokenized; stops at the first refusal. */
function flood(from: number, count: number): string {
  return `
    let seed = ${from} * 7919 + 1;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const line = () => { let s = ''; for (let i = 0; i < 64; i++) { seed = (seed * 1103515245 + 12345) % 2147483648; s += alphabet[seed % 64]; } return s; };
    let ok = 0;
    for (let n = ${from}; n < ${from + count}; n++) {
      const lines = [];
      for (let l = 0; l < 1000; l++) lines.push(line());
      const pem = '-----BEGIN PRIVATE KEY-----\\n' + lines.join('\\n') + '\\n-----END PRIVATE KEY-----';
      try { await tokenize_pii('key #' + n + ':\\n' + pem); ok++; }
      catch (e) { return { ok, refused: String(e && e.message) }; }
    }
    return { ok, refused: null };`;
}

beforeAll(async () => {
  d = await startIsolationDaemon({ agents: [agent('alpha'), agent('beta')], env: { CODE_EXEC_PII_MAX_VAULT_BYTES_PER_AGENT: String(BUDGET), CODE_EXEC_PII_VAULT_DIR: VAULTS } });
}, 120_000);

afterAll(async () => {
  await d?.stop();
  rmSync(VAULTS, { recursive: true, force: true });
});

describe('per-agent PII vault budget in bytes', () => {
  it("refuses alpha's flood of big values at its budget, clearly, while beta's tokens keep working and memory stays bounded", async () => {
    const alpha = await d.client('alpha');
    const beta = await d.client('beta');
    const pid = d.daemon.proc.pid as number;
    const before = await rss(pid);
    const betaToken = (await tool(beta, 'sanitize_pii', { text: 'reach beta at beta.user@example.org' })).structured?.['sanitized_text'] as string;

    let accepted = 0;
    let refusal: string | null = null;
    // Up to 60 blocks (about 4 MB of values, twice the budget) in calls of 15, as the red team did.
    for (let from = 0; from < 60 && refusal === null; from += 15) {
      const r = await run(alpha, flood(from, 15), 'javascript', 60);
      expect(r.success, `${r.error_type}: ${r.error}`).toBe(true);
      const out = r.result as { ok: number; refused: string | null };
      accepted += out.ok;
      refusal = out.refused;
      // beta, meanwhile
      const restored = await tool(beta, 'restore_pii', { text: betaToken });
      expect(restored.structured?.['restored_text']).toBe('reach beta at beta.user@example.org');
    }
    expect(refusal, 'alpha was never refused').not.toBeNull();
    expect(refusal).toMatch(/pii\.maxVaultBytesPerAgent/);
    expect(refusal).toMatch(new RegExp(`may hold ${BUDGET}`));
    // 64 KiB blocks: the budget holds about 31 of them
    expect(accepted).toBeGreaterThan(20);
    expect(accepted).toBeLessThan(33);

    // Refused again and again: nothing more is kept.
    for (let i = 0; i < 3; i++) {
      const again = (await run(alpha, flood(100 + i * 10, 10), 'javascript', 60)).result as { ok: number; refused: string | null };
      expect(again.ok).toBe(0);
      expect(again.refused).toMatch(/pii\.maxVaultBytesPerAgent/);
    }

    // beta tokenizes new values and restores them.
    const fresh = await tool(beta, 'sanitize_pii', { text: 'and +1 415 555 0199' });
    expect(fresh.isError).toBe(false);
    const token = fresh.structured?.['sanitized_text'] as string;
    expect((await tool(beta, 'restore_pii', { text: token })).structured?.['restored_text']).toBe('and +1 415 555 0199');

    // On disk: alpha's sealed vault file stays within a small multiple of the budget (sealing, base64, slack).
    const sizes = readdirSync(VAULTS).filter((f) => f.endsWith('.vault')).map((f) => statSync(path.join(VAULTS, f)).size);
    expect(sizes).toHaveLength(2);
    expect(Math.max(...sizes)).toBeLessThan(4 * BUDGET);
    // In memory: the daemon grew by far less than the red team's 440 MB.
    expect((await rss(pid)) - before).toBeLessThan(150 * 1024 * 1024);
  }, 300_000);
});
