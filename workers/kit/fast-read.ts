// read_file without a trip to the coordinator. The coordinator decides whether a call may read its
// workspace at all and grants the real path of the agent's namespace (src/executor/host-api.ts);
// this file only confines reads to that folder. It serves the ordinary case only: any path that
// is unusual, any check that fails and any error gives up (undefined), and the call then goes to
// the host, whose answer (content, or the one refusal message every caller sees) is canonical.
// So a refusal is never decided here, only a success, and only inside the granted folder.

import { isAscii } from 'node:buffer';
import { closeSync, constants, fstatSync, openSync, readlinkSync, readSync } from 'node:fs';
import type { BigIntStats } from 'node:fs';
import path from 'node:path';
import type { ReadGrant } from './protocol.js';
import { cachedText, keepText, versionKey, worthCaching } from './read-cache.js';

/** Where the kernel shows what an open descriptor really is (Linux); elsewhere every read goes to the host. */
const FD_LINKS = '/proc/self/fd';
/**
 * Linux O_PATH (fs.constants has no name for it): a descriptor that names a file without opening
 * it for I/O, so naming a FIFO or a device reached through a planted folder symlink does nothing
 * to it (a plain open did: it released the FIFO's blocked writer, then killed it with SIGPIPE).
 * The value is the generic one; on architectures with another value every read goes to the host.
 */
const O_PATH = 0o10000000;
const supported = process.platform === 'linux' && ['x64', 'arm64', 'arm', 'ia32'].includes(process.arch);
/** The task's interrupt buffer slot where a call's worker-served read characters add up (protocol.ts). */
export const READ_CHARS_SLOT = 2;

/**
 * Counts characters read in the worker where the pool host sees them even if the call's thread is
 * terminated (a timeout), so the host's accounting never misses them. Saturates at 2^31 - 1.
 */
export function countRead(interrupt: Int32Array, chars: number): void {
  const before = Atomics.load(interrupt, READ_CHARS_SLOT);
  Atomics.store(interrupt, READ_CHARS_SLOT, Math.min(0x7fffffff, before + chars));
}

/**
 * Whether V8 keeps `text` one byte per character: not only ASCII, any text whose characters all
 * fit Latin-1 (UTF-8 'é' decodes to a one-byte string). Counted as two bytes a character, such
 * text made the cache claim twice what it holds, and the surplus was subtracted from the running
 * call's memory figure (memory.ts): up to 16 MB a call could hold past its memory_mb.
 */
function oneByteText(bytes: Buffer, text: string): boolean {
  // eslint-disable-next-line no-control-regex
  return isAscii(bytes) || !/[^\u0000-\u00ff]/.test(text);
}

/**
 * A file's version is cached only once its last change (ctime) is this old, ms. Timestamps are
 * only as fine as the filesystem keeps them (whole seconds on ext3, ext4 with 128-byte inodes,
 * HFS+ and many NFS servers, 2 s on FAT; a jiffy on Linux before 6.13): within that grain, a
 * same-size rewrite, or a new file on the inode another agent just freed, has the same key as the
 * version cached, and was served the cached text (stale, or the other agent's). A change made
 * after a settled version was cached gets a ctime past it, so its key differs. Racy-git's rule.
 */
const SETTLED_MS = 3_000;

function settled(info: BigIntStats): boolean {
  return info.ctimeNs < BigInt(Date.now() - SETTLED_MS) * 1_000_000n;
}

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
  let named: number | undefined;
  let fd: number | undefined;
  try {
    // O_PATH only names what the path leads to; O_NOFOLLOW names a final symlink itself (refused below).
    named = openSync(path.join(grant.root, rel), O_PATH | constants.O_NOFOLLOW);
    // What was really named, whatever the path's folders pointed to at that moment.
    const real = readlinkSync(`${FD_LINKS}/${named}`);
    if (!real.startsWith(grant.root + path.sep)) return undefined;
    const info = fstatSync(named, { bigint: true });
    const size = Number(info.size);
    if (!info.isFile() || size > grant.maxBytes) return undefined;
    // This very version of this file, decoded for an earlier call (read-cache.ts). Only a file
    // changed a while ago: see SETTLED_MS.
    const key = worthCaching(size) && settled(info) ? versionKey(info) : undefined;
    const cached = key === undefined ? undefined : cachedText(key);
    if (cached !== undefined) return cached;
    // Opened through the descriptor: the very file checked above, whatever its path has become.
    fd = openSync(`${FD_LINKS}/${named}`, constants.O_RDONLY | constants.O_NONBLOCK);
    // At most one byte past the size checked (readFileSync would fstat again and read whatever the
    // file has grown to, up to 2 GiB); a file that grew since is the host's to answer.
    const bytes = Buffer.allocUnsafe(size + 1);
    let length = 0;
    while (length < bytes.length) {
      const n = readSync(fd, bytes, length, bytes.length - length, length);
      if (n === 0) break;
      length += n;
    }
    if (length > size) return undefined;
    const text = bytes.toString('utf8', 0, length);
    // Kept only if the file did not change while it was read.
    if (key !== undefined && versionKey(fstatSync(fd, { bigint: true })) === key) keepText(key, text, oneByteText(bytes.subarray(0, length), text));
    return text;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
    if (named !== undefined) closeSync(named);
  }
}
