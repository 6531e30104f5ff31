// Bounded per-call stderr (docs/PROTOCOL.md §9.6): only the last 64 KiB is held,
// and what is kept is the last 200 lines of at most 2,048 characters, redacted.
import { redact } from '../safety/index.js';

export const STDERR_BYTES = 64 * 1024;
export const STDERR_LINES = 200;
export const STDERR_LINE_CHARS = 2_048;

export class StderrTail {
  #chunks: Buffer[] = [];
  #size = 0;
  #dropped = 0;

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    while (this.#size - (this.#chunks[0]?.length ?? 0) >= STDERR_BYTES && this.#chunks.length > 1) {
      const first = this.#chunks.shift()!;
      this.#size -= first.length;
      this.#dropped += first.length;
    }
    if (this.#size > STDERR_BYTES * 2) {
      // One huge chunk: keep only its tail.
      const all = Buffer.concat(this.#chunks);
      const keep = all.subarray(all.length - STDERR_BYTES);
      this.#dropped += all.length - keep.length;
      this.#chunks = [Buffer.from(keep)];
      this.#size = keep.length;
    }
  }

  /** Bytes that were discarded because the limit was reached. */
  get droppedBytes(): number {
    return this.#dropped;
  }

  lines(): string[] {
    if (this.#size === 0) return [];
    let bytes = Buffer.concat(this.#chunks);
    let dropped = this.#dropped;
    if (bytes.length > STDERR_BYTES) {
      dropped += bytes.length - STDERR_BYTES;
      bytes = bytes.subarray(bytes.length - STDERR_BYTES);
    }
    if (dropped > 0) {
      // The first kept line is a fragment; a fragment can hide a secret's key
      // (`…word=hunter2`), so it is discarded rather than shown.
      const newline = bytes.indexOf(0x0a);
      const cut = newline === -1 ? bytes.length : newline + 1;
      dropped += cut;
      bytes = bytes.subarray(cut);
    }
    // Redacted as one text, not line by line: a PEM private key block spans lines.
    const lines = redact(bytes.toString('utf8')).split('\n');
    if (lines.at(-1) === '') lines.pop();
    const kept = lines
      .slice(-STDERR_LINES)
      .map((line) => (line.length <= STDERR_LINE_CHARS ? line : `${line.slice(0, STDERR_LINE_CHARS - 1)}…`));
    if (dropped > 0) kept.unshift(`[${dropped} earlier bytes of stderr dropped]`);
    return kept.slice(-STDERR_LINES);
  }
}
