// Event streams against a low-role flood (HTTP-API.md "Event streams"): the
// api's streams share one Redis subscriber, so forty open streams add one
// connection, not forty; a token may hold 16 streams open and the next is
// refused with 429 TOO_MANY_STREAMS until one closes; and when the shared
// subscriber is killed the open streams carry on and hear the changes made
// while it was away within 2 s (their safety re-read is 5 s).
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeProject } from '../support/data-dir.js';
import {
  PLUGIN_ID,
  call,
  expectProblem,
  setUpApi,
  waitFor,
  type Api,
  type ApiSetup,
  type SseEvent,
  trustEnableAndScan,
} from './support.js';

const PER_TOKEN = 16;

let setup: ApiSetup | undefined;
let api: Api;
let redis: Redis | undefined;
let operator = '';
const viewers: string[] = [];

beforeAll(async () => {
  setup = await setUpApi('api-streams', async (root) => {
    await makeProject(join(root, 'projects'), 'shop', ['package.json']);
  });
  api = setup.api;
  redis = new Redis(setup.redis.url, { maxRetriesPerRequest: 1 });
  const admin = api.adminToken;
  await trustEnableAndScan(setup);
  const made = async (name: string, role: string) => {
    const token = await call<{ token: string }>(api, 'POST', '/api/v1/tokens', {
      token: admin,
      body: { name, role },
    });
    expect(token.status, token.text).toBe(201);
    return token.json.token;
  };
  operator = await made('ops', 'operator');
  for (const name of ['watcher-1', 'watcher-2', 'watcher-3']) viewers.push(await made(name, 'viewer'));
}, 60_000);

afterAll(async () => {
  await redis?.quit();
  await setup?.close();
});

/** An event stream held open: its events as they come, until close(). */
interface OpenStream {
  status: number;
  /** The answer's body when it is not a stream (a problem document). */
  json: unknown;
  events: SseEvent[];
  /** The first event named `name` (any event without a name), already received or still to come. */
  next(name?: string, timeoutMs?: number): Promise<SseEvent>;
  close(): void;
}

const opened: OpenStream[] = [];

/** Opens a stream and waits for its first event (sent once the follower subscribed and read). */
async function openStream(path: string, token: string): Promise<OpenStream> {
  const abort = new AbortController();
  const response = await fetch(`${api.base}${path}`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    signal: abort.signal,
  });
  const events: SseEvent[] = [];
  const waiters = new Set<() => void>();
  const stream: OpenStream = {
    status: response.status,
    json: undefined,
    events,
    async next(name, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = events.find((event) => name === undefined || event.event === name);
        if (found) return found;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no ${name ?? 'first'} event on ${path} within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            waiters.delete(done);
            resolve();
          };
          const timer = setTimeout(done, left);
          waiters.add(done);
        });
      }
    },
    close: () => abort.abort(),
  };
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    stream.json = JSON.parse(await response.text());
    return stream;
  }
  opened.push(stream);
  void (async () => {
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let boundary: number;
        while ((boundary = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, boundary);
          buffer = buffer.slice(boundary + 2);
          const name = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (data !== undefined) events.push({ event: name, data: JSON.parse(data) });
          for (const wake of [...waiters]) wake();
        }
      }
    } catch {
      // closed by the test
    }
  })();
  await stream.next();
  return stream;
}

function closeAll(): void {
  for (const stream of opened.splice(0)) stream.close();
}

async function clientCount(): Promise<number> {
  return ((await redis!.client('LIST')) as string).trim().split('\n').length;
}

async function pubsubClients(): Promise<string> {
  return ((await redis!.client('LIST', 'TYPE', 'PUBSUB')) as string).trim();
}

async function queuedOperation(): Promise<string> {
  const created = await call<{ id: string }>(api, 'POST', '/api/v1/operations', {
    token: operator,
    body: { pluginId: PLUGIN_ID, projectId: 'shop', action: 'fixture.echo' },
  });
  expect(created.status, created.text).toBe(202);
  return created.json.id;
}

/** No worker runs: the batch stays running until cancelled. */
async function runningBatch(): Promise<string> {
  const created = await call<{ batchId: string }>(api, 'POST', '/api/v1/batches', {
    token: operator,
    body: { pluginId: PLUGIN_ID, projects: ['shop'] },
  });
  expect(created.status, created.text).toBe(202);
  return created.json.batchId;
}

describe('event streams', () => {
  it('forty open streams (batch and operation) add at most two Redis connections', async () => {
    const batchId = await runningBatch();
    const operationId = await queuedOperation();
    // One stream first, so whatever the api opens on first use is in the baseline but the subscriber.
    await openStream(`/api/v1/operations/${operationId}/events`, viewers[0]!);
    closeAll();
    await waitFor('the warm-up subscriber to close', async () => (await pubsubClients()) === '');
    const before = await clientCount();
    try {
      for (let index = 0; index < 40; index++) {
        const path =
          index % 2 === 0 ? `/api/v1/batches/${batchId}/events` : `/api/v1/operations/${operationId}/events`;
        const stream = await openStream(path, viewers[index % viewers.length]!);
        expect(stream.status, JSON.stringify(stream.json)).toBe(200);
      }
      expect(opened).toHaveLength(40);
      expect(await clientCount()).toBeLessThanOrEqual(before + 2);
    } finally {
      closeAll();
    }
  });

  it(`a token's ${PER_TOKEN + 1}th open stream is refused with 429 until one of its streams closes`, async () => {
    const operationId = await queuedOperation();
    const path = `/api/v1/operations/${operationId}/events`;
    try {
      const mine: OpenStream[] = [];
      for (let index = 0; index < PER_TOKEN; index++) mine.push(await openStream(path, viewers[0]!));
      const refused = await call(api, 'GET', path, { token: viewers[0]! });
      const problem = expectProblem(refused, 429) as { code?: string; detail: string };
      expect(problem.code).toBe('TOO_MANY_STREAMS');
      expect(problem.detail).toMatch(new RegExp(`\\(${PER_TOKEN}\\)`));
      expect(problem.detail).toMatch(/close another event stream to free a slot/);
      // The limit is the token's: another token still gets a stream.
      expect((await openStream(path, viewers[1]!)).status).toBe(200);

      mine[0]!.close();
      const again = await waitFor(
        'a slot freed by the closed stream',
        async () => {
          const stream = await openStream(path, viewers[0]!);
          return stream.status === 200 ? stream : undefined;
        },
        5_000,
      );
      expect(again.status).toBe(200);
      expect((await call(api, 'GET', path, { token: viewers[0]! })).status).toBe(429);
    } finally {
      closeAll();
    }
    // Every slot is given back when the streams end.
    await waitFor(
      'the slots to free',
      async () => {
        const stream = await openStream(path, viewers[0]!);
        stream.close();
        return stream.status === 200;
      },
      5_000,
    );

    const doc = await call<{ paths: Record<string, { get: { responses: Record<string, unknown> } }> }>(
      api,
      'GET',
      '/api/v1/openapi.json',
      { token: viewers[0]! },
    );
    for (const route of ['/api/v1/batches/{id}/events', '/api/v1/operations/{id}/events'])
      expect(Object.keys(doc.json.paths[route]!.get.responses)).toContain('429');
  });

  it('streams carry on when the shared subscriber is killed, and hear what changed meanwhile', async () => {
    const batchId = await runningBatch();
    const lostId = await queuedOperation();
    const laterId = await queuedOperation();
    try {
      const batchStream = await openStream(`/api/v1/batches/${batchId}/events`, viewers[0]!);
      const lostStream = await openStream(`/api/v1/operations/${lostId}/events`, viewers[0]!);
      const laterStream = await openStream(`/api/v1/operations/${laterId}/events`, viewers[0]!);
      expect(await redis!.client('KILL', 'TYPE', 'pubsub')).toBeGreaterThanOrEqual(1);
      const killedAt = Date.now();
      const cancelled = await call(api, 'POST', `/api/v1/operations/${lostId}/cancel`, {
        token: operator,
        body: {},
      });
      expect(cancelled.status, cancelled.text).toBe(200);
      const batchCancelled = await call(api, 'POST', `/api/v1/batches/${batchId}/cancel`, {
        token: operator,
        body: {},
      });
      expect(batchCancelled.status, batchCancelled.text).toBe(200);
      expect(((await lostStream.next('done', 2_000)).data as { state: string }).state).toBe('cancelled');
      expect(((await batchStream.next('done', 2_000)).data as { state: string }).state).toBe('cancelled');
      expect(Date.now() - killedAt).toBeLessThan(2_500);

      await waitFor('the subscriber back', async () => (await pubsubClients()) !== '', 5_000);
      const cancelledAt = Date.now();
      await call(api, 'POST', `/api/v1/operations/${laterId}/cancel`, { token: operator, body: {} });
      expect(((await laterStream.next('done', 2_000)).data as { state: string }).state).toBe('cancelled');
      expect(Date.now() - cancelledAt).toBeLessThan(2_000);
    } finally {
      closeAll();
    }
  });
});
