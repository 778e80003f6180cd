// The memory snapshot's file (snapshot.ts): written atomically, read back only when intact.
//
// Layout (little-endian): the magic 'CEMPYSN2'; the CRC-32 of everything after it; the
// snapshot's length (u64); the number of runs (u32); for each run its offset and length (u64
// each); then the runs' bytes in order. A run is a stretch of 64 KiB pages that are not all
// zeros: about half of a booted interpreter's memory is zeros (freed and never reused), so they
// are not written, and reading back is one read per run straight into the final buffer (no copy
// to align it for Pyodide, which reads it as 32-bit words).
//
// The checksum is there for damage (a partial copy, a disk error), not for tampering: the file
// and its checksum live together in the data directory (mode 0700), so whoever can write one can
// write the other, whatever the hash. CRC-32 detects such damage and costs ~4 ms for the file
// where SHA-256 cost ~20 ms of every interpreter's start. Pyodide itself then checks its own
// magic number and build id inside the snapshot.

import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';

/** Changes with the layout or with what the maker puts in the snapshot (snapshot-maker.ts): part of the key. */
export const SNAPSHOT_FORMAT = 'CEMPYSN2';
const MAGIC = Buffer.from(SNAPSHOT_FORMAT);
const HEADER_BYTES = MAGIC.length + 4 + 8 + 4;
const RUN_BYTES = 16;
const PAGE = 64 * 1024;
/** More runs than a real snapshot has (about ten): a larger count is damage. */
const MAX_RUNS = 1 << 16;
/** A 32-bit WebAssembly memory (4 GiB) and Pyodide's header: a longer snapshot is damage (checked before allocating). */
const MAX_SNAPSHOT_BYTES = 2 ** 32 + 2 ** 24;

interface Run {
  offset: number;
  length: number;
}

/** The stretches of `data` made of pages that are not all zeros. */
export function nonZeroRuns(data: Uint8Array): Run[] {
  const zero = Buffer.alloc(PAGE);
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const runs: Run[] = [];
  for (let offset = 0; offset < bytes.length; offset += PAGE) {
    const page = bytes.subarray(offset, offset + PAGE);
    if (page.equals(zero.subarray(0, page.length))) continue;
    const last = runs[runs.length - 1];
    if (last !== undefined && last.offset + last.length === offset) last.length += page.length;
    else runs.push({ offset, length: page.length });
  }
  return runs;
}

/** Writes the snapshot atomically (a temporary file renamed over), and removes snapshots of other keys. */
export function writeSnapshot(file: string, snapshot: Uint8Array): void {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const body = Buffer.from(snapshot.buffer, snapshot.byteOffset, snapshot.byteLength);
  const runs = nonZeroRuns(body);
  const table = Buffer.alloc(runs.length * RUN_BYTES);
  runs.forEach((run, i) => {
    table.writeBigUInt64LE(BigInt(run.offset), i * RUN_BYTES);
    table.writeBigUInt64LE(BigInt(run.length), i * RUN_BYTES + 8);
  });
  const sizes = Buffer.alloc(12);
  sizes.writeBigUInt64LE(BigInt(body.length), 0);
  sizes.writeUInt32LE(runs.length, 8);
  let sum = crc32(table, crc32(sizes));
  for (const run of runs) sum = crc32(body.subarray(run.offset, run.offset + run.length), sum);
  const checksum = Buffer.alloc(4);
  checksum.writeUInt32LE(sum >>> 0);

  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = fs.openSync(temp, 'wx', 0o600);
  try {
    for (const part of [MAGIC, checksum, sizes, table]) fs.writeSync(fd, part);
    for (const run of runs) fs.writeSync(fd, body, run.offset, run.length);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temp, file);
  for (const name of fs.readdirSync(dir)) {
    if (name.startsWith('pyodide-') && name.endsWith('.snap') && path.join(dir, name) !== file) discardSnapshot(path.join(dir, name));
  }
}

/** The snapshot's bytes, or undefined when there is none or it is not intact (then it is deleted). */
export function readSnapshot(file: string): Uint8Array | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return undefined;
  }
  let snapshot: Uint8Array | undefined;
  try {
    snapshot = readIntact(fd);
  } catch {
    snapshot = undefined;
  } finally {
    fs.closeSync(fd);
  }
  if (snapshot === undefined) discardSnapshot(file);
  return snapshot;
}

function readExactly(fd: number, target: Uint8Array, position: number): boolean {
  for (let done = 0; done < target.length; ) {
    const n = fs.readSync(fd, target, done, target.length - done, position + done);
    if (n === 0) return false;
    done += n;
  }
  return true;
}

function readIntact(fd: number): Uint8Array | undefined {
  const size = fs.fstatSync(fd).size;
  const header = Buffer.alloc(HEADER_BYTES);
  if (size < HEADER_BYTES || !readExactly(fd, header, 0) || !header.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  const expected = header.readUInt32LE(MAGIC.length);
  const sizes = header.subarray(MAGIC.length + 4);
  const length = Number(sizes.readBigUInt64LE(0));
  const count = sizes.readUInt32LE(8);
  if (count > MAX_RUNS || length > MAX_SNAPSHOT_BYTES || HEADER_BYTES + count * RUN_BYTES > size) return undefined;
  const table = Buffer.alloc(count * RUN_BYTES);
  if (!readExactly(fd, table, HEADER_BYTES)) return undefined;
  // Runs in order, inside the snapshot, and exactly filling the rest of the file.
  let position = HEADER_BYTES + table.length;
  let end = 0;
  const runs: Run[] = [];
  for (let i = 0; i < count; i++) {
    const offset = Number(table.readBigUInt64LE(i * RUN_BYTES));
    const runLength = Number(table.readBigUInt64LE(i * RUN_BYTES + 8));
    if (offset < end || runLength === 0 || offset + runLength > length) return undefined;
    end = offset + runLength;
    position += runLength;
    runs.push({ offset, length: runLength });
  }
  if (position !== size || length === 0) return undefined;
  // Zeros wherever no run is: a fresh buffer is zero-filled, and starts aligned.
  const snapshot = new Uint8Array(length);
  let sum = crc32(table, crc32(sizes));
  position = HEADER_BYTES + table.length;
  for (const run of runs) {
    const target = snapshot.subarray(run.offset, run.offset + run.length);
    if (!readExactly(fd, target, position)) return undefined;
    sum = crc32(target, sum);
    position += run.length;
  }
  return sum >>> 0 === expected ? snapshot : undefined;
}

export function discardSnapshot(file: string): void {
  try {
    fs.rmSync(file, { force: true });
  } catch {
    // another process removed or replaced it
  }
}
