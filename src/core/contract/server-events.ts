// The one Server-Sent Events reader: the CLI's remote waits, the web UI (a
// browser bundle of this file, scripts/copy-assets.mjs) and the tests read
// event streams with it. eventsource-parser does the WHATWG parsing; the
// bound keeps a broken or hostile server from filling the reader's memory
// with a line or an event that never ends. No Node or browser API is used.
import { createParser, type ParseError } from 'eventsource-parser';

export interface ServerEvent {
  event: string;
  data: string;
}

/**
 * The most text one event may hold (its unfinished line, or its data lines
 * together), in characters. Every event the api sends is one JSON line (a
 * finished batch's `done` carries its results); this is far above that.
 */
export const MAX_EVENT_CHARS = 8 * 1024 * 1024;

export interface ServerEventOptions {
  /** The bound (default MAX_EVENT_CHARS). */
  maxChars?: number;
  /** The error thrown past the bound (default: an Error saying so). */
  tooLarge?: (maxChars: number) => Error;
}

/**
 * The events of a text/event-stream body given as text chunks split
 * anywhere (comments, `id` and `retry` ignored; an event without a name is
 * `message`; an unfinished last event is dropped).
 */
export async function* serverEvents(
  chunks: AsyncIterable<string>,
  options: ServerEventOptions = {},
): AsyncGenerator<ServerEvent> {
  const maxChars = options.maxChars ?? MAX_EVENT_CHARS;
  const ready: ServerEvent[] = [];
  let overflow = false;
  const parser = createParser({
    maxBufferSize: maxChars,
    onEvent: ({ event, data }) => ready.push({ event: event ?? 'message', data }),
    onError: (error: ParseError) => {
      if (error.type === 'max-buffer-size-exceeded') overflow = true;
      // Unknown fields and a malformed `retry` are ignored, as the format says.
    },
  });
  for await (const chunk of chunks) {
    parser.feed(chunk);
    while (ready.length > 0) yield ready.shift()!;
    if (overflow) throw (options.tooLarge ?? defaultTooLarge)(maxChars);
  }
}

const defaultTooLarge = (maxChars: number) =>
  new Error(`the server sent an event longer than ${maxChars} characters; stopped reading it`);

/** The text chunks of a fetch() body, UTF-8 sequences split across network chunks joined again. */
export async function* textChunks(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const read = await reader.read();
      if (read.done) break;
      const text = decoder.decode(read.value, { stream: true });
      if (text) yield text;
    }
    const rest = decoder.decode();
    if (rest) yield rest;
  } finally {
    await reader.cancel().catch(() => {});
  }
}
