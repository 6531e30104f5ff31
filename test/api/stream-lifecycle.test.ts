// An event stream's life beyond its events (HTTP-API.md "Event streams"): an
// idle stream carries an SSE comment every keep-alive interval (so proxies and
// fetch do not drop it), which the CLI's reader ignores; and stopping the api
// (SIGTERM) ends every open stream at once instead of waiting for the work it
// follows, so the process exits cleanly (0) at once.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverEvents, type ServerEvent } from '../../src/cli/event-stream.js';
import { makeProject } from '../support/data-dir.js';
import {
  globalArgs,
  runCli,
  setUpApi,
  startApi,
  type Api,
  type ApiSetup,
  trustEnableAndScan,
  queueEchoOperation,
  startShopBatch,
} from './support.js';

let setup: ApiSetup | undefined;
let admin = '';

beforeAll(async () => {
  setup = await setUpApi('api-stream-life', async (root) => {
    await makeProject(join(root, 'projects'), 'shop', ['package.json']);
  });
  const api = setup.api;
  admin = api.adminToken;
  await trustEnableAndScan(setup);
}, 60_000);

afterAll(async () => {
  await setup?.close();
});

const queuedOperation = () => queueEchoOperation(setup!.api, admin);

const runningBatch = () => startShopBatch(setup!.api, admin);

/** An open event stream: its raw text so far, and how its body ended. */
interface RawStream {
  text(): string;
  /** Resolves once `pattern` is in the text (rejects after timeoutMs). */
  until(pattern: RegExp, timeoutMs: number): Promise<void>;
  /** 'ended' when the server ended the body cleanly, else the read error's message. */
  ending: Promise<string>;
  close(): void;
}

async function openRaw(api: Api, path: string): Promise<RawStream> {
  const abort = new AbortController();
  const response = await fetch(`${api.base}${path}`, {
    headers: { authorization: `Bearer ${admin}`, accept: 'text/event-stream' },
    signal: abort.signal,
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  let text = '';
  const waiters = new Set<() => void>();
  const ending = (async () => {
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return 'ended';
        text += decoder.decode(value, { stream: true });
        for (const wake of [...waiters]) wake();
      }
    } catch (error) {
      return `failed: ${(error as Error).message}`;
    }
  })();
  const stream: RawStream = {
    text: () => text,
    async until(pattern, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(text)) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`${path}: no ${pattern} within ${timeoutMs} ms; got ${text}`);
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            waiters.delete(done);
            resolve();
          };
          const timer = setTimeout(done, Math.min(left, 100));
          waiters.add(done);
        });
      }
    },
    ending,
    close: () => abort.abort(),
  };
  return stream;
}

async function parsed(text: string): Promise<ServerEvent[]> {
  async function* body() {
    yield text;
  }
  const events: ServerEvent[] = [];
  for await (const event of serverEvents(body())) events.push(event);
  return events;
}

describe('event stream keep-alive', () => {
  it('an idle stream carries a keep-alive comment each interval, which the CLI reader skips', async () => {
    const api = await startApi(setup!.installation, [], { SWITCHYARD_API_STREAM_KEEPALIVE_MS: '200' });
    const id = await queuedOperation();
    const stream = await openRaw(api, `/api/v1/operations/${id}/events`);
    try {
      await stream.until(/^event: state\n/m, 10_000);
      // Nothing changes (no worker): only the comments keep the body from going quiet.
      await stream.until(/(: keep-alive\n\n[^]*){3}/, 5_000);
      const events = await parsed(stream.text());
      expect(events.map((event) => event.event)).toEqual(['state']);
      expect(JSON.parse(events[0]!.data)).toMatchObject({ id, state: 'queued' });
    } finally {
      stream.close();
    }
  });

  it('the interval is 15 s unless configured: none within the first second', async () => {
    const id = await queuedOperation();
    const stream = await openRaw(setup!.api, `/api/v1/operations/${id}/events`);
    try {
      await stream.until(/^event: state\n/m, 10_000);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(stream.text()).not.toContain('keep-alive');
    } finally {
      stream.close();
    }
  });

  it('an interval that is not a whole number of milliseconds stops the api at start (exit 2)', async () => {
    const result = await runCli([...globalArgs(setup!.installation), 'api', '--port', '0'], 20_000, {
      SWITCHYARD_API_STREAM_KEEPALIVE_MS: '15s',
    });
    expect(result.code, result.output).toBe(2);
    expect(result.output).toContain('SWITCHYARD_API_STREAM_KEEPALIVE_MS');
  });
});

describe('stopping the api', () => {
  it('SIGTERM ends every open event stream at once; the api exits 0 within 3 s', async () => {
    const api = await startApi(setup!.installation);
    const operationId = await queuedOperation();
    const batchId = await runningBatch();
    const streams = [
      await openRaw(api, `/api/v1/operations/${operationId}/events`),
      await openRaw(api, `/api/v1/batches/${batchId}/events`),
    ];
    try {
      await streams[0]!.until(/^event: state\n/m, 10_000);
      await streams[1]!.until(/^event: progress\n/m, 10_000);
      const started = Date.now();
      process.kill(api.proc.pid, 'SIGTERM');
      const exit = await Promise.race([
        api.proc.exited,
        new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 3_000)),
      ]);
      expect(exit, api.proc.output()).toEqual({ code: 0, signal: null });
      expect(Date.now() - started).toBeLessThan(3_000);
      // Ended cleanly (not cut off), and without `done`: the work goes on, a client reconnects elsewhere.
      for (const stream of streams) {
        expect(await stream.ending).toBe('ended');
        expect(stream.text()).not.toContain('event: done');
      }
    } finally {
      for (const stream of streams) stream.close();
    }
  });
});
