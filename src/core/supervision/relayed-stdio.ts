// A call's stdio as the spawn helper relays it: the events a stream gives its
// reader, without a Node stream per call. Two Readables and a Writable per
// call were among the largest shares of a worker's CPU per call
// (docs/benchmarks/runs.md, seventh run); these are plain emitters with the same order
// of events: 'data' chunks, then 'end' and 'close' once.
import { EventEmitter } from 'node:events';

/** What a call's output gives its reader (a Readable fits too). */
export interface CallOutput {
  on(event: 'data', listener: (chunk: Buffer) => void): this;
  on(event: 'end' | 'close', listener: () => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  once(event: 'end' | 'close', listener: () => void): this;
  /** Whether 'end' was emitted. */
  readonly readableEnded: boolean;
  /** The reader is done with it: nothing more is delivered. */
  destroy(): void;
}

/** What a call's input takes (a Writable fits too). */
export interface CallInput {
  write(chunk: string | Buffer): unknown;
  /** No more input: the plugin's stdin is closed. */
  end(): unknown;
  on(event: 'error', listener: (error: Error) => void): this;
  destroy(): void;
}

/**
 * Output relayed from the helper. What arrives before the first 'data'
 * listener is held for it, the end too, as a paused Readable would hold it.
 */
export class RelayedOutput extends EventEmitter implements CallOutput {
  #held: Buffer[] | undefined = [];
  #ended = false;
  #destroyed = false;
  readableEnded = false;

  override on(event: string | symbol, listener: Parameters<EventEmitter['on']>[1]): this {
    super.on(event, listener);
    // Handed over after this tick's code: a listener added right after another sees the same chunks.
    if (event === 'data' && this.#held && this.listenerCount('data') === 1) queueMicrotask(this.#release);
    return this;
  }

  push(chunk: Buffer): void {
    if (this.#ended || this.#destroyed) return;
    if (this.#held) this.#held.push(chunk);
    else this.emit('data', chunk);
  }

  /** The plugin closed it (idempotent). */
  end(): void {
    if (this.#ended || this.#destroyed) return;
    this.#ended = true;
    if (!this.#held) this.#emitEnd();
  }

  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#held = undefined;
    this.emit('close');
  }

  readonly #release = (): void => {
    const held = this.#held;
    if (!held) return;
    this.#held = undefined;
    for (const chunk of held) if (!this.#destroyed) this.emit('data', chunk);
    if (this.#ended) this.#emitEnd();
  };

  #emitEnd(): void {
    if (this.#destroyed) return;
    this.#destroyed = true; // 'close' once, never again on destroy()
    this.readableEnded = true;
    this.emit('end');
    this.emit('close');
  }
}

/** Input relayed to the helper: each write is handed on as it comes; after end or destroy, nothing is. */
export class RelayedInput extends EventEmitter implements CallInput {
  #open = true;

  constructor(
    private readonly onWrite: (chunk: Buffer) => void,
    private readonly onEnd: () => void,
  ) {
    super();
  }

  write(chunk: string | Buffer): boolean {
    if (this.#open) this.onWrite(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
    return true;
  }

  end(): void {
    if (!this.#open) return;
    this.#open = false;
    this.onEnd();
  }

  destroy(): void {
    this.#open = false;
  }
}
