// Local mode's transport: the api's routes built in this process around the
// CLI's runtime (api/in-process.ts) and called through Fastify's inject, so
// local and remote run the same route handlers; no socket, no token. The app
// is built at the first call (a command that calls nothing builds nothing).
// A failure is the core's own error when the handler threw one (the same
// message and exit status local mode always had), else the problem the api
// answered, mapped as remote mode maps it.
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { InProcessApi } from '../api/in-process.js';
import type { Runtime } from '../core/runtime/index.js';
import { ApiMisbehavingError } from './cli-errors.js';
import { problemError, type Problem } from './http.js';
import type { QueueName, Transport } from './transport.js';

/** What light-my-request answers (Fastify's inject): the fields this transport reads. */
interface Injected {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  raw: { res: { req: IncomingMessage; destroy(): void } };
  stream(): Readable;
}

export class InProcessTransport implements Transport {
  readonly mode = 'local';
  readonly url = 'in-process';
  #api: Promise<InProcessApi> | undefined;

  constructor(
    readonly runtime: Runtime,
    readonly actor: string,
  ) {}

  async request<T>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    options: { body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; body: T }> {
    const sendsBody = options.body !== undefined || method === 'POST';
    const { response, api } = await this.#inject(
      method,
      path,
      {
        accept: 'application/json',
        ...options.headers,
        ...(sendsBody ? { 'content-type': 'application/json' } : {}),
      },
      sendsBody ? JSON.stringify(options.body ?? {}) : undefined,
    );
    const text = await textOf(response.stream());
    if (response.statusCode >= 400) throw failure(api, response, text);
    return { status: response.statusCode, body: (text === '' ? undefined : JSON.parse(text)) as T };
  }

  async stream(
    path: string,
    options: { accept: string; contentType?: RegExp; signal?: AbortSignal | undefined },
  ): Promise<AsyncIterable<string>> {
    const { response, api } = await this.#inject('GET', path, { accept: options.accept });
    const body = response.stream();
    if (response.statusCode >= 400) throw failure(api, response, await textOf(body));
    const contentType = String(response.headers['content-type'] ?? '');
    if (options.contentType && !options.contentType.test(contentType)) {
      response.raw.res.destroy();
      throw new ApiMisbehavingError(
        `the in-process api answered ${path} with ${JSON.stringify(contentType)}, not ${options.accept}`,
      );
    }
    return chunks(body, response, options.signal);
  }

  async workersConsuming(queue: QueueName): Promise<number | undefined> {
    const { batches, operations } = this.runtime;
    return queue === 'inspect' ? batches.workersConsuming() : operations.workersConsuming();
  }

  /** Ends the app (and any event stream still open) if a call built it. */
  async close(): Promise<void> {
    const api = this.#api;
    this.#api = undefined;
    if (api) await (await api).app.close();
  }

  async #inject(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    headers: Record<string, string>,
    payload?: string,
  ): Promise<{ response: Injected; api: InProcessApi }> {
    this.#api ??= import('../api/in-process.js').then(({ buildInProcessApi }) =>
      buildInProcessApi(this.runtime, this.actor),
    );
    const api = await this.#api;
    // As a stream always: an event stream's answer resolves at its head, not when it ends.
    const response = (await api.app.inject({
      method,
      url: `/api/v1${path}`,
      headers,
      ...(payload !== undefined ? { payload } : {}),
      payloadAsStream: true,
    })) as unknown as Injected;
    return { response, api };
  }
}

/** The core's error the handler threw, else the problem document as the error remote mode raises. */
function failure(api: InProcessApi, response: Injected, text: string): unknown {
  const thrown = api.thrownBy(response.raw.res.req);
  if (thrown !== undefined) return thrown;
  let problem: Omit<Problem, 'status'> = {};
  try {
    problem = JSON.parse(text) as Omit<Problem, 'status'>;
  } catch {
    // not a problem document: the status alone says what it was
  }
  return problemError('the in-process api', { ...problem, status: response.statusCode });
}

async function textOf(body: Readable): Promise<string> {
  let text = '';
  for await (const chunk of body) text += String(chunk);
  return text;
}

/**
 * The body as text chunks, UTF-8 sequences split across chunks joined again,
 * until it ends or `signal` aborts (the response is then destroyed: an event
 * stream's route ends as when a client goes away).
 */
async function* chunks(body: Readable, response: Injected, signal: AbortSignal | undefined) {
  const decoder = new TextDecoder();
  const leave = () => response.raw.res.destroy();
  signal?.addEventListener('abort', leave, { once: true });
  try {
    if (signal?.aborted) return;
    for await (const chunk of body) {
      const text = decoder.decode(chunk as Buffer, { stream: true });
      if (text) yield text;
    }
    const rest = decoder.decode();
    if (rest) yield rest;
  } catch (error) {
    if (!signal?.aborted) throw error;
  } finally {
    signal?.removeEventListener('abort', leave);
    // Stopped early (an error, a reader gone): the route's stream ends too.
    leave();
  }
}
