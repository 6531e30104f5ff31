// Server-Sent Events answers (batch progress, operation states): the route
// hands `stream` a body that sends events until it returns or the client leaves.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CSP } from './security-headers.js';

export type SendEvent = (event: string, data: unknown) => void;

/** A Server-Sent Events response; ends when `body` returns or the client goes away. */
export async function stream(
  _request: FastifyRequest,
  reply: FastifyReply,
  body: (send: SendEvent, signal: AbortSignal) => Promise<void>,
): Promise<void> {
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
  raw.on('close', () => {
    open = false;
    gone.abort();
  });
  const send = (event: string, data: unknown) => {
    if (open) raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  try {
    await body((event, data) => {
      if (!open) throw new Error('client gone');
      send(event, data);
    }, gone.signal);
  } catch {
    // the client went away, or the record vanished: just end the stream
  } finally {
    raw.end();
  }
}
