// PluginClient: the host side of switchyard.plugin/v1 over a child's stdio.
// One request at a time; every response is read incrementally through a
// bounded LineSplitter and validated strictly; each way a response can be
// wrong is one class of the shared error model (errors.ts).
import { MAX_MESSAGE_BYTES } from './constants.js';
import { LineSplitter, type LineEvent } from './lines.js';
import {
  ClientBusyError,
  ConnectionClosedError,
  IdMismatchError,
  InvalidResponseError,
  PluginRpcError,
  RequestAbortedError,
  ResponseTooLargeError,
} from './errors.js';
import { readResponse } from './responses.js';
import {
  describeIssues,
  methodSchemas,
  REPORT_INPUT,
  type Method,
  type MethodParams,
  type MethodResult,
} from './schemas.js';

export * from './errors.js';
export type { MethodParams, MethodResult };
export type MethodName = Method;

/**
 * Where the client writes requests: a Writable, or anything that takes writes
 * the same way (a host may hand a lighter relay than a stream per call).
 */
export interface RequestSink {
  write(text: string): unknown;
  end(): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** Where the client reads answers: a Readable, or anything that emits the same events. */
export interface AnswerSource {
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'end' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

export interface PluginClientOptions {
  maxLineBytes?: number;
}

type Waiter = { resolve: (event: LineEvent | 'end') => void };

/**
 * Validated answers by their exact line. A plugin answers `initialize` with the
 * same bytes call after call: the same bytes parse and validate the same way,
 * so a host may keep what it validated and skip the work (the result is shared
 * and frozen: read it, never change it).
 */
export class AnswerMemo {
  readonly #answers = new Map<string, unknown>();
  constructor(readonly capacity = 16) {}

  /** `line`: the method, the request id and the answer's bytes. */
  get(line: string): unknown {
    return this.#answers.get(line);
  }

  set(line: string, result: unknown): void {
    if (this.#answers.size >= this.capacity) this.#answers.delete(this.#answers.keys().next().value!);
    this.#answers.set(line, Object.freeze(result));
  }
}

export class PluginClient {
  readonly #stdin: RequestSink;
  readonly #splitter: LineSplitter;
  readonly #events: (LineEvent | 'end')[] = [];
  readonly #limit: number;
  #waiter: Waiter | undefined;
  #nextId = 1;
  #busy = false;
  #ended = false;
  #lastAnswer: Buffer | undefined;

  constructor(stdin: RequestSink, stdout: AnswerSource, options: PluginClientOptions = {}) {
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

  /**
   * The line request() writes next for this method and params (with the next
   * request id): a host that has it delivered ahead (its spawn helper sends it
   * on an answer it knows) then calls request() with `written`.
   */
  nextRequestLine<M extends MethodName>(method: M, params: MethodParams<M>): string {
    return `${JSON.stringify({ jsonrpc: '2.0', id: this.#nextId, method, params })}\n`;
  }

  /** The exact bytes of the last answer line read (without its newline). */
  get lastAnswer(): Buffer | undefined {
    return this.#lastAnswer;
  }

  /**
   * Sends one request and returns its strictly validated result. `written`:
   * the plugin already got nextRequestLine()'s line for it; only the answer is read.
   */
  async request<M extends MethodName>(
    method: M,
    params: MethodParams<M>,
    signal?: AbortSignal,
    memo?: AnswerMemo,
    written = false,
  ): Promise<MethodResult<M>> {
    if (this.#busy) throw new ClientBusyError('one request at a time: the previous one has not finished');
    this.#busy = true;
    try {
      const id = this.#nextId++;
      if (!written) this.#stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      const event = await this.#next(signal);
      this.#lastAnswer = event !== 'end' && event.kind === 'line' ? event.bytes : undefined;
      if (!memo || event === 'end' || event.kind !== 'line')
        return parseResponse(method, id, event, this.#limit);
      // latin1: one byte per character, so two keys are equal exactly when the bytes are; with the method and id.
      const line = `${method}\0${id}\0${event.bytes.toString('latin1')}`;
      const known = memo.get(line);
      if (known !== undefined) return known as MethodResult<M>;
      const result = parseResponse(method, id, event, this.#limit);
      memo.set(line, result);
      return result;
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
  if (event.kind === 'oversized') throw new ResponseTooLargeError(limit);
  const reply = readResponse(event.bytes);
  if (reply.kind === 'invalid') throw new InvalidResponseError(reply.reason);
  if (reply.id !== id) throw new IdMismatchError(id, reply.id);
  if (reply.kind === 'error') throw new PluginRpcError(reply.error.code, reply.error.message);
  const result = methodSchemas[method].result.safeParse(reply.result, REPORT_INPUT);
  if (!result.success) {
    throw new InvalidResponseError(
      `invalid ${method} result: ${describeIssues(result.error, 'result').join('; ')}`,
    );
  }
  return result.data as MethodResult<M>;
}
