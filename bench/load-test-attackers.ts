// The load test's coordinator-budget attackers (issue 24), one function each so other attackers
// merge next to them: a large-argument upstream call with pii.flows on, a PII-tool flood over every
// door that takes text, an SSE-buffer filler, and a 600-connection holder on loopback. Each runs
// until `until()` and never throws.

import { createRequire } from 'node:module';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

type Until = () => boolean;
type Connect = () => Promise<Client>;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The config keys the attackers need: an upstream server and a flow rule that scans its arguments. */
export function attackerConfig(): Record<string, unknown> {
  const require = createRequire(import.meta.url);
  return {
    mcpServers: { everything: { command: process.execPath, args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'] } },
    pii: { flows: [{ tools: 'everything.*', types: ['SSN'], action: 'deny' }] },
  };
}

async function loop(until: Until, fn: () => Promise<unknown>): Promise<void> {
  while (!until()) await fn().catch(() => sleep(100));
}

const run = (c: Client, code: string, timeout = 60): Promise<unknown> =>
  c.callTool({ name: 'execute_code', arguments: { code, timeout_seconds: timeout } }, undefined, { timeout: (timeout + 30) * 1000 });

/** tools.everything.echo with a 16 MB argument: the flow check scans all of it (refused at the end by its SSN). */
export async function largeFlowCall(connectAttacker: Connect, until: Until): Promise<void> {
  const c = await connectAttacker().catch(() => undefined);
  if (!c) return;
  await loop(until, () => run(c, "try { await tools.everything.echo({ message: 'key='.repeat(4 * 1024 * 1024) + ' 123-45-6789' }) } catch (e) { return e.message }", 120));
}

/** The PII detectors' worst shapes through sanitize_pii/restore_pii, tokenize_pii/detokenize_pii from code, and big context_vars. */
export async function piiToolFlood(connectAttacker: Connect, until: Until): Promise<void> {
  const c = await connectAttacker().catch(() => undefined);
  if (!c) return;
  const text = 'a:b@'.repeat(256 * 1024) + ' alice@example.com';
  const keyRuns = 'password=a'.repeat(150_000);
  await loop(until, async () => {
    const s = await c.callTool({ name: 'sanitize_pii', arguments: { text } }, undefined, { timeout: 120_000 });
    const sanitized = (s.structuredContent as { sanitized_text?: string } | undefined)?.sanitized_text ?? '';
    await c.callTool({ name: 'restore_pii', arguments: { text: sanitized } }, undefined, { timeout: 120_000 });
    await run(c, "return detokenize_pii(tokenize_pii('1234 '.repeat(400_000))).length");
    await c.callTool({ name: 'execute_code', arguments: { code: 'return ctx.length', context_vars: { ctx: keyRuns } } }, undefined, { timeout: 120_000 });
    await c.callTool({ name: 'write_workspace_file', arguments: { filename: 'pii-probe.txt', content: keyRuns } }, undefined, { timeout: 120_000 });
  });
}

/** Four sessions returning the largest inline results, to fill the resumable-event budget. */
export async function sseBufferFiller(connectAttacker: Connect, until: Until): Promise<void> {
  const sessions = await Promise.all(Array.from({ length: 4 }, () => connectAttacker().catch(() => undefined)));
  await Promise.all(sessions.map((c) => (c ? loop(until, () => run(c, "return 'e'.repeat(1e6)")) : Promise.resolve())));
}

/** 600 connections on loopback, a third idle, a third with headers that never end, a third busy with the attacker's token; reopened when closed. */
export async function connectionHolder(port: number, token: string, until: Until): Promise<void> {
  const open = new Set<Socket>();
  let i = 0;
  while (!until()) {
    while (open.size < 600 && !until()) {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => undefined);
      s.once('close', () => open.delete(s));
      const kind = i++ % 3;
      if (kind === 1) s.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow: `);
      if (kind === 2) s.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`);
      open.add(s);
      if (open.size % 50 === 0) await sleep(10);
    }
    await sleep(250);
  }
  for (const s of open) s.destroy();
}
