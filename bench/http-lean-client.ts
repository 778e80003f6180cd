// A lean load generator for the Streamable HTTP front (issue 14): raw HTTP/1.1 with keep-alive and
// pre-initialized sessions instead of the SDK client, whose own CPU per call was more than the
// server's on the same two cores. It speaks just enough of the protocol to call a tool, and reads
// the CPU the daemon's processes spent, so the server's cost per call can be printed.

import { readFile, readdir } from 'node:fs/promises';
import http from 'node:http';

const PROTOCOL_VERSION = '2025-06-18';

export interface LeanSession {
  url: URL;
  sessionId: string;
  agent: http.Agent;
  token?: string;
  nextId: number;
}

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function post(session: Pick<LeanSession, 'url' | 'agent' | 'token'> & { sessionId?: string }, payload: unknown): Promise<Reply> {
  const body = JSON.stringify(payload);
  return new Promise((resolve, reject) => {
    const req = http.request(
      session.url,
      {
        method: 'POST',
        agent: session.agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(body),
          'mcp-protocol-version': PROTOCOL_VERSION,
          ...(session.sessionId ? { 'mcp-session-id': session.sessionId } : {}),
          ...(session.token ? { authorization: `Bearer ${session.token}` } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The JSON-RPC message of a reply, whether it came as JSON or as one SSE event. */
function message(reply: Reply): { result?: unknown; error?: unknown } {
  const type = String(reply.headers['content-type'] ?? '');
  if (type.includes('text/event-stream')) {
    const data = reply.body
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trim())
      .pop();
    return data ? (JSON.parse(data) as { result?: unknown; error?: unknown }) : {};
  }
  return reply.body ? (JSON.parse(reply.body) as { result?: unknown; error?: unknown }) : {};
}

export async function openLeanSession(url: string, token?: string): Promise<LeanSession> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const base = { url: new URL(url), agent, ...(token ? { token } : {}) };
  const init = await post(base, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'lean-bench', version: '1.0.0' } },
  });
  const sessionId = init.headers['mcp-session-id'];
  if (init.status !== 200 || typeof sessionId !== 'string') throw new Error(`initialize failed: HTTP ${init.status} ${init.body.slice(0, 200)}`);
  const session: LeanSession = { ...base, sessionId, nextId: 1 };
  await post(session, { jsonrpc: '2.0', method: 'notifications/initialized' });
  return session;
}

export async function leanCallTool(session: LeanSession, name: string, args: Record<string, unknown>): Promise<unknown> {
  const reply = await post(session, { jsonrpc: '2.0', id: session.nextId++, method: 'tools/call', params: { name, arguments: args } });
  const msg = message(reply);
  if (reply.status !== 200 || msg.error) throw new Error(`tools/call failed: HTTP ${reply.status} ${reply.body.slice(0, 200)}`);
  const result = msg.result as { isError?: boolean; content?: unknown };
  if (result?.isError) throw new Error(`tool failed: ${JSON.stringify(result.content).slice(0, 200)}`);
  return result;
}

export function closeLeanSession(session: LeanSession): void {
  session.agent.destroy();
}

/** CPU seconds (user + system) a process has used, from /proc (Linux); 0 elsewhere. */
export async function cpuSeconds(pid: number): Promise<number> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return ticks / 100;
  } catch {
    return 0;
  }
}

/** A process and its children (the sandbox processes of a daemon), from /proc. */
export async function withChildren(pid: number): Promise<number[]> {
  const out = [pid];
  try {
    for (const tid of await readdir(`/proc/${pid}/task`)) {
      const children = await readFile(`/proc/${pid}/task/${tid}/children`, 'utf8').catch(() => '');
      for (const c of children.split(' ').filter(Boolean)) out.push(Number(c));
    }
  } catch {
    // not Linux, or the process is gone
  }
  return out;
}
