// Attack class (issue 33 item 3): work sized by an agent's own data, per request, on the event loop.
// alpha saves many large skills (inside its quota) and floods the stateless revision's skills/list
// with concurrent requests; each used to read and hash every visible skill file. Meanwhile
// /healthz and beta's trivial call must stay fast, and alpha's answers must stay right.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { agent, startIsolationDaemon, tool, value } from './helpers.js';
import type { IsolationDaemon } from './helpers.js';

const SKILLS = 48;
const SKILL_BYTES = 900 * 1024;
const CONCURRENT = 32;
const FLOOD_MS = 8_000;
/** Generous: the stall this guards against took 10 s; a trivial answer takes milliseconds. */
const BOUND_MS = 2_000;
const REVISION = '2026-07-28';

const ALPHA = agent('alpha');
const BETA = agent('beta');
let d: IsolationDaemon;
let beta: Client;

beforeAll(async () => {
  d = await startIsolationDaemon({ agents: [ALPHA, BETA], processes: 2, config: { limits: { maxCodeBytes: 1024 * 1024 } } });
  const alpha = await d.client('alpha');
  beta = await d.client('beta');
  const filler = 'x'.repeat(SKILL_BYTES);
  for (let i = 0; i < SKILLS; i++) {
    const saved = await tool(alpha, 'save_skill', { name: `big_${i}`, code: `export const blob${i} = ${JSON.stringify(filler)};\n`, description: `large skill ${i}` });
    expect(saved.isError, saved.text).toBe(false);
  }
}, 300_000);

afterAll(async () => {
  await d?.stop();
});

interface Listed {
  uri: string;
  resources: { uri: string; digest: string; size: number }[];
}

async function skillsList(token: string, id: number): Promise<{ status: number; skills?: Listed[]; error?: { code: number; message: string } }> {
  const res = await fetch(d.daemon.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': REVISION, 'Mcp-Method': 'skills/list', Authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'skills/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': REVISION, 'io.modelcontextprotocol/clientCapabilities': {} } } }),
  });
  const body = (await res.json()) as { result?: { skills: Listed[] }; error?: { code: number; message: string } };
  return { status: res.status, ...(body.result && { skills: body.result.skills }), ...(body.error && { error: body.error }) };
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = Date.now();
  const v = await fn();
  return { ms: Date.now() - start, value: v };
}

it("alpha's skills/list flood over many large skills leaves /healthz and beta's trivial call fast, and alpha's digests right", async () => {
  // One answer first: the digests are those of the files on disk.
  const first = await skillsList(ALPHA.token, 0);
  expect(first.skills?.length).toBe(SKILLS);
  const sample = first.skills?.[0]?.resources.find((r) => r.uri.endsWith('/index.js'));
  const name = sample?.uri.match(/^skill:\/\/([^/]+)\//)?.[1] ?? '';
  const onDisk = readFileSync(path.join(d.home.env['CODE_EXEC_SKILLS_DIR'] ?? '', name, 'index.js'));
  expect(sample?.digest).toBe(`sha256:${createHash('sha256').update(onDisk).digest('hex')}`);
  expect(sample?.size).toBe(onDisk.length);

  const end = Date.now() + FLOOD_MS;
  let answered = 0;
  let busy = 0;
  const lanes = Array.from({ length: CONCURRENT }, async (_, lane) => {
    for (let i = 0; Date.now() < end; i++) {
      const r = await skillsList(ALPHA.token, lane * 10_000 + i).catch(() => undefined);
      if (r?.skills?.length === SKILLS) answered++;
      else if (r?.error?.code === -32000) busy++;
    }
  });
  const health: number[] = [];
  const calls: number[] = [];
  await new Promise((r) => setTimeout(r, 500));
  while (Date.now() < end - 500) {
    health.push((await timed(() => fetch(`${d.daemon.base}/healthz`).then((r) => r.status))).ms);
    calls.push((await timed(() => value(beta, 'return 1 + 1'))).ms);
  }
  await Promise.all(lanes);
  expect(answered, `alpha's own requests still get answers (${busy} were told the server is busy)`).toBeGreaterThan(0);
  expect(Math.max(...health), `/healthz took ${health.join(', ')} ms`).toBeLessThan(BOUND_MS);
  expect(Math.max(...calls), `beta's trivial call took ${calls.join(', ')} ms`).toBeLessThan(BOUND_MS);
}, 120_000);

it('answers skills/list from the digests it keeps: 20 in a row over 48 skills of 900 KB take well under the time to hash them each time', async () => {
  // The skills were saved over 3 s ago (settled); one answer remembers every file's digest.
  await skillsList(ALPHA.token, 1);
  const { ms } = await timed(async () => {
    for (let i = 0; i < 20; i++) expect((await skillsList(ALPHA.token, 100 + i)).skills?.length).toBe(SKILLS);
  });
  // Reading and hashing 43 MB per answer (the daemon's clock once kept any digest from being
  // remembered) took 5-6 s for these 20 at load 10; remembered, about 0.3 s.
  expect(ms, '20 skills/list answers, ms').toBeLessThan(2_500);
}, 120_000);
