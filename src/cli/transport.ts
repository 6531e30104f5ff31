// How the one Backend (api-backend.ts) reaches the api's routes: over HTTP
// with a token (http.ts, remote mode), or in this process through Fastify's
// inject with the local OS user as the actor (in-process-transport.ts, local
// mode). Both answer the same way: the parsed JSON of a success, the same
// errors (and so exit codes) for a failure, a streamed body read as it comes.
export type QueueName = 'inspect' | 'operate';

export interface Transport {
  readonly mode: 'local' | 'remote';
  /** Where the answers come from, for messages: the api's URL, or `in-process`. */
  readonly url: string;
  /** GET/POST/DELETE under /api/v1; the parsed answer, or the error the failure maps to. */
  request<T>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    options?: { body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: T }>;
  /**
   * GET under /api/v1 whose body is read as it arrives (an export, an event
   * stream): failures before the body are the errors `request` raises; an
   * answer whose type `contentType` does not match fails; an aborted `signal`
   * ends the body quietly.
   */
  stream(
    path: string,
    options: { accept: string; contentType?: RegExp; signal?: AbortSignal | undefined },
  ): Promise<AsyncIterable<string>>;
  /**
   * How many workers consume a queue now; undefined when that cannot be known.
   * No /api/v1 route: remotely /healthz's count, locally each queue's own.
   */
  workersConsuming(queue: QueueName): Promise<number | undefined>;
  /** Ends what the transport holds open (the in-process api and its streams). */
  close(): Promise<void>;
}
