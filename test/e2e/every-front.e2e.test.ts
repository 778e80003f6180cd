// One table of requests, run against every front of the real binary (HTTP `serve`, embedded
// `stdio`, the bridge `stdio --connect`) in both revisions: each row's result, progress lines and
// log messages must be what the table says, on all three. Revision 2025-11-25 is spoken by the MCP
// SDK's Client; 2026-07-28, which that client does not speak, by the SDK's own transports carrying
// the revision's messages (the HTTP one with the revision's headers added by its fetch hook).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import { BIN, REPO, scratch, startDaemon, startStdioClient } from '../fixtures/mcp/cli.js';
import type { Daemon, Scratch } from '../fixtures/mcp/cli.js';

const REVISION = '2026-07-28';
const FRONTS = ['http', 'stdio', 'bridge'] as const;
type Front = (typeof FRONTS)[number];

/** What a request produced: its answer, the output lines its progress carried, the log events it was sent. */
interface Seen {
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
  progress: string[];
  logs: string[];
}

const PRINTING = 'for (let i = 0; i < 2; i++) { console.log("line " + i); await sleep(150); } return "done"';
// The line is printed well before the failure: this table is about fronts, not the end-of-call flush.
const FAILING = 'console.log("before"); await sleep(300); throw new Error("boom")';

interface Row {
  name: string;
  method: string;
  params: Record<string, unknown>;
  /** The _meta logLevel (2026-07-28) or the session's logging/setLevel (2025-11-25); none: not asked. */
  logLevel?: string;
  expected: (seen: Seen) => void;
}

const call = (code: string): Record<string, unknown> => ({ name: 'execute_code', arguments: { code } });
const TABLE: Row[] = [
  {
    name: 'a call with progress and every log level: its lines, call_started and call_finished, its result',
    method: 'tools/call', params: call(PRINTING), logLevel: 'debug',
    expected: (s) => {
      expect(s.result).toMatchObject({ structuredContent: { success: true, result: 'done' } });
      expect(s.progress).toEqual(expect.arrayContaining(['line 0', 'line 1']));
      expect(s.logs).toEqual(['debug call_started', 'info call_finished']);
    },
  },
  {
    name: 'a failing call at level warning: its line, call_failed only, an isError result',
    method: 'tools/call', params: call(FAILING), logLevel: 'warning',
    expected: (s) => {
      expect(s.result).toMatchObject({ isError: true });
      expect(s.progress).toContain('before');
      expect(s.logs).toEqual(['warning call_failed']);
    },
  },
  {
    name: 'an unknown resource: an error whose data names the URI',
    method: 'resources/read', params: { uri: 'workspace://no-such-file.txt' },
    expected: (s) => {
      expect(s.error?.data).toEqual({ uri: 'workspace://no-such-file.txt' });
      expect(s.logs).toEqual([]);
    },
  },
  ...['skill://x/%E0%A4%A', 'skill://%E0%A4%A'].map((uri) => ({
    name: `a malformed %-escape (${uri}): invalid params naming the URI, never an internal error`,
    method: 'resources/read', params: { uri },
    expected: (s: Seen) => expect(s.error).toMatchObject({ code: -32602, data: { uri } }),
  })),
  {
    name: 'tools/list: the seed tools',
    method: 'tools/list', params: {},
    expected: (s) => expect((s.result?.['tools'] as { name: string }[]).map((t) => t.name)).toContain('execute_code'),
  },
];

let home: Scratch;
let daemon: Daemon;
const clients = new Map<Front, Awaited<ReturnType<typeof startStdioClient>>>();
const raw = new Map<Front, RawFront>();

beforeAll(async () => {
  home = scratch({ CODE_EXEC_SANDBOX_PROCESSES: '1', CODE_EXEC_PROGRESS_INTERVAL_MS: '100' });
  daemon = await startDaemon(home.env);
  const http = await daemon.connect();
  clients.set('http', { client: http, stderr: [], errors: [], close: () => http.close() });
  clients.set('stdio', await startStdioClient(home.env));
  clients.set('bridge', await startStdioClient(home.env, ['--connect', daemon.url]));
  raw.set('http', await RawFront.start(httpTransport(daemon.url)));
  raw.set('stdio', await RawFront.start(stdioTransport([])));
  raw.set('bridge', await RawFront.start(stdioTransport(['--connect', daemon.url])));
}, 120_000);

afterAll(async () => {
  await Promise.allSettled([...clients.values()].map((c) => c.close()));
  await Promise.allSettled([...raw.values()].map((r) => r.close()));
  await daemon?.stop();
  home?.remove();
});

describe.each(FRONTS)('revision 2025-11-25 over %s', (front) => {
  it.each(TABLE)('$name', async (row) => row.expected(await sessionRequest(clients.get(front)!.client, row)), 60_000);
});

describe.each(FRONTS)('revision 2026-07-28 over %s', (front) => {
  it.each(TABLE)('$name', async (row) => row.expected(await raw.get(front)!.request(row)), 60_000);

  it('refuses a log level that is only an inherited property name', async () => {
    for (const level of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const seen = await raw.get(front)!.request({ name: level, method: 'tools/list', params: {}, logLevel: level, expected: () => undefined });
      expect(seen.error).toMatchObject({ code: -32602, message: expect.stringMatching(/logLevel.*must be one of debug/) });
    }
  }, 60_000);

});

const logEvent = (params: unknown): string => {
  const { level, data } = params as { level: string; data: { event?: string } };
  return `${level} ${data.event ?? '?'}`;
};

async function sessionRequest(client: Client, row: Row): Promise<Seen> {
  const seen: Seen = { progress: [], logs: [] };
  await client.setLoggingLevel((row.logLevel ?? 'emergency') as LoggingLevel);
  const previous = client.fallbackNotificationHandler;
  client.fallbackNotificationHandler = async (note) => {
    if (note.method === 'notifications/message') seen.logs.push(logEvent(note.params));
  };
  try {
    const onprogress = (p: { message?: string }): void => void (p.message !== undefined && seen.progress.push(p.message));
    if (row.method === 'tools/call') seen.result = (await client.callTool(row.params as { name: string }, undefined, { onprogress })) as Record<string, unknown>;
    else if (row.method === 'tools/list') seen.result = (await client.listTools()) as Record<string, unknown>;
    else seen.result = (await client.readResource(row.params as { uri: string })) as Record<string, unknown>;
  } catch (error) {
    const { code, message, data } = error as { code: number; message: string; data?: unknown };
    seen.error = { code, message, data };
  } finally {
    client.fallbackNotificationHandler = previous;
  }
  return seen;
}

/** A front spoken to in revision 2026-07-28 through one of the SDK's client transports. */
class RawFront {
  readonly #transport: Transport;
  #next = 0;
  readonly #waiting = new Map<string, { seen: Seen; done: () => void }>();

  private constructor(transport: Transport) {
    this.#transport = transport;
  }

  static async start(transport: Transport): Promise<RawFront> {
    const front = new RawFront(transport);
    transport.onmessage = (message) => front.#receive(message);
    await transport.start();
    return front;
  }

  async request(row: Row): Promise<Seen> {
    const id = `raw-${++this.#next}`;
    const seen: Seen = { progress: [], logs: [] };
    const meta = { 'io.modelcontextprotocol/protocolVersion': REVISION, 'io.modelcontextprotocol/clientCapabilities': {}, progressToken: id, ...(row.logLevel !== undefined && { 'io.modelcontextprotocol/logLevel': row.logLevel }) };
    const answered = new Promise<void>((done) => this.#waiting.set(id, { seen, done }));
    await this.#transport.send({ jsonrpc: '2.0', id, method: row.method, params: { ...row.params, _meta: meta } } as JSONRPCMessage);
    await answered;
    return seen;
  }

  close(): Promise<void> {
    return this.#transport.close();
  }

  #receive(message: JSONRPCMessage): void {
    if ('id' in message && ('result' in message || 'error' in message)) {
      const waiter = this.#waiting.get(String(message.id));
      if (!waiter) return;
      this.#waiting.delete(String(message.id));
      if ('result' in message) waiter.seen.result = message.result;
      else waiter.seen.error = message.error as Seen['error'];
      return waiter.done();
    }
    // Requests are made one at a time: a notification belongs to the one waiting.
    const waiter = [...this.#waiting.values()][0];
    if (!waiter || !('method' in message)) return;
    if (message.method === 'notifications/message') waiter.seen.logs.push(logEvent(message.params));
    const text = (message.params as { message?: unknown } | undefined)?.message;
    if (message.method === 'notifications/progress' && typeof text === 'string') waiter.seen.progress.push(text);
  }
}

function stdioTransport(args: string[]): StdioClientTransport {
  return new StdioClientTransport({ command: process.execPath, args: [BIN, 'stdio', ...args], env: home.env, cwd: REPO, stderr: 'ignore' });
}

/**
 * The SDK's HTTP client transport, with the headers revision 2026-07-28 repeats from the body
 * added to each POST; a refusal (HTTP 400/404 with a JSON-RPC error) is handed to the transport as
 * an answer, since the SDK transport of a session revision throws on any status but 2xx.
 */
function httpTransport(url: string): StreamableHTTPClientTransport {
  const fetchRevision = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    const message = typeof init?.body === 'string' ? (JSON.parse(init.body) as { method: string; params?: { name?: string; uri?: string } }) : undefined;
    const named = message?.method === 'tools/call' ? message.params?.name : message?.method === 'resources/read' ? message.params?.uri : undefined;
    const headers = new Headers(init?.headers);
    headers.set('MCP-Protocol-Version', REVISION);
    if (message) headers.set('Mcp-Method', message.method);
    if (named !== undefined) headers.set('Mcp-Name', named);
    const res = await fetch(input, { ...init, headers });
    if (res.status < 400 || !res.headers.get('content-type')?.includes('application/json')) return res;
    return new Response(await res.text(), { status: 200, headers: res.headers });
  };
  return new StreamableHTTPClientTransport(new URL(url), { fetch: fetchRevision });
}
