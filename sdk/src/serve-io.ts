// How serve() reads requests and writes responses: Node streams, or the
// process's own stdin/stdout file descriptors.
import type { Readable, Writable } from 'node:stream';

export interface ServeStreams {
  input: Readable;
  output: Writable;
}

export interface LineIo {
  /** The next chunk of input; null at its end. */
  read(): Promise<Buffer | null>;
  write(text: string): Promise<void>;
}

/** Node streams (tests, embedding): 'data' events with pause/resume, so input waits for us. */
export function streamIo({ input, output }: ServeStreams): LineIo {
  const queue: (Buffer | null | Error)[] = [];
  let wake: (() => void) | undefined;
  const push = (item: Buffer | null | Error) => {
    queue.push(item);
    wake?.();
  };
  input.on('data', (chunk: Buffer | string) => {
    input.pause();
    push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  });
  input.once('end', () => push(null));
  input.once('error', (error) => push(error));
  return {
    async read() {
      while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      const item = queue.shift()!;
      if (item instanceof Error) throw item;
      if (item !== null) input.resume();
      return item;
    },
    write: (text) =>
      new Promise<void>((resolve, reject) => {
        output.write(text, (error) => (error ? reject(error) : resolve()));
      }),
  };
}

/**
 * The real stdin/stdout of a plugin process, read and written on the file
 * descriptors directly: constructing process.stdin and process.stdout costs
 * several milliseconds of every call's start-up (bench/cold-start).
 */
export function fdIo(): LineIo {
  const fs = process.getBuiltinModule('node:fs') as typeof import('node:fs');
  const buffer = Buffer.allocUnsafe(64 * 1024);
  const retry = <T>(operation: (done: (error: NodeJS.ErrnoException | null, value: T) => void) => void) =>
    new Promise<T>((resolve, reject) => {
      const attempt = () =>
        operation((error, value) => {
          // A non-blocking descriptor inherited from the host: wait a moment, try again.
          if (error?.code === 'EAGAIN') setTimeout(attempt, 1);
          else if (error) reject(error);
          else resolve(value);
        });
      attempt();
    });
  return {
    async read() {
      const bytes = await retry<number>((done) => fs.read(0, buffer, 0, buffer.length, null, done));
      // The splitter copies what it keeps, so the buffer can be reused.
      return bytes === 0 ? null : buffer.subarray(0, bytes);
    },
    async write(text) {
      let data = Buffer.from(text);
      while (data.length > 0) {
        const written = await retry<number>((done) => fs.write(1, data, 0, data.length, null, done));
        data = data.subarray(written);
      }
    },
  };
}
