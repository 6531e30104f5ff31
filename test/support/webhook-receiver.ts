// A real HTTP receiver of webhooks on 127.0.0.1 for the tests that check what
// was delivered: every request's event, delivery id, signature and raw body,
// in the order they came; `answer` decides each request's fate (default 200).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  event: string;
  delivery: string;
  signature: string;
  raw: string;
  body: { event: string; deliveryId: string; data: Record<string, unknown> };
}

export interface Receiver {
  url: string;
  received: Received[];
  server: Server;
}

const servers: Server[] = [];

export async function startReceiver(
  answer: (request: Received, index: number, response: ServerResponse) => void = (_r, _i, response) =>
    response.writeHead(200).end('ok'),
): Promise<Receiver> {
  const received: Received[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const entry: Received = {
        event: String(request.headers['x-switchyard-event']),
        delivery: String(request.headers['x-switchyard-delivery']),
        signature: String(request.headers['x-switchyard-signature-256']),
        raw,
        body: JSON.parse(raw) as Received['body'],
      };
      received.push(entry);
      answer(entry, received.length - 1, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, server };
}

/** Closes every receiver started so far (afterEach). */
export async function closeReceivers(): Promise<void> {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}
