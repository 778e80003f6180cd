// Revision 2026-07-28 (stateless) against the real daemon (`serve`, real sandbox) with plain HTTP
// clients: a tools/call of execute_code with a progress token is answered with an SSE stream on
// the POST itself, carrying its progress and output lines and the log messages its _meta logLevel
// asks for, then the result; two agents calling at once each hear only their own call; a client
// that accepts JSON only gets the plain JSON result; the stdio bridge relays the stream to its client.

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, REPO, scratch, startDaemon } from '../fixtures/mcp/cli.js';
import type { Daemon, Scratch } from '../fixtures/mcp/cli.js';

const REVISION = '2026-07-28';
const ALICE = { name: 'alice', token: 'stream-token-alice-0123456789abcdef' };
const BOB = { name: 'bob', token: 'stream-token-bob-0123456789abcdef00' };

let home: Scratch;
let daemon: Daemon;

beforeAll(async () => {
  home = scratch();
  const config = home.writeConfig({ agents: [ALICE, BOB] });
  daemon = await startDaemon({ ...home.env, CODE_EXEC_CONFIG: config, CODE_EXEC_PROGRESS_INTERVAL_MS: '100' });
}, 60_000);

afterAll(async () => {
  await daemon?.stop();
  home?.remove();
});

interface Frame {
  id?: unknown;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

interface Reply {
  status: number;
  contentType: string;
  frames: Frame[];
}

async function call(token: string, code: string, meta: Record<string, unknown>, accept = 'application/json, text/event-stream', id: number | string = 1): Promise<Reply> {
  const res = await fetch(daemon.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: accept, Authorization: `Bearer ${token}`, 'MCP-Protocol-Version': REVISION, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'execute_code' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'execute_code', arguments: { code }, _meta: { 'io.modelcontextprotocol/protocolVersion': REVISION, 'io.modelcontextprotocol/clientCapabilities': {}, ...meta } },
    }),
  });
  const contentType = res.headers.get('content-type') ?? '';
  const text = await res.text();
  if (!contentType.includes('text/event-stream')) return { status: res.status, contentType, frames: [JSON.parse(text) as Frame] };
  // Events are separated by a blank line; each message event has one data line (JSON on one line).
  const frames = text
    .split('\n\n')
    .flatMap((event) => event.split('\n').filter((line) => line.startsWith('data: ')))
    .map((line) => line.slice('data: '.length))
    .filter((data) => data.trim() !== '')
    .map((data) => JSON.parse(data) as Frame);
  return { status: res.status, contentType, frames };
}

const PRINTING = (who: string): string => `for (let i = 0; i < 3; i++) { console.log("${who} line " + i); await new Promise((r) => setTimeout(r, 150)); } return "${who} done"`;
const progressLines = (reply: Reply): string[] => reply.frames.filter((f) => f.method === 'notifications/progress').map((f) => String(f.params?.['message']));

describe('revision 2026-07-28: notifications on the request stream', () => {
  it('streams progress, output lines and the log messages asked for, then the result, on the POST response', async () => {
    const reply = await call(ALICE.token, PRINTING('alice'), { progressToken: 'p-1', 'io.modelcontextprotocol/logLevel': 'debug' });
    expect(reply.status).toBe(200);
    expect(reply.contentType).toContain('text/event-stream');
    const last = reply.frames.at(-1);
    expect(last).toMatchObject({ id: 1, result: { resultType: 'complete', structuredContent: { success: true, result: 'alice done' } } });
    const notes = reply.frames.slice(0, -1);
    expect(notes.length).toBeGreaterThan(0);
    expect(notes.every((f) => f.method?.startsWith('notifications/') && f.id === undefined)).toBe(true);
    const progress = notes.filter((f) => f.method === 'notifications/progress');
    expect(progress.every((f) => f.params?.['progressToken'] === 'p-1')).toBe(true);
    expect(progressLines(reply)).toEqual(expect.arrayContaining(['alice line 0', 'alice line 1', 'alice line 2']));
    const values = progress.map((f) => Number(f.params?.['progress']));
    expect(values).toEqual([...values].sort((a, b) => a - b));
    const logs = notes.filter((f) => f.method === 'notifications/message').map((f) => (f.params?.['data'] as { event?: string }).event);
    expect(logs).toEqual(['call_started', 'call_finished']);
  });

  it('sends no log messages to a request without _meta logLevel, and only those at or above the level asked for', async () => {
    const none = await call(ALICE.token, PRINTING('quiet'), { progressToken: 7 });
    expect(progressLines(none)).toContain('quiet line 2');
    expect(none.frames.filter((f) => f.method === 'notifications/message')).toEqual([]);
    const info = await call(ALICE.token, 'console.log("x"); return 1', { progressToken: 8, 'io.modelcontextprotocol/logLevel': 'info' });
    expect(info.frames.filter((f) => f.method === 'notifications/message').map((f) => f.params?.['level'])).toEqual(['info']);
    expect(info.frames.at(-1)).toMatchObject({ id: 1, result: { structuredContent: { success: true, result: 1 } } });
  });

  it('keeps two agents calling at once, with the same request id and progress token, to their own streams', async () => {
    const meta = { progressToken: 'same', 'io.modelcontextprotocol/logLevel': 'debug' };
    const [a, b] = await Promise.all([call(ALICE.token, PRINTING('alice'), meta, undefined, 5), call(BOB.token, PRINTING('bob'), meta, undefined, 5)]);
    expect(a.frames.at(-1)).toMatchObject({ id: 5, result: { structuredContent: { result: 'alice done' } } });
    expect(b.frames.at(-1)).toMatchObject({ id: 5, result: { structuredContent: { result: 'bob done' } } });
    expect(progressLines(a)).toContain('alice line 2');
    expect(progressLines(b)).toContain('bob line 2');
    expect(JSON.stringify(a.frames)).not.toContain('bob');
    expect(JSON.stringify(b.frames)).not.toContain('alice');
  });

  it('answers a client that accepts JSON only with the plain JSON result', async () => {
    const reply = await call(BOB.token, PRINTING('json'), { progressToken: 'p-2', 'io.modelcontextprotocol/logLevel': 'debug' }, 'application/json');
    expect(reply.status).toBe(200);
    expect(reply.contentType).toContain('application/json');
    expect(reply.frames).toEqual([expect.objectContaining({ id: 1, result: expect.objectContaining({ resultType: 'complete', structuredContent: expect.objectContaining({ result: 'json done' }) }) })]);
  });

  it('refuses a logLevel that is not a log level, naming the levels', async () => {
    const reply = await call(ALICE.token, 'return 1', { 'io.modelcontextprotocol/logLevel': 'loud' }, undefined, 9);
    expect(reply.status).toBe(400);
    expect(reply.frames[0]).toMatchObject({ id: 9, error: { code: -32602 } });
    expect(reply.frames[0]?.error?.message).toMatch(/logLevel.*debug, info, notice, warning/);
  });

  it('relays the stream through the stdio bridge: notifications first, then the answer with the client\'s id', async () => {
    const proc = spawn(process.execPath, [BIN, 'stdio', '--connect', daemon.url], { cwd: REPO, env: { ...home.env, CODE_EXEC_TOKEN: ALICE.token }, stdio: ['pipe', 'pipe', 'pipe'] });
    try {
      const frames: Frame[] = [];
      const answered = new Promise<void>((resolve) => {
        createInterface({ input: proc.stdout }).on('line', (line) => {
          const frame = JSON.parse(line) as Frame;
          frames.push(frame);
          if (frame.id === 'bridged') resolve();
        });
      });
      const meta = { 'io.modelcontextprotocol/protocolVersion': REVISION, 'io.modelcontextprotocol/clientCapabilities': {}, progressToken: 'via-bridge', 'io.modelcontextprotocol/logLevel': 'info' };
      proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'bridged', method: 'tools/call', params: { name: 'execute_code', arguments: { code: PRINTING('bridged') }, _meta: meta } })}\n`);
      await answered;
      expect(frames.at(-1)).toMatchObject({ id: 'bridged', result: { resultType: 'complete', structuredContent: { result: 'bridged done' } } });
      const lines = frames.filter((f) => f.method === 'notifications/progress' && f.params?.['progressToken'] === 'via-bridge').map((f) => f.params?.['message']);
      expect(lines).toEqual(expect.arrayContaining(['bridged line 0', 'bridged line 2']));
      expect(frames.filter((f) => f.method === 'notifications/message').map((f) => f.params?.['level'])).toEqual(['info']);
    } finally {
      proc.kill();
    }
  });
});
