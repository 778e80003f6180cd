// Checks every HTTP request passes before it reaches MCP: Host and Origin against DNS rebinding,
// and a bounded body read. Each refusal is a JSON body that says what was wrong and how to fix it.

import type { IncomingMessage, ServerResponse } from 'node:http';

const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]', '::1'];
const WILDCARD_BINDS = ['0.0.0.0', '::', '[::]'];

/** The first value of a request header. */
export function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.includes(host.toLowerCase()) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** The hostname of a Host header value ('example.com:80' → 'example.com', '[::1]:7337' → '[::1]'). */
export function hostnameOf(hostHeader: string): string {
  const value = hostHeader.trim().toLowerCase();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    return end === -1 ? value : value.slice(0, end + 1);
  }
  const colon = value.indexOf(':');
  return colon === -1 ? value : value.slice(0, colon);
}

export class HostPolicy {
  readonly #hosts: Set<string>;
  readonly #hostsWithPort: Set<string>;
  readonly #origins: Set<string>;

  constructor(bindHost: string, allowedHosts: readonly string[], allowedOrigins: readonly string[]) {
    const hosts = [...LOOPBACK_HOSTS, ...(WILDCARD_BINDS.includes(bindHost) ? [] : [formatHost(bindHost)])];
    this.#hosts = new Set(hosts.map((h) => h.toLowerCase()));
    this.#hostsWithPort = new Set();
    for (const entry of allowedHosts) {
      const lower = entry.toLowerCase();
      if (hostnameOf(lower) === lower) this.#hosts.add(lower);
      else this.#hostsWithPort.add(lower);
    }
    this.#origins = new Set(allowedOrigins.map((o) => o.toLowerCase().replace(/\/+$/, '')));
  }

  /** null when allowed, else the reason. */
  checkHost(header: string | undefined): string | null {
    if (!header) return 'the request has no Host header';
    const lower = header.trim().toLowerCase();
    if (this.#hosts.has(hostnameOf(lower)) || this.#hostsWithPort.has(lower)) return null;
    return `Host "${header}" is not allowed (DNS rebinding protection); add it to allowedHosts (CODE_EXEC_ALLOWED_HOSTS) if this daemon is meant to be reached by that name`;
  }

  checkOrigin(header: string | undefined): string | null {
    if (header === undefined) return null;
    const origin = header.trim().toLowerCase().replace(/\/+$/, '');
    if (this.#origins.has(origin)) return null;
    try {
      const url = new URL(origin);
      if ((url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHost(url.hostname)) return null;
    } catch {
      // "null" and other opaque origins fall through to the refusal
    }
    return `Origin "${header}" is not allowed (DNS rebinding protection); add it to allowedOrigins (CODE_EXEC_ALLOWED_ORIGINS) to let that web page call this daemon`;
  }
}

function formatHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

export type BodyResult =
  | { ok: true; text: string }
  | { ok: false; tooLarge: true }
  | { ok: false; tooLarge: false; timedOut: true; error: string }
  | { ok: false; tooLarge: false; timedOut?: false; error: string };

export interface BodyDeadlines {
  /** The whole body must have arrived within this, ms. */
  totalMs: number;
  /** Longest pause between two chunks of the body, ms. */
  idleMs: number;
}

/** Reads the request body up to `maxBytes`; stops reading as soon as the cap or a deadline is passed. */
export function readBody(req: IncomingMessage, maxBytes: number, deadlines?: BodyDeadlines): Promise<BodyResult> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve({ ok: false, tooLarge: true });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    let idleTimer: NodeJS.Timeout | undefined;
    const totalTimer = deadlines
      ? setTimeout(() => finish({ ok: false, tooLarge: false, timedOut: true, error: `the body did not arrive within ${Math.round(deadlines.totalMs / 1000)} s` }), deadlines.totalMs)
      : undefined;
    const armIdle = (): void => {
      if (!deadlines) return;
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => finish({ ok: false, tooLarge: false, timedOut: true, error: `no part of the body arrived for ${Math.round(deadlines.idleMs / 1000)} s` }), deadlines.idleMs);
    };
    const finish = (result: BodyResult): void => {
      if (done) return;
      done = true;
      clearTimeout(totalTimer);
      clearTimeout(idleTimer);
      req.removeListener('data', onData);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      armIdle();
      size += chunk.length;
      if (size > maxBytes) {
        finish({ ok: false, tooLarge: true });
        req.resume();
        return;
      }
      chunks.push(chunk);
    };
    armIdle();
    req.on('data', onData);
    req.once('end', () => finish({ ok: true, text: Buffer.concat(chunks).toString('utf8') }));
    req.once('error', (error) => finish({ ok: false, tooLarge: false, error: error.message }));
    req.once('close', () => finish({ ok: false, tooLarge: false, error: 'the client closed the connection before the body ended' }));
  });
}

/** A JSON response; `extraHeaders` for WWW-Authenticate and the like. */
export function sendJson(res: ServerResponse, status: number, body: unknown, extraHeaders: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...extraHeaders });
  res.end(text);
}

/** A JSON-RPC error body, for refusals on the MCP endpoint. */
export function jsonRpcError(code: number, message: string): { jsonrpc: '2.0'; error: { code: number; message: string }; id: null } {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}
