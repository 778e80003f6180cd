// nginx's consistent hash (`hash KEY consistent`, ngx_http_upstream_hash_module), computed here so
// a daemon can mint MCP session ids that the load balancer routes back to it. With
// `hash $http_mcp_session_id consistent`, initialize (no session id yet) goes to any daemon by
// round robin; every later request goes where the id hashes. A daemon that picks ids hashing to
// itself keeps its sessions without any routing table. Each upstream server `HOST:PORT` gets 160
// points: crc32(HOST \0 PORT PREV_HASH), PREV_HASH the previous point as 4 little-endian bytes
// (starting from 0); a key goes to the first point at or above crc32(KEY), wrapping around. A dead
// server's points are skipped, so ids minted against a ring with extra servers still route right.

import { crc32 } from 'node:zlib';

/** Points per server of weight 1 (nginx: 160 * weight). */
const POINTS_PER_SERVER = 160;

export interface ChashPoint {
  hash: number;
  server: string;
}

/** The ring of `servers`, written exactly as in the nginx upstream block (e.g. "127.0.0.1:8001"). */
export function buildRing(servers: readonly string[]): ChashPoint[] {
  const points: ChashPoint[] = [];
  for (const server of new Set(servers)) {
    const { host, port } = splitServer(server);
    const base = crc32(Buffer.concat([Buffer.from(host), Buffer.from([0]), Buffer.from(port)]));
    const prev = Buffer.alloc(4);
    for (let j = 0; j < POINTS_PER_SERVER; j++) {
      const hash = crc32(prev, base);
      points.push({ hash, server });
      prev.writeUInt32LE(hash, 0);
    }
  }
  points.sort((a, b) => a.hash - b.hash);
  // nginx keeps one point per distinct hash.
  return points.filter((p, i) => i === 0 || p.hash !== (points[i - 1] as ChashPoint).hash);
}

/** The server nginx sends `key` to when every server of the ring is up. */
export function serverFor(ring: readonly ChashPoint[], key: string): string | undefined {
  if (ring.length === 0) return undefined;
  const hash = crc32(key);
  let lo = 0;
  let hi = ring.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((ring[mid] as ChashPoint).hash < hash) lo = mid + 1;
    else hi = mid;
  }
  return (ring[lo % ring.length] as ChashPoint).server;
}

/** nginx splits "HOST:PORT" at the last colon followed by digits only. */
function splitServer(server: string): { host: string; port: string } {
  const m = /^(.*):(\d+)$/.exec(server);
  return m ? { host: m[1] as string, port: m[2] as string } : { host: server, port: '' };
}
