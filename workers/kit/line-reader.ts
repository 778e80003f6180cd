// Newline-delimited JSON on a byte stream (the host link between worker threads and the
// coordinator, host-link.ts): chunks in, whole lines out. JSON text never holds a raw newline, so
// a newline always ends a frame. A line may arrive in many chunks and a chunk may hold many
// lines; a line longer than `maxLineBytes` is refused instead of growing the buffer without end.

export class LineReader {
  #maxLineBytes: number;
  readonly #onLine: (line: string) => void;
  #parts: Buffer[] = [];
  #partBytes = 0;

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

  /** Feeds a chunk; false when a line is over the limit (the stream should be closed). */
  push(chunk: Buffer): boolean {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
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
}
