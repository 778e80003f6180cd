// Resident memory of an upstream instance: its process and every process under it (a server
// started through npx or a shell runs as a grandchild), read from /proc. Per-agent and
// per-workspace instances hold what their agent put in them (server-memory's graph, a scratch
// database), so each has a bound in bytes (server-instances.ts). Linux only: elsewhere there is
// no /proc, the figure is undefined and the bound is not enforced.

import { readdirSync, readFileSync } from 'node:fs';

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The parent pid of each process, from /proc/<pid>/stat (its 4th field, after the command's closing paren). */
function parents(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return children;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = read(`/proc/${entry}/stat`);
    const ppid = Number(stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!Number.isInteger(ppid)) continue;
    const list = children.get(ppid) ?? [];
    list.push(Number(entry));
    children.set(ppid, list);
  }
  return children;
}

/** The resident memory of `pid` and its descendants, MiB; undefined when it cannot be read (not Linux, or the process is gone). */
export function processTreeRssMb(pid: number): number | undefined {
  const own = read(`/proc/${pid}/status`);
  if (own === undefined) return undefined;
  const children = parents();
  let kb = 0;
  const seen = new Set<number>();
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.pop() as number;
    if (seen.has(next)) continue;
    seen.add(next);
    const status = next === pid ? own : read(`/proc/${next}/status`);
    kb += Number(/VmRSS:\s+(\d+) kB/.exec(status ?? '')?.[1] ?? 0);
    queue.push(...(children.get(next) ?? []));
  }
  return kb / 1024;
}
