// Server-Sent Events answers (batch progress, operation states): the route
// hands `stream` a body that sends events until it returns, the client leaves,
// or the api stops. Streams are hijacked replies, which Fastify's close does
// not end: the api's OpenStreams ends them itself before the server closes, or
// one client following a long operation would keep the process alive.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ProblemError } from './problems.js';
import { CSP } from './security-headers.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The api's open event streams (serveEventStreams). */
    eventStreams: OpenStreams;
  }
}

export type SendEvent = (event: string, data: unknown) => void;

interface OpenStream {
  /** Ends the stream: its body's signal aborts, its response ends. */
  end(): void;
  /** Settles once its body returned. */
  finished: Promise<void>;
}

/** Every event stream an api holds open, and how they are sent. */
export class OpenStreams {
  readonly #open = new Set<OpenStream>();
  #closing = false;

  /** `keepAliveMs`: how often each stream sends a `: keep-alive` comment. */
  constructor(readonly keepAliveMs: number) {}

  get closing(): boolean {
    return this.#closing;
  }

  /** Streams open now. */
  get size(): number {
    return this.#open.size;
  }

  /** Holds `stream` until its body returned. */
  add(stream: OpenStream): void {
    this.#open.add(stream);
    void stream.finished.then(() => this.#open.delete(stream));
  }

  /**
   * The api stops: ends every open stream (a client connects again to another
   * api, or to this one restarted) and refuses new ones; resolves once their
   * bodies returned, so no follower outlives the runtime it reads.
   */
  async closeAll(): Promise<void> {
    this.#closing = true;
    const open = [...this.#open];
    for (const stream of open) stream.end();
    await Promise.all(open.map((stream) => stream.finished));
  }
}

/** Gives `app` its OpenStreams, ended when the app closes (before the server waits for its connections). */
export function serveEventStreams(app: FastifyInstance, options: { keepAliveMs: number }): OpenStreams {
  const streams = new OpenStreams(options.keepAliveMs);
  app.decorate('eventStreams', streams);
  app.addHook('preClose', () => streams.closeAll());
  return streams;
}

/** A Server-Sent Events response; ends when `body` returns, the client goes away, or the api stops. */
export async function stream(
  request: FastifyRequest,
  reply: FastifyReply,
  body: (send: SendEvent, signal: AbortSignal) => Promise<void>,
): Promise<void> {
  const streams = request.server.eventStreams;
  // A request that was under way when the stop began.
  if (streams.closing) throw new ProblemError(503, 'the api is stopping; connect again shortly');
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
  });
  let open = true;
  const gone = new AbortController();
  // A comment line: clients skip it, but it keeps an idle body from being dropped.
  const keepAlive = setInterval(() => {
    if (open) raw.write(': keep-alive\n\n');
  }, streams.keepAliveMs);
  const end = () => {
    if (!open) return;
    open = false;
    clearInterval(keepAlive);
    gone.abort();
    raw.end();
  };
  raw.on('close', end);
  let finished = () => {};
  streams.add({ end, finished: new Promise<void>((resolve) => (finished = resolve)) });
  try {
    await body((event, data) => {
      if (!open) throw new Error('stream ended');
      raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    }, gone.signal);
  } catch {
    // the client went away, the api stops, or the record vanished: just end the stream
  } finally {
    end();
    finished();
  }
}
