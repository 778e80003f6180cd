// The reachability audit: everything a guest can reach from a call's globals (properties,
// getters, prototypes, return values and thrown errors of every callable, with fuzzed arguments,
// and of every facade member called with look-alike arguments) is either frozen or made afresh
// for the call, and none of it is Node's own (util.inspect, DOMException, Node's error prototypes). It runs in its own process because it locks the
// realm down exactly as a sandbox worker does (test/fixtures/audit/reachability.mjs).

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('../fixtures/audit/reachability.mjs', import.meta.url));

interface Report {
  reachedA: number;
  reachedB: number;
  shared: number;
  violations: { path: string; other: string; type: string }[];
  node: { path: string; object: string }[];
  uncovered: string[];
  missing: string[];
}

function audit(options: Record<string, unknown> = {}): Promise<Report> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [script, JSON.stringify(options)], { timeout: 240_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`audit failed: ${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as Report);
    });
  });
}

describe('reachability audit of the JavaScript sandbox', () => {
  it('finds no object shared by two calls that is not frozen, and every global is in the API contract', { timeout: 300_000 }, async () => {
    const [report, canary] = await Promise.all([audit(), audit({ extra: 'node-urlsearchparams' })]);
    // The walk really went deep: tens of thousands of objects per call, hundreds shared (intrinsics).
    expect(report.reachedA).toBeGreaterThan(10_000);
    expect(report.shared).toBeGreaterThan(100);
    expect(report.violations).toEqual([]);
    // Facades called with fakes, Proxies, subclass instances and inspect baits reach none of Node's own objects.
    expect(report.node).toEqual([]);
    expect(report.uncovered).toEqual([]);
    expect(report.missing).toEqual([]);

    // The same audit with Node's own URL and URLSearchParams endowed (hardened, as the first
    // version did) must flag what an attacker used: the iterator prototype and Node's error prototypes.
    const paths = canary.violations.map((v) => v.path);
    expect(paths.some((p) => /NodeURLSearchParams.*entries.*__proto__$/.test(p))).toBe(true);
    expect(paths.some((p) => /NodeURL.* throws\.__proto__$/.test(p))).toBe(true);
  });
});
