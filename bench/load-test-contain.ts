// The load test's issue-33 attackers: each spends something many agents share, the way the red
// team's fourth round did. One function each, running until `until()`, never throwing:
// - stripperTraps: TypeScript that passes the nesting guard and traps the type stripper (labels,
//   `new`, `**`, `else if` chains) with `language`, and a `keyof` chain without it (detection's
//   helper thread); contained by the disposable stripper and charged by the agent's strike count;
// - vaultBytes: 64 KiB PEM-like values tokenized in a loop; bounded by pii.maxVaultBytesPerAgent;
// - skillsListFlood: the stateless revision's skills/list, 32 concurrent, over many 1 MB skills;
// - pythonFinalizers: Python calls answered at once whose `__del__` spins for a second or allocates
//   1.8 GB after the answer, under memory_mb 32.
// bench/contain-bench.ts and bench/load-test.ts run them; test/isolation/contain-load.test.ts too.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { descendants } from './stats.js';

type Until = () => boolean;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** What each attacker did: calls made, and how many were refused or failed (its own, as expected). */
export interface AttackCount {
  calls: number;
  refused: number;
}

/** Config keys the attackers need: code up to 1 MB (the skills), Python's own pool. */
export const CONTAIN_LIMITS = { maxCodeBytes: 1024 * 1024 };

async function loop(until: Until, count: AttackCount, fn: () => Promise<boolean>): Promise<void> {
  while (!until()) {
    count.calls++;
    const ok = await fn().catch(() => false);
    if (!ok) {
      count.refused++;
      await sleep(20);
    }
  }
}

const call = async (c: Client, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
  const r = await c.callTool({ name: 'execute_code', arguments: { timeout_seconds: 30, ...args } }, undefined, { timeout: 90_000 });
  return (r.structuredContent ?? {}) as Record<string, unknown>;
};

/** Chains that pass the nesting guard and trap amaro (test/executor/fixtures/trapping-typescript.ts). */
const TRAPS: ((i: number) => string)[] = [
  (i) => `${Array.from({ length: 5000 }, (_, k) => `l${k}:`).join(' ')} x${i};`,
  (i) => `const a${i} = ${'new '.repeat(6000)}A;`,
  (i) => `const a${i} = ${Array(6000).fill('2').join(' ** ')};`,
  (i) => `let a${i} = 0;\nif (a${i}) a${i} = 1;${' else if (a) a = 1;'.repeat(12_000)}`,
];

/** TypeScript that traps the stripper: with `language` (the sandbox thread's) and without (detection's helper). */
export async function stripperTraps(c: Client, until: Until, count: AttackCount): Promise<void> {
  let i = 0;
  await loop(until, count, async () => {
    const n = i++;
    const withLanguage = n % 2 === 0;
    const body = withLanguage ? (TRAPS[(n / 2) % TRAPS.length] as (i: number) => string)(n) : `type T${n} = ${'keyof '.repeat(5000)}A;`;
    const r = await call(c, { code: `const t${n}: number = ${n};\n${body}\nreturn t${n}`, ...(withLanguage ? { language: 'typescript' } : {}) });
    return r['success'] === true;
  });
}

/** Guest code tokenizing `count` distinct 64 KiB PEM-like blocks from `from` on; true when none was refused. */
function pemFlood(from: number, count: number): string {
  return `
    let seed = ${from} * 7919 + 1;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const line = () => { let s = ''; for (let i = 0; i < 64; i++) { seed = (seed * 1103515245 + 12345) % 2147483648; s += alphabet[seed % 64]; } return s; };
    for (let n = ${from}; n < ${from + count}; n++) {
      const lines = [];
      for (let l = 0; l < 1000; l++) lines.push(line());
      try { await tokenize_pii('key #' + n + ':\\n-----BEGIN PRIVATE KEY-----\\n' + lines.join('\\n') + '\\n-----END PRIVATE KEY-----'); }
      catch (e) { return false; }
    }
    return true;`;
}

/** 64 KiB PEM-like values tokenized in a loop, 20 a call, until the vault's byte budget refuses them. */
export async function vaultBytes(c: Client, until: Until, count: AttackCount): Promise<void> {
  let from = Math.floor(Math.random() * 1e6);
  await loop(until, count, async () => {
    const r = await call(c, { code: pemFlood(from, 20), language: 'javascript' });
    from += 20;
    return r['result'] === true;
  });
}

/** Saves `skills` skills of about 1 MB (inside the 64 MiB quota) for the flood. */
export async function saveLargeSkills(c: Client, skills: number): Promise<void> {
  const filler = 'x'.repeat(900 * 1024);
  for (let i = 0; i < skills; i++) {
    await c.callTool({ name: 'save_skill', arguments: { name: `big_${i}`, code: `export const blob${i} = ${JSON.stringify(filler)};\n`, description: `large skill ${i}` } }, undefined, { timeout: 120_000 });
  }
}

const REVISION = '2026-07-28';

/** 32 concurrent stateless skills/list requests over the agent's large skills, in a loop. */
export async function skillsListFlood(url: string, token: string, until: Until, count: AttackCount): Promise<void> {
  const lanes = Array.from({ length: 32 }, (_, lane) =>
    loop(until, count, async () => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': REVISION, 'Mcp-Method': 'skills/list', Authorization: `Bearer ${token}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: lane, method: 'skills/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': REVISION, 'io.modelcontextprotocol/clientCapabilities': {} } } }),
      });
      const body = (await res.json()) as { result?: unknown };
      return body.result !== undefined;
    }),
  );
  await Promise.all(lanes);
}

/**
 * skillsListFlood from a process of its own for `seconds`: 32 lanes of cheap answers would
 * otherwise spend the measuring process's CPU, and the bystanders' timings would show the
 * client's own event loop, not the daemon's.
 */
export function skillsListFloodProcess(url: string, token: string, seconds: number, count: AttackCount): Promise<void> {
  // From source (vitest) the child takes the built module, as the sandbox workers are taken.
  const built = import.meta.url.endsWith('.ts') ? new URL('../dist/bench/load-test-contain.js', import.meta.url).href : import.meta.url;
  const script = `import { skillsListFlood } from ${JSON.stringify(built)};
    const count = { calls: 0, refused: 0 };
    const end = performance.now() + ${seconds * 1000};
    await skillsListFlood(${JSON.stringify(url)}, ${JSON.stringify(token)}, () => performance.now() >= end, count);
    process.stdout.write(JSON.stringify(count));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve) =>
    child.once('exit', () => {
      try {
        Object.assign(count, JSON.parse(out) as AttackCount);
      } catch {
        // the child died: no count
      }
      resolve();
    }),
  );
}

const SPIN = ['import time', 'class Slow:', '    def __del__(self, _now=time.monotonic):', '        end = _now() + 1.0', '        while _now() < end:', '            pass', 'x = Slow()', 'x.me = x', 'del x', "result = 'answered'"].join('\n');
const HOARD = ['class Big:', '    def __del__(self):', '        self.keep = bytearray(1800 * 1024 * 1024)', 'b = Big()', 'b.me = b', 'del b', "result = 'answered'"].join('\n');

/** Python answered at once whose finalizers run after the answer: a 1 s spin, a 1.8 GB allocation under memory_mb 32. */
export async function pythonFinalizers(c: Client, until: Until, count: AttackCount): Promise<void> {
  let i = 0;
  await loop(until, count, async () => {
    const hoard = i++ % 2 === 1;
    const r = await call(c, { code: hoard ? HOARD : SPIN, language: 'python', ...(hoard ? { memory_mb: 32 } : {}) });
    return r['result'] === 'answered';
  });
}

/** Resident memory of `pid` and of each process below it (sandbox processes, Python's, upstream servers), MiB. */
export function processTreeRss(pid: number): { daemon: number; children: Map<number, number> } {
  const rss = (p: number): number => {
    try {
      return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    } catch {
      return 0;
    }
  };
  const children = new Map<number, number>();
  for (const p of descendants(pid)) children.set(p, rss(p));
  return { daemon: rss(pid), children };
}
