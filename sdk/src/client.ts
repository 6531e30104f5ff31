// PluginClient: the host side of switchyard.plugin/v1 over a child's stdio.
// One request at a time; every response is read incrementally through a
// bounded LineSplitter and validated strictly, and each way a response can be
// wrong has its own error class so the host can tell them apart.
import type { Readable, Writable } from 'node:stream';
import { MAX_MESSAGE_BYTES } from './constants.js';
import { LineSplitter, decodeUtf8, type LineEvent } from './lines.js';
import {
  describeIssues,
  errorResponseSchema,
  methodSchemas,
  successResponseSchema,
  REPORT_INPUT,
} from './schemas.js';

export type ClientErrorKind =
  'malformed' | 'oversized' | 'id-mismatch' | 'rpc-error' | 'closed' | 'aborted' | 'busy';

export abstract class PluginClientError extends Error {
  abstract readonly kind: ClientErrorKind;
}

/** The line is not one strictly valid JSON-RPC response (or its result is invalid). */
export class MalformedResponseError extends PluginClientError {
  readonly kind = 'malformed';
  override readonly name = 'MalformedResponseError';
}

/** A response line longer than the message limit. */
export class OversizedResponseError extends PluginClientError {
  readonly kind = 'oversized';
  override readonly name = 'OversizedResponseError';
  constructor(readonly limit: number) {
    super(`response line exceeds ${limit} bytes`);
  }
}

export class IdMismatchError extends PluginClientError {
  readonly kind = 'id-mismatch';
  override readonly name = 'IdMismatchError';
  constructor(
    readonly expected: number,
    readonly received: unknown,
  ) {
    super(`response id ${JSON.stringify(received)} does not match request id ${expected}`);
  }
}

/** The plugin answered with a JSON-RPC error object. */
export class PluginRpcError extends PluginClientError {
  readonly kind = 'rpc-error';
  override readonly name = 'PluginRpcError';
  constructor(
    readonly code: number,
    readonly rpcMessage: string,
  ) {
    super(`plugin error ${code}: ${rpcMessage}`);
  }
}

/** stdout ended before a response arrived. */
export class ConnectionClosedError extends PluginClientError {
  readonly kind = 'closed';
  override readonly name = 'ConnectionClosedError';
}

export class RequestAbortedError extends PluginClientError {
  readonly kind = 'aborted';
  override readonly name = 'RequestAbortedError';
}

export class ClientBusyError extends PluginClientError {
  readonly kind = 'busy';
  override readonly name = 'ClientBusyError';
}

export type MethodName = keyof typeof methodSchemas;
export type MethodParams<M extends MethodName> = ReturnType<(typeof methodSchemas)[M]['params']['parse']>;
export type MethodResult<M extends MethodName> = ReturnType<(typeof methodSchemas)[M]['result']['parse']>;

export interface PluginClientOptions {
  maxLineBytes?: number;
}

type Waiter = { resolve: (event: LineEvent | 'end') => void };

export class PluginClient {
  readonly #stdin: Writable;
  readonly #splitter: LineSplitter;
  readonly #events: (LineEvent | 'end')[] = [];
  readonly #limit: number;
  #waiter: Waiter | undefined;
  #nextId = 1;
  #busy = false;
  #ended = false;

  constructor(stdin: Writable, stdout: Readable, options: PluginClientOptions = {}) {
    this.#stdin = stdin;
    this.#limit = options.maxLineBytes ?? MAX_MESSAGE_BYTES;
    this.#splitter = new LineSplitter(this.#limit);
    // Writes to a plugin that already exited must fail the call, not the host.
    stdin.on('error', () => {});
    stdout.on('data', (chunk: Buffer) => {
      for (const event of this.#splitter.push(chunk)) this.#deliver(event);
    });
    stdout.on('end', () => this.#end());
    stdout.on('close', () => this.#end());
    stdout.on('error', () => this.#end());
  }

  /** Bytes of an unfinished response line currently held (bounded by the limit). */
  get bufferedBytes(): number {
    return this.#splitter.buffered;
  }

  /** Sends one request and returns its strictly validated result. */
  async request<M extends MethodName>(
    method: M,
    params: MethodParams<M>,
    signal?: AbortSignal,
  ): Promise<MethodResult<M>> {
    if (this.#busy) throw new ClientBusyError('one request at a time: the previous one has not finished');
    this.#busy = true;
    try {
      const id = this.#nextId++;
      this.#stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      const event = await this.#next(signal);
      return parseResponse(method, id, event, this.#limit);
    } finally {
      this.#busy = false;
    }
  }

  /** Closes the plugin's stdin: the host's signal that no request follows. */
  close(): void {
    this.#stdin.end();
  }

  #deliver(event: LineEvent | 'end'): void {
    const waiter = this.#waiter;
    if (waiter) {
      this.#waiter = undefined;
      waiter.resolve(event);
    } else if (event === 'end' || this.#events.length < 2) {
      // Unrequested lines are kept (the next request sees them as its
      // answer, so noise fails the call); at most two, so memory stays bounded.
      this.#events.push(event);
    }
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    for (const event of this.#splitter.end()) this.#deliver(event);
    this.#deliver('end');
  }

  #next(signal?: AbortSignal): Promise<LineEvent | 'end'> {
    const queued = this.#events.shift();
    if (queued !== undefined) {
      if (queued === 'end') this.#events.unshift('end');
      return Promise.resolve(queued);
    }
    if (signal?.aborted) return Promise.reject(new RequestAbortedError('request aborted'));
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#waiter = undefined;
        reject(new RequestAbortedError('request aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiter = {
        resolve: (event) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(event);
        },
      };
    });
  }
}

function parseResponse<M extends MethodName>(
  method: M,
  id: number,
  event: LineEvent | 'end',
  limit: number,
): MethodResult<M> {
  if (event === 'end') throw new ConnectionClosedError('the plugin closed stdout without answering');
  if (event.kind === 'oversized') throw new OversizedResponseError(limit);
  const text = decodeUtf8(event.bytes);
  if (text === undefined) throw new MalformedResponseError('response line is not valid UTF-8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new MalformedResponseError(
      `response is not exactly one JSON document: ${JSON.stringify(text.slice(0, 80))}`,
    );
  }
  if (typeof value === 'object' && value !== null && 'error' in value) {
    const failure = errorResponseSchema.safeParse(value, REPORT_INPUT);
    if (!failure.success) {
      throw new MalformedResponseError(`invalid error response: ${describeIssues(failure.error).join('; ')}`);
    }
    if (failure.data.id !== id) throw new IdMismatchError(id, failure.data.id);
    throw new PluginRpcError(failure.data.error.code, failure.data.error.message);
  }
  const success = successResponseSchema.safeParse(value, REPORT_INPUT);
  if (!success.success) {
    throw new MalformedResponseError(`invalid response: ${describeIssues(success.error).join('; ')}`);
  }
  if (success.data.id !== id) throw new IdMismatchError(id, success.data.id);
  const result = methodSchemas[method].result.safeParse(success.data.result, REPORT_INPUT);
  if (!result.success) {
    throw new MalformedResponseError(
      `invalid ${method} result: ${describeIssues(result.error, 'result').join('; ')}`,
    );
  }
  return result.data as MethodResult<M>;
}
