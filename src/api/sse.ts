// Server-Sent Events answers (batch progress, operation states): the route
// hands `stream` a body that sends events until it returns, the client leaves,
// or the api stops. Streams are hijacked replies, which Fastify's close does
// not end: the api's OpenStreams ends them itself before the server closes, or
// one client following a long operation would keep the process alive.
//
// A stream also ends when its client left while the route was setting it up
// (so its slot is given back), when its client stops reading (MAX_UNSENT_BYTES),
// and when its token is revoked or expires (asked again each keep-alive).
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CODES } from '../core/platform/index.js';
import { ProblemError } from './problems.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The api's open event streams (serveEventStreams). */
    eventStreams: OpenStreams;
  }
}

export type SendEvent = (event: string, data: unknown) => void;

/** Event data already serialized as JSON (stored outcomes): sent as it is, not stringified again. */
export class JsonText {
  constructor(readonly text: string) {}
}

/** Whether the request that opened a stream may still have it (its token not revoked nor expired). */
export type StillAllowed = (request: FastifyRequest) => Promise<boolean>;

/**
 * The most data a stream may have waiting for its client before the api drops
 * the connection. A client that stops reading would otherwise make the api
 * buffer every event it is sent without limit (a batch's `outcomes` carry
 * whole results, up to 1 MiB each); one that keeps up never holds near this
 * much. A dropped client connects again and reads the state afresh (the first
 * event of a stream is the state then).
 */
export const MAX_UNSENT_BYTES = 4 * 1024 * 1024;

/** Past this much unsent data a body that awaits `drained` waits for the client before it sends more. */
export const DRAINED_BYTES = 1024 * 1024;
/** How long `drained` waits at most: a client slower than that fills MAX_UNSENT_BYTES and is cut off. */
const DRAIN_PATIENCE_MS = 250;

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

  /**
   * `keepAliveMs`: how often each stream sends a `: keep-alive` comment, and
   * asks `stillAllowed` whether its request's token is still valid.
   */
  constructor(
    readonly keepAliveMs: number,
    readonly stillAllowed: StillAllowed = async () => true,
  ) {}

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
export function serveEventStreams(
  app: FastifyInstance,
  options: { keepAliveMs: number; stillAllowed?: StillAllowed },
): OpenStreams {
  const streams = new OpenStreams(options.keepAliveMs, options.stillAllowed);
  app.decorate('eventStreams', streams);
  app.addHook('preClose', () => streams.closeAll());
  return streams;
}

/** A Server-Sent Events response; ends when `body` returns, the client goes away, or the api stops. */
export async function stream(
  request: FastifyRequest,
  reply: FastifyReply,
  body: (send: SendEvent, signal: AbortSignal, drained: () => Promise<void>) => Promise<void>,
): Promise<void> {
  const streams = request.server.eventStreams;
  // A request that was under way when the stop began.
  if (streams.closing)
    throw ProblemError.of(ERROR_CODES.UNAVAILABLE, 'the api is stopping; connect again shortly');
  reply.hijack();
  const raw = reply.raw;
  // Hijacked: the security headers are those helmet set on the raw response (server.ts).
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    connection: 'keep-alive',
  });
  let open = true;
  const gone = new AbortController();
  const end = (discardUnsent = false) => {
    if (!open) return;
    open = false;
    clearInterval(keepAlive);
    gone.abort();
    // A client that does not read would hold the unsent data (and the socket) as long as it likes.
    if (discardUnsent) raw.destroy();
    else raw.end();
  };
  const backedUp = () => raw.writableLength > MAX_UNSENT_BYTES;
  let checking = false;
  const recheckToken = async () => {
    if (checking) return;
    checking = true;
    try {
      // Ended cleanly: the client connects again and is refused (401).
      if (!(await streams.stillAllowed(request))) end();
    } catch {
      // Redis unreachable: keep the stream (it hears nothing new either); the next tick asks again.
    } finally {
      checking = false;
    }
  };
  // A comment line: clients skip it, but it keeps an idle body from being dropped.
  const keepAlive = setInterval(() => {
    if (!open) return;
    if (backedUp()) return end(true);
    raw.write(': keep-alive\n\n');
    void recheckToken();
  }, streams.keepAliveMs);
  raw.on('close', () => end());
  // The route awaited (the token check, a stream slot, the record) before this: a
  // client that left meanwhile fired 'close' already, and it does not fire again.
  const socket = request.raw.socket as Socket | null;
  if (raw.destroyed || !socket || socket.destroyed) end();
  // A body with much to send (a batch's outcomes) waits, briefly, for the client to take what it
  // was sent: a client that keeps up costs the api about DRAINED_BYTES, not a burst of results;
  // one that does not is cut off at MAX_UNSENT_BYTES as before.
  const drained = async () => {
    if (!open || raw.writableLength <= DRAINED_BYTES) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        raw.off('drain', done);
        gone.signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, DRAIN_PATIENCE_MS);
      raw.once('drain', done);
      gone.signal.addEventListener('abort', done, { once: true });
    });
  };
  let finished = () => {};
  streams.add({ end: () => end(), finished: new Promise<void>((resolve) => (finished = resolve)) });
  try {
    if (open)
      await body(
        (event, data) => {
          if (!open) throw new Error('stream ended');
          if (backedUp()) {
            end(true);
            throw new Error('stream ended: the client does not read');
          }
          const json = data instanceof JsonText ? data.text : JSON.stringify(data);
          raw.write(`event: ${event}\ndata: ${json}\n\n`);
        },
        gone.signal,
        drained,
      );
  } catch {
    // the client went away or stopped reading, the api stops, or the record vanished: just end the stream
  } finally {
    end();
    finished();
  }
}
