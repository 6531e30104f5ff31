// A call's stderr as it runs (CLI.md `plugin logs --follow`, `op logs`): split
// into lines, redacted, bounded, and handed to a sink in batches, so a plugin
// that floods stderr costs a few Redis writes per second, not one per line.
// The per-call tail kept for the error (stderr-tail.ts) is separate.
import { StringDecoder } from 'node:string_decoder';
import { redact } from '../safety/index.js';
import { STDERR_LINE_CHARS, STDERR_LINES } from './stderr-tail.js';

/** Receives one batch of redacted lines; a failure only loses that batch. */
export type StderrSink = (lines: string[]) => Promise<void>;

export interface LiveStderrOptions {
  /** How long lines wait to be written together. */
  flushMs?: number;
  /** At most this many lines per batch; older ones of a flood are counted, not written. */
  maxLinesPerFlush?: number;
}

/** A line longer than this is cut before redaction (its tail cannot hold a whole secret worth keeping). */
const MAX_RAW_LINE_CHARS = 4 * STDERR_LINE_CHARS;
const PEM_BEGIN = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;
const PEM_END = /-----END [A-Z0-9 ]*PRIVATE KEY-----/;

export class LiveStderr {
  readonly #decoder = new StringDecoder('utf8');
  readonly #flushMs: number;
  readonly #maxLines: number;
  #partial = '';
  #partialCut = false;
  #pending: string[] = [];
  #dropped = 0;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(
    private readonly sink: StderrSink,
    options: LiveStderrOptions = {},
  ) {
    this.#flushMs = options.flushMs ?? 500;
    this.#maxLines = options.maxLinesPerFlush ?? STDERR_LINES;
  }

  push(chunk: Buffer): void {
    if (this.#closed) return;
    chunk = this.#skipFlood(chunk);
    const parts = this.#decoder.write(chunk).split('\n');
    const last = parts.pop()!;
    for (const part of parts) {
      this.#take(this.#partial + part);
      this.#partial = '';
      this.#partialCut = false;
    }
    this.#appendPartial(last);
    if (this.#pending.length > 0 && !this.#timer) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#flush(false);
      }, this.#flushMs);
    }
  }

  /** Writes what is left (an unterminated last line too); resolves when every batch was handed over. */
  async close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      clearTimeout(this.#timer);
      this.#appendPartial(this.#decoder.end());
      if (this.#partial !== '') this.#take(this.#partial);
      this.#partial = '';
      this.#flush(true);
    }
    await this.#writing;
  }

  /**
   * A chunk holding more lines than two batches: only its newest lines can be
   * written, so the rest (and anything older not yet written) is dropped
   * unread. Keeps a flood cheap; the cut is at a newline, a safe UTF-8 boundary.
   */
  #skipFlood(chunk: Buffer): Buffer {
    let cut = chunk.length;
    for (let seen = 0; seen <= 2 * this.#maxLines; seen += 1) {
      cut = cut > 0 ? chunk.lastIndexOf(0x0a, cut - 1) : -1;
      if (cut === -1) return chunk;
    }
    this.#dropped += this.#pending.length + 1 + countNewlines(chunk, cut);
    this.#pending = [];
    this.#partial = '';
    this.#partialCut = false;
    this.#decoder.end();
    let kept = chunk.subarray(cut + 1);
    // The end of a key block whose beginning was dropped: its lines go too.
    const text = kept.toString('latin1');
    const end = text.search(PEM_END);
    const begin = text.search(PEM_BEGIN);
    if (end !== -1 && (begin === -1 || end < begin)) {
      const lineEnd = text.indexOf('\n', end);
      kept = lineEnd === -1 ? kept.subarray(kept.length) : kept.subarray(lineEnd + 1);
    }
    return kept;
  }

  #appendPartial(text: string): void {
    if (this.#partialCut) return;
    this.#partial += text;
    if (this.#partial.length > MAX_RAW_LINE_CHARS) {
      this.#partial = `${this.#partial.slice(0, MAX_RAW_LINE_CHARS)}…`;
      this.#partialCut = true;
    }
  }

  #take(line: string): void {
    this.#pending.push(line.endsWith('\r') ? line.slice(0, -1) : line);
    // A flood: keep only what one batch may hold (plus an unterminated key block).
    const excess = this.#pending.length - 2 * this.#maxLines;
    if (excess > 0 && !endsInKeyBlock(this.#pending)) {
      this.#pending.splice(0, excess);
      this.#dropped += excess;
    }
  }

  #flush(final: boolean): void {
    let lines = this.#pending;
    this.#pending = [];
    if (!final) {
      // Hold back an unterminated private key block until its end arrives.
      const begin = lines.findLastIndex((line) => PEM_BEGIN.test(line));
      if (begin !== -1 && !lines.slice(begin).some((line) => PEM_END.test(line))) {
        const held = lines.slice(begin);
        lines = lines.slice(0, begin);
        if (held.length <= STDERR_LINES) this.#pending = held;
        else lines.push('[REDACTED]');
      }
    } else if (endsInKeyBlock(lines)) {
      // The call ended inside a key block: none of it is shown.
      const begin = lines.findLastIndex((line) => PEM_BEGIN.test(line));
      lines = [...lines.slice(0, begin), '[REDACTED]'];
    }
    if (lines.length === 0 && this.#dropped === 0) return;
    // Redacted as one text: a PEM block spans lines.
    let clean = redact(lines.join('\n'))
      .split('\n')
      .map((line) => (line.length <= STDERR_LINE_CHARS ? line : `${line.slice(0, STDERR_LINE_CHARS - 1)}…`));
    if (lines.length === 0) clean = [];
    let dropped = this.#dropped;
    if (clean.length > this.#maxLines) {
      dropped += clean.length - this.#maxLines;
      clean = clean.slice(-this.#maxLines);
    }
    this.#dropped = 0;
    if (dropped > 0) clean.unshift(`[${dropped} lines of stderr dropped]`);
    const batch = clean;
    this.#writing = this.#writing.then(() => this.sink(batch).catch(() => {}));
    if (!final && this.#pending.length > 0 && !this.#timer) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#flush(false);
      }, this.#flushMs);
    }
  }
}

/** Whether a private key block has begun and not yet ended: it must be redacted as a whole. */
function endsInKeyBlock(lines: string[]): boolean {
  let open = false;
  for (const line of lines) {
    if (PEM_BEGIN.test(line)) open = true;
    if (PEM_END.test(line)) open = false;
  }
  return open;
}

function countNewlines(buffer: Buffer, before: number): number {
  let count = 0;
  for (let at = buffer.indexOf(0x0a); at !== -1 && at < before; at = buffer.indexOf(0x0a, at + 1)) count += 1;
  return count;
}
