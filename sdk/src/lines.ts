// Newline framing with a hard cap: a line longer than the limit is reported
// as oversized and skipped up to its newline, never held in memory beyond the
// limit. Both serve() and PluginClient read through this.
import { MAX_MESSAGE_BYTES } from './constants.js';

export type LineEvent = { kind: 'line'; bytes: Buffer } | { kind: 'oversized' };

const NEWLINE = 0x0a;

export class LineSplitter {
  readonly #limit: number;
  #parts: Buffer[] = [];
  #size = 0;
  /** Inside a line that already exceeded the limit: drop bytes until its newline. */
  #skipping = false;

  constructor(limit = MAX_MESSAGE_BYTES) {
    this.#limit = limit;
  }

  /** Bytes of the current, unfinished line held in memory (never more than the limit). */
  get buffered(): number {
    return this.#size;
  }

  push(chunk: Buffer): LineEvent[] {
    const events: LineEvent[] = [];
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      this.#take(chunk.subarray(start, end), events);
      if (newline === -1) break;
      this.#finishLine(events);
      start = newline + 1;
    }
    return events;
  }

  /** End of stream: an unterminated last line still counts as a line. */
  end(): LineEvent[] {
    const events: LineEvent[] = [];
    if (this.#size > 0) this.#finishLine(events);
    this.#skipping = false;
    return events;
  }

  #take(piece: Buffer, events: LineEvent[]): void {
    if (this.#skipping || piece.length === 0) return;
    if (this.#size + piece.length > this.#limit) {
      this.#parts = [];
      this.#size = 0;
      this.#skipping = true;
      events.push({ kind: 'oversized' });
      return;
    }
    // Copy: the caller's chunk may be a pooled buffer that is reused.
    this.#parts.push(Buffer.from(piece));
    this.#size += piece.length;
  }

  #finishLine(events: LineEvent[]): void {
    if (this.#skipping) {
      this.#skipping = false;
      return;
    }
    const bytes = this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts, this.#size);
    this.#parts = [];
    this.#size = 0;
    events.push({ kind: 'line', bytes });
  }
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Strict UTF-8 decoding; undefined for invalid bytes. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
}
