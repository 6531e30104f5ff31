// The HTTP transport of remote mode: JSON over fetch with the bearer token, and
// problem documents turned back into the errors (and exit codes) the same
// failure has in local mode.
import {
  ApiMisbehavingError,
  ApiUnreachableError,
  NotAllowedError,
  RemoteProblemError,
} from './cli-errors.js';
import {
  ERROR_CODES,
  EXIT,
  InvalidInputError,
  codeForStatus,
  exitCodeOf,
  isErrorCode,
} from '../core/platform/index.js';
import { redact } from '../core/safety/index.js';
import type { Transport } from './transport.js';

export interface Problem {
  status: number;
  detail?: string;
  code?: string;
  requiredRole?: string;
}

const TIMEOUT_MS = 60_000;
/**
 * The most bytes of one plain (non-streamed) answer the CLI reads: far above
 * any real answer (a batch with every result), so a broken or hostile server
 * cannot make the CLI grow without end; past it the answer is a clear error.
 */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

export class ApiClient implements Transport {
  readonly mode = 'remote';

  constructor(
    readonly url: string,
    readonly token: string | undefined,
  ) {}

  /** GET /healthz (no token): its body whether it answers 200 or 503; undefined when unreachable. */
  async health(): Promise<HealthAnswer | undefined> {
    try {
      const response = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
      const { workers } = JSON.parse(await this.#boundedText(response, 'GET /healthz')) as HealthAnswer;
      return typeof workers === 'number' ? { workers } : {};
    } catch {
      return undefined;
    }
  }

  /** /healthz's count of workers (every queue's together): the api has no route per queue. */
  async workersConsuming(): Promise<number | undefined> {
    return (await this.health())?.workers;
  }

  /** Nothing held open between requests. */
  async close(): Promise<void> {}

  /** GET/POST/DELETE under /api/v1; the parsed answer, or the mapped error. */
  async request<T>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    options: {
      body?: unknown;
      headers?: Record<string, string>;
      authenticated?: boolean;
      /** Shorter than the default where an answer is only a hint (profile list's token check). */
      timeoutMs?: number;
    } = {},
  ): Promise<{ status: number; body: T }> {
    const { timeoutMs = TIMEOUT_MS, ...sent } = options;
    const response = await this.#send(method, path, { ...sent, signal: AbortSignal.timeout(timeoutMs) });
    const text = await this.#boundedText(response, `${method} ${path}`);
    const parsed = parseJson(text);
    if (response.ok) {
      // HTML from a proxy or a captive portal: say so, rather than fail later on a missing field.
      if (parsed === undefined && text !== '')
        throw new ApiMisbehavingError(
          `the API at ${this.url} answered ${method} ${path} with ${JSON.stringify(response.headers.get('content-type') ?? '')}, not JSON (a proxy in the way?)`,
        );
      return { status: response.status, body: parsed as T };
    }
    throw problemError(this.url, { status: response.status, ...(parsed as Omit<Problem, 'status'>) });
  }

  /**
   * GET under /api/v1 whose body is read as it arrives (an export, an event
   * stream): failures before the body are the errors `request` raises; the
   * body is yielded as text chunks, UTF-8 sequences split across network
   * chunks joined again. An answer whose type `contentType` does not match
   * fails with ApiMisbehavingError. An aborted `signal` ends the body quietly.
   */
  async stream(
    path: string,
    options: { accept: string; contentType?: RegExp; signal?: AbortSignal | undefined },
  ): Promise<AsyncIterable<string>> {
    // A slow answer fails as `request` does; a long body may take as long as it takes.
    const answered = new AbortController();
    const timer = setTimeout(() => answered.abort(new Error('no answer in time')), TIMEOUT_MS);
    const signal = options.signal ? AbortSignal.any([options.signal, answered.signal]) : answered.signal;
    let response: Response;
    try {
      response = await this.#send('GET', path, { headers: { accept: options.accept }, signal });
    } finally {
      clearTimeout(timer);
    }
    if (!response.ok) {
      const parsed = parseJson(await this.#boundedText(response, `GET ${path}`));
      throw problemError(this.url, { status: response.status, ...(parsed as Omit<Problem, 'status'>) });
    }
    const contentType = response.headers.get('content-type') ?? '';
    if (options.contentType && !options.contentType.test(contentType)) {
      await response.body?.cancel().catch(() => {});
      throw new ApiMisbehavingError(
        `the API at ${this.url} answered ${path} with ${contentType ? JSON.stringify(contentType) : 'no content type'}, not ${options.accept} (a proxy in the way?)`,
      );
    }
    return this.#chunks(response, options.signal);
  }

  /** The answer's text, read up to MAX_ANSWER_BYTES (ApiMisbehavingError past it, the connection closed). */
  async #boundedText(response: Response, what: string): Promise<string> {
    if (!response.body) return '';
    const decoder = new TextDecoder();
    const reader = response.body.getReader();
    let bytes = 0;
    let text = '';
    try {
      for (;;) {
        let read: Awaited<ReturnType<typeof reader.read>>;
        try {
          read = await reader.read();
        } catch (error) {
          throw new ApiUnreachableError(
            `the API at ${this.url} ended its answer to ${what} early (${causeOf(error)}); run the command again`,
          );
        }
        if (read.done) break;
        bytes += read.value.byteLength;
        if (bytes > MAX_ANSWER_BYTES)
          throw new ApiMisbehavingError(
            `the API at ${this.url} answered ${what} with more than ${MAX_ANSWER_BYTES} bytes; stopped reading it (a broken server or proxy?)`,
          );
        text += decoder.decode(read.value, { stream: true });
      }
      return text + decoder.decode();
    } finally {
      await reader.cancel().catch(() => {});
    }
  }

  async *#chunks(response: Response, signal: AbortSignal | undefined): AsyncGenerator<string> {
    if (!response.body) return;
    const decoder = new TextDecoder();
    const reader = response.body.getReader();
    try {
      for (;;) {
        let read: Awaited<ReturnType<typeof reader.read>>;
        try {
          read = await reader.read();
        } catch (error) {
          if (signal?.aborted) return;
          throw new ApiUnreachableError(
            `the API at ${this.url} ended the answer early (${causeOf(error)}); run the command again`,
          );
        }
        if (read.done) break;
        const text = decoder.decode(read.value, { stream: true });
        if (text) yield text;
      }
      const rest = decoder.decode();
      if (rest) yield rest;
    } finally {
      // Stopped early (an error, a reader gone): close the connection too.
      await reader.cancel().catch(() => {});
    }
  }

  /** The request with the token; the response whatever its status, or ApiUnreachableError. */
  async #send(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    options: {
      body?: unknown;
      headers?: Record<string, string>;
      authenticated?: boolean;
      signal: AbortSignal;
    },
  ): Promise<Response> {
    if (options.authenticated !== false && !this.token)
      throw new NotAllowedError(
        ERROR_CODES.UNAUTHENTICATED,
        `no token for ${this.url}: run \`switchyard login --url ${this.url} --token-stdin\` or set SWITCHYARD_TOKEN`,
      );
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    // A token with a line break (a token file with more in it) is no header value; never quoted.
    if (this.token && /[^\x21-\x7e]/.test(this.token))
      throw new InvalidInputError(
        'the token in use is not one line of printable characters (check SWITCHYARD_TOKEN, --token or the profile)',
      );
    if (this.token && options.authenticated !== false) headers.authorization = `Bearer ${this.token}`;
    let body: string | undefined;
    if (options.body !== undefined || method === 'POST') {
      body = JSON.stringify(options.body ?? {});
      headers['content-type'] = 'application/json';
    }
    try {
      return await fetch(`${this.url}/api/v1${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
        signal: options.signal,
      });
    } catch (error) {
      throw new ApiUnreachableError(
        `cannot reach the Switchyard API at ${this.url} (${causeOf(error)}); is \`switchyard api\` or \`switchyard up\` running there?`,
      );
    }
  }
}

function parseJson(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  // fetch quotes header values in its messages: redacted, a token is never printed.
  return redact(cause?.code ?? cause?.message ?? (error as Error).message);
}

export interface HealthAnswer {
  workers?: number;
}

/**
 * A problem document as the error the core raised on the other side: its
 * code (the catalogue's for its status when it has none) decides the kind
 * and so the exit status, as in local mode.
 */
export function problemError(url: string, problem: Problem): Error {
  const message = problem.detail ?? `HTTP ${problem.status}`;
  // Redis or the api out of reach: a wait tries again, as when the api cannot be reached at all.
  if (problem.status === 503) return new ApiUnreachableError(`the API at ${url} answers 503: ${message}`);
  const code = problem.code !== undefined && isErrorCode(problem.code) ? problem.code : undefined;
  const known = code ?? codeForStatus(problem.status);
  if (exitCodeOf(known) === EXIT.notAllowed) {
    if (problem.status === 401)
      return new NotAllowedError(
        known === ERROR_CODES.TOKEN_EXPIRED ? known : ERROR_CODES.UNAUTHENTICATED,
        `${message} (${url}; log in again with \`switchyard login --url ${url} --token-stdin\`)`,
      );
    return new NotAllowedError(known, message, problem.requiredRole);
  }
  return new RemoteProblemError(problem.code ?? known, message, problem.status);
}
