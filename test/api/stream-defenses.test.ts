// Event streams against clients that misbehave or lose their rights
// (HTTP-API.md "Event streams"), each against a real api process over raw TCP
// or fetch: a client that leaves while its stream is being set up gives its
// slot back; a client that stops reading is cut off once the api holds a
// bounded amount of unsent data for it; and a token revoked while its stream
// is open loses the stream within a keep-alive interval or two.
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysFor } from '../../src/core/redis/keys.js';
import { makeProject } from '../support/data-dir.js';
import { waitFor } from '../support/wait.js';
import {
  call,
  setUpApi,
  startApi,
  type Api,
  type ApiSetup,
  trustEnableAndScan,
  queueEchoOperation,
  startShopBatch,
} from './support.js';

let setup: ApiSetup | undefined;
let redis: Redis | undefined;
let admin = '';

beforeAll(async () => {
  setup = await setUpApi('api-stream-defenses', async (root) => {
    await makeProject(join(root, 'projects'), 'shop', ['package.json']);
  });
  redis = new Redis(setup.redis.url, { maxRetriesPerRequest: 1 });
  admin = setup.api.adminToken;
  await trustEnableAndScan(setup);
}, 60_000);

afterAll(async () => {
  await redis?.quit();
  await setup?.close();
});

async function viewerToken(name: string): Promise<{ id: string; token: string }> {
  const made = await call<{ id: string; token: string }>(setup!.api, 'POST', '/api/v1/tokens', {
    token: admin,
    body: { name, role: 'viewer' },
  });
  expect(made.status, made.text).toBe(201);
  return made.json;
}

const queuedOperation = () => queueEchoOperation(setup!.api, admin);

const runningBatch = () => startShopBatch(setup!.api, admin);

function streamRequest(api: Api, path: string, token: string): string {
  return `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${api.port}\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`;
}

function connected(api: Api): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(api.port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('a client that leaves while its stream is set up', () => {
  it('gives its slot back: the token opens a stream again at once', async () => {
    const api = await startApi(setup!.installation, [], { SWITCHYARD_API_STREAMS_PER_TOKEN: '4' });
    const viewer = await viewerToken('leaver');
    const path = `/api/v1/operations/${await queuedOperation()}/events`;
    // Each client sends its request and vanishes before the api checked its token.
    for (let index = 0; index < 8; index++) {
      const socket = await connected(api);
      socket.write(streamRequest(api, path, viewer.token));
      socket.destroy();
    }
    // Let the api take up every one of them (a stream asked for at once would overtake them).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    let last = 0;
    await waitFor(
      'a stream of the token to be accepted',
      async () => {
        const abort = new AbortController();
        const response = await fetch(`${api.base}${path}`, {
          headers: { authorization: `Bearer ${viewer.token}`, accept: 'text/event-stream' },
          signal: abort.signal,
        });
        last = response.status;
        abort.abort();
        await response.arrayBuffer().catch(() => undefined);
        return last === 200;
      },
      5_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; last answer ${last}`);
    });
  });
});

describe('a client that stops reading', () => {
  it('is cut off once the api holds too much unsent data for it', async () => {
    const api = setup!.api;
    const keys = keysFor(setup!.installation.prefix);
    const batchId = await runningBatch();
    const socket = await connected(api);
    let received = 0;
    const firstEvent = new Promise<void>((resolve) => socket.once('data', () => resolve()));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.on('error', () => {});
    socket.write(streamRequest(api, `/api/v1/batches/${batchId}/events`, admin));
    await firstEvent;
    socket.pause();
    try {
      // What a worker does when it records an outcome: the result, then the message
      // the stream follows; each is sent to the stream as an `outcomes` event.
      const big = 'x'.repeat(500_000);
      const count = 80;
      for (let index = 0; index < count; index++) {
        const projectId = `p${index}`;
        const outcome = {
          projectId,
          status: 'succeeded',
          result: { facts: [{ id: 'f', label: 'l', value: big }] },
        };
        await redis!.hset(keys.batchResults(batchId), projectId, JSON.stringify(outcome));
        const progress = { projectId, status: 'succeeded', succeeded: 0, failed: 0, cancelled: 0, total: 1 };
        await redis!.publish(keys.batchEvents(batchId), JSON.stringify({ ...progress, finished: false }));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      // The api waits up to 250 ms per outcome for a slow client to drain (sse.ts), so one that
      // does not read for 3 s has passed MAX_UNSENT_BYTES by then.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      socket.resume();
      const outcome = await Promise.race([
        closed.then(() => 'closed'),
        new Promise((resolve) => setTimeout(() => resolve('still open'), 10_000)),
      ]);
      expect(outcome).toBe('closed');
      // Far from all 40 MB reached the client: the api dropped the stream instead of buffering it.
      expect(received).toBeLessThan((count * big.length) / 2);
    } finally {
      socket.destroy();
    }
  });
});

describe('a token revoked while its stream is open', () => {
  it('loses the stream within two keep-alive intervals', async () => {
    const api = await startApi(setup!.installation, [], { SWITCHYARD_API_STREAM_KEEPALIVE_MS: '300' });
    const viewer = await viewerToken('revoked-watcher');
    const path = `/api/v1/operations/${await queuedOperation()}/events`;
    const abort = new AbortController();
    const response = await fetch(`${api.base}${path}`, {
      headers: { authorization: `Bearer ${viewer.token}`, accept: 'text/event-stream' },
      signal: abort.signal,
    });
    expect(response.status).toBe(200);
    let text = '';
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    const ending = (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return 'ended';
          text += decoder.decode(value, { stream: true });
        }
      } catch (error) {
        return `failed: ${(error as Error).message}`;
      }
    })();
    try {
      // Still served while the token is valid: keep-alive comments come and the stream stays.
      await waitFor('two keep-alive comments', async () => text.split(': keep-alive').length > 2, 5_000);
      const revoked = await call(api, 'DELETE', `/api/v1/tokens/${viewer.id}`, { token: admin });
      expect(revoked.status, revoked.text).toBe(200);
      const revokedAt = Date.now();
      const outcome = await Promise.race([
        ending,
        new Promise((resolve) => setTimeout(() => resolve('still open'), 3_000)),
      ]);
      expect(outcome).toBe('ended');
      expect(Date.now() - revokedAt).toBeLessThan(2 * 300 + 500);
      expect(text).not.toContain('event: done');
      // Connecting again is refused: the token is gone.
      expect((await call(api, 'GET', path, { token: viewer.token })).status).toBe(401);
    } finally {
      abort.abort();
    }
  });
});
