// Newline-delimited JSON on a byte stream (the host link between worker threads and the
// coordinator, host-link.ts): chunks in, whole lines out. JSON text never holds a raw newline, so
// a newline always ends a frame. A line may arrive in many chunks and a chunk may hold many
// lines; a line longer than `maxLineBytes` is refused instead of growing the buffer without end.
// A frame may announce raw bytes that follow it (`expect`): long strings cross as UTF-8, never
// JSON-escaped and parsed (a call's long context_vars, host-link.ts).

export class LineReader {
  #maxLineBytes: number;
  readonly #onLine: (line: string) => void;
  #parts: Buffer[] = [];
  #partBytes = 0;
  /** Raw bytes still owed to the frame that announced them, and where they go. */
  #raw: { left: number; parts: Buffer[]; done: (bytes: Buffer) => void } | undefined;

  constructor(maxLineBytes: number, onLine: (line: string) => void) {
    this.#maxLineBytes = maxLineBytes;
    this.#onLine = onLine;
  }

  /**
   * Changes the bound from the next line on, even in the middle of a chunk (the host link keeps
   * it small until a connection has named its process: host-link-server.ts).
   */
  setLimit(maxLineBytes: number): void {
    this.#maxLineBytes = maxLineBytes;
  }

  /**
   * Called from the line callback: the next `bytes` bytes are not lines but that frame's raw part,
   * given whole to `done`. False (nothing expected) when it is over the line limit.
   */
  expect(bytes: number, done: (bytes: Buffer) => void): boolean {
    if (!Number.isSafeInteger(bytes) || bytes < 0 || bytes > this.#maxLineBytes) return false;
    this.#raw = { left: bytes, parts: [], done };
    return true;
  }

  /** Feeds a chunk; false when a line is over the limit (the stream should be closed). */
  push(chunk: Buffer): boolean {
    let start = 0;
    for (;;) {
      start = this.#takeRaw(chunk, start);
      if (this.#raw) return true;
      const nl = chunk.indexOf(10, start);
      if (nl < 0) break;
      const piece = chunk.subarray(start, nl);
      if (this.#partBytes + piece.length > this.#maxLineBytes) return false;
      const line = this.#parts.length === 0 ? piece.toString('utf8') : Buffer.concat([...this.#parts, piece]).toString('utf8');
      this.#parts = [];
      this.#partBytes = 0;
      start = nl + 1;
      if (line.length > 0) this.#onLine(line);
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.#partBytes += rest.length;
      if (this.#partBytes > this.#maxLineBytes) return false;
      this.#parts.push(rest);
    }
    return true;
  }

  /** Takes what the chunk holds of an expected raw part from `start`; where lines resume. */
  #takeRaw(chunk: Buffer, start: number): number {
    const raw = this.#raw;
    if (!raw) return start;
    const n = Math.min(raw.left, chunk.length - start);
    raw.parts.push(chunk.subarray(start, start + n));
    raw.left -= n;
    if (raw.left === 0) {
      this.#raw = undefined;
      raw.done(raw.parts.length === 1 ? (raw.parts[0] as Buffer) : Buffer.concat(raw.parts));
    }
    return start + n;
  }
}
