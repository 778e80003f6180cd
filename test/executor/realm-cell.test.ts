// A function of the sandbox API kept past its call's end (a guest that stashes `read_file`, `print`,
// `tools` or a timer function from call N and calls it during call N+1 of another agent) refuses
// with a clear "call has ended" error and never reaches call N+1: the functions are made once per
// realm (workers/js/guest-api.ts) and reach their call only through the realm's cell, which
// is emptied when the call ends. Runs in its own process because it locks the realm down as a
// sandbox worker does (test/fixtures/audit/realm-cell.mjs).

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FORWARDED, HAND_WRITTEN, paramsOf } from '../../workers/js/guest-api.js';
import { SANDBOX_API } from '../../workers/kit/api-contract.js';

const script = fileURLToPath(new URL('../fixtures/audit/realm-cell.mjs', import.meta.url));

interface Result {
  ok: boolean;
  value?: string;
  message?: string;
}

interface Report {
  names: string[];
  whileA: Record<string, Result>;
  stale: Record<string, Result>;
  reachedB: unknown[][];
  sameFunctions: string[];
  bSecret: string;
  aSeen: number;
}

function run(): Promise<Report> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [script], { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`realm-cell fixture failed: ${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as Report);
    });
  });
}

describe('the guest API across calls', () => {
  it('a function kept from call N refuses in call N+1 (another agent) with a clear error, and reaches nothing of N+1', async () => {
    const r = await run();
    expect(r.names).toEqual(expect.arrayContaining(['read_file', 'write_file', 'list_files', 'print', 'console', 'tools', 'fetch', 'setTimeout', 'import_skill', 'tokenize_pii']));
    // While call N runs, its functions work (they reach A's scope).
    expect(r.whileA['write_file']).toEqual({ ok: true, value: "A's write_file" });
    expect(r.aSeen).toBeGreaterThan(10);
    // After it ended, every one that acts refuses, naming itself; the logging ones drop the line.
    for (const name of r.names.filter((n) => !['print', 'console'].includes(n))) {
      expect(r.stale[name], name).toMatchObject({ ok: false });
      expect(r.stale[name]?.message, name).toMatch(/was called after its execute_code call ended/);
    }
    // Nothing reached B's call: no host call, no output line, no timer; B's realm has its own functions.
    expect(r.reachedB).toEqual([]);
    expect(r.sameFunctions).toEqual([]);
    expect(r.bSecret).toBe('B-secret');
  });

  it('the plain forwarding functions are the table\'s host-sync entries not written by hand', () => {
    const forwarded = FORWARDED.map((x) => x.name).sort();
    expect(forwarded).toEqual(['delete_file', 'detokenize_pii', 'list_files', 'list_skills', 'load_skill', 'tokenize_pii', 'write_file']);
    for (const name of HAND_WRITTEN) expect(SANDBOX_API.some((x) => x.name === name), name).toBe(true);
    const list = FORWARDED.find((x) => x.name === 'list_files');
    expect(list && paramsOf(list)).toEqual([{ name: 'subpath', optional: true, fallback: '.' }]);
    const write = FORWARDED.find((x) => x.name === 'write_file');
    expect(write && paramsOf(write)).toEqual([
      { name: 'path', optional: false, fallback: undefined },
      { name: 'content', optional: false, fallback: undefined },
    ]);
  });
});
