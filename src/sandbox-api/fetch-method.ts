// fetch from sandbox code, performed by the host on the guest's behalf: only http(s), only hosts
// the agent's `net` permission names (checked again on every redirect), a response size cap, and
// the execute_code call's own deadline and cancellation.

import type { Config } from '../config/config-types.js';
import { authorizeCall, HostError } from '../executor/index.js';
import type { CallIdentity, HostMethod } from '../executor/index.js';

const MAX_REDIRECTS = 5;
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export function fetchMethod(config: Config): Record<string, HostMethod> {
  return {
    fetch: async ([input, init], ctx) => {
      const o = (init !== null && typeof init === 'object' ? init : {}) as Record<string, unknown>;
      const method = typeof o.method === 'string' ? o.method.toUpperCase() : 'GET';
      if (!METHODS.has(method)) throw new HostError('INVALID_ARGUMENT', `fetch: method ${JSON.stringify(o.method)} is not supported`, 'TypeError');
      const headers: Record<string, string> = {};
      if (o.headers !== undefined && o.headers !== null) {
        if (typeof o.headers !== 'object') throw new HostError('INVALID_ARGUMENT', 'fetch: headers must be an object of strings', 'TypeError');
        for (const [k, v] of Object.entries(o.headers as Record<string, unknown>)) headers[k] = String(v);
      }
      const body = o.body === undefined || o.body === null ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
      let url = parse(input);
      for (let hop = 0; ; hop++) {
        check(url, ctx.identity);
        const res = await fetch(url, { method, headers, body: hop === 0 ? body : undefined, redirect: 'manual', signal: ctx.signal }).catch((err: unknown) => {
          throw new HostError('FETCH_FAILED', `fetch ${url.origin}: ${(err as Error)?.message ?? String(err)}`, 'TypeError');
        });
        const location = res.headers.get('location');
        if (res.status >= 300 && res.status < 400 && location) {
          if (hop >= MAX_REDIRECTS) throw new HostError('TOO_MANY_REDIRECTS', `fetch: more than ${MAX_REDIRECTS} redirects`, 'TypeError');
          await res.body?.cancel();
          url = new URL(location, url);
          continue;
        }
        const text = await readCapped(res, config.limits.maxFetchBytes);
        ctx.account('in', text);
        return { status: res.status, statusText: res.statusText, url: url.href, headers: [...res.headers.entries()], body: text };
      }
    },
  };
}

function parse(input: unknown): URL {
  try {
    const url = new URL(String(input));
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('only http and https');
    return url;
  } catch (err) {
    throw new HostError('INVALID_URL', `fetch: ${JSON.stringify(String(input).slice(0, 200))} is not an http(s) URL (${(err as Error).message})`, 'TypeError');
  }
}

/** The access check for one hop (the first request and every redirect). */
function check(url: URL, identity: CallIdentity): void {
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  authorizeCall(identity, 'fetch', { kind: 'net', host: url.hostname, port, target: url.host });
}

async function readCapped(res: Response, max: number): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > max) {
    await res.body?.cancel();
    throw new HostError('TOO_LARGE', `fetch: the response is ${declared} bytes, over the ${max}-byte limit (limits.maxFetchBytes)`, 'RangeError');
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel();
      throw new HostError('TOO_LARGE', `fetch: the response passed the ${max}-byte limit (limits.maxFetchBytes)`, 'RangeError');
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
