// read_file without a trip to the coordinator. The coordinator decides whether a call may read its
// workspace at all and grants the real path of the agent's namespace (src/executor/host-api.ts);
// this file only confines reads to that folder. It serves the ordinary case only: any path that
// is unusual, any check that fails and any error gives up (undefined), and the call then goes to
// the host, whose answer (content, or the one refusal message every caller sees) is canonical.
// So a refusal is never decided here, only a success, and only inside the granted folder.

import { closeSync, constants, fstatSync, openSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import type { ReadGrant } from '../protocol.js';

/** Where the kernel shows what an open descriptor really is (Linux); elsewhere every read goes to the host. */
const FD_LINKS = '/proc/self/fd';
const supported = process.platform === 'linux';
/** Longest path served here; longer ones go to the host, which says what the limit is. */
const MAX_PATH_CHARS = 1024;
/** The ordinary relative path: no empty, `.` or `..` segment, no backslash or control character. */
// eslint-disable-next-line no-control-regex
const PLAIN_SEGMENT = /^(?!\.{1,2}$)[^/\\\u0000-\u001f\u007f]+$/;

function plainRelative(file: string): boolean {
  if (file.length === 0 || file.length > MAX_PATH_CHARS) return false;
  const rel = file.startsWith('./') ? file.slice(2) : file;
  return rel.split('/').every((segment) => PLAIN_SEGMENT.test(segment));
}

/**
 * The content of `file` in the granted folder, or undefined when the host must answer: no grant,
 * an unusual or host-only path, a missing file, a directory, a special file, a file over the
 * size limit, or a path that leads (through any symlink, however swapped) outside the folder.
 */
export function fastRead(grant: ReadGrant | undefined, file: string): string | undefined {
  if (!supported || grant === undefined || !plainRelative(file)) return undefined;
  const rel = file.startsWith('./') ? file.slice(2) : file;
  const top = rel.split('/', 1)[0] as string;
  if (grant.hostOnly.includes(top)) return undefined;
  let fd: number | undefined;
  try {
    // O_NOFOLLOW refuses a final symlink; O_NONBLOCK keeps a FIFO from blocking the open.
    fd = openSync(path.join(grant.root, rel), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    // What was really opened, whatever the path's folders pointed to at that moment.
    const real = readlinkSync(`${FD_LINKS}/${fd}`);
    if (!real.startsWith(grant.root + path.sep)) return undefined;
    const info = fstatSync(fd);
    if (!info.isFile() || info.size > grant.maxBytes) return undefined;
    const bytes = readFileSync(fd);
    // The file grew between the check and the read: the host applies the limit.
    if (bytes.length > grant.maxBytes) return undefined;
    return bytes.toString('utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
