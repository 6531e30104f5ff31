// How many event streams (Server-Sent Events) the api holds open at once, per
// token and in all: each one keeps a follower, a socket and a subscription,
// so a viewer token must not be able to open them without bound. A stream
// over a limit is refused with 429 TOO_MANY_STREAMS; its slot frees when the
// stream ends or its client leaves.
import type { FastifyRequest } from 'fastify';
import { ERROR_CODES, readWholeNumberEnv } from '../core/platform/index.js';
import { ProblemError } from './problems.js';

export interface StreamLimits {
  /** Open streams of one token. */
  perToken: number;
  /** Open streams of this api process, every token together. */
  perProcess: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = { perToken: 16, perProcess: 1_000 };

/** The limits, from SWITCHYARD_API_STREAMS_PER_TOKEN and SWITCHYARD_API_STREAMS (else the defaults). */
export function streamLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): StreamLimits {
  return {
    perToken: readWholeNumberEnv('SWITCHYARD_API_STREAMS_PER_TOKEN', DEFAULT_STREAM_LIMITS.perToken, env),
    perProcess: readWholeNumberEnv('SWITCHYARD_API_STREAMS', DEFAULT_STREAM_LIMITS.perProcess, env),
  };
}

/**
 * How often an open stream sends a comment line (`: keep-alive`), which
 * clients skip: proxies and fetch() drop a body idle for minutes, and an
 * operation may sit in one state far longer.
 */
export const DEFAULT_KEEP_ALIVE_MS = 15_000;

/** The keep-alive interval, from SWITCHYARD_API_STREAM_KEEPALIVE_MS (else 15 s). */
export function keepAliveMsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return readWholeNumberEnv('SWITCHYARD_API_STREAM_KEEPALIVE_MS', DEFAULT_KEEP_ALIVE_MS, env);
}

/** The OpenAPI entry of an event stream route's refusal. */
export const STREAM_LIMIT_ERRORS = {
  '429': 'TOO_MANY_STREAMS: the token, or the api process, holds as many event streams open as it may',
};

export class StreamSlots {
  readonly #byToken = new Map<string, number>();
  #open = 0;

  constructor(readonly limits: StreamLimits) {}

  /**
   * Runs `body` (the whole stream) holding one slot of the request's token;
   * a 429 problem when none is free. The slot is given back however `body` ends.
   */
  async hold<T>(request: FastifyRequest, body: () => Promise<T>): Promise<T> {
    const token = request.token?.id ?? '';
    const mine = this.#byToken.get(token) ?? 0;
    if (mine >= this.limits.perToken)
      throw tooMany(
        `token ${request.token?.name ?? ''} already has ${mine} event streams open, the most one token may hold (${this.limits.perToken})`,
      );
    if (this.#open >= this.limits.perProcess)
      throw tooMany(
        `this api process already holds ${this.#open} event streams open, the most it serves at once (${this.limits.perProcess})`,
      );
    this.#byToken.set(token, mine + 1);
    this.#open++;
    try {
      return await body();
    } finally {
      this.#open--;
      const left = (this.#byToken.get(token) ?? 1) - 1;
      if (left > 0) this.#byToken.set(token, left);
      else this.#byToken.delete(token);
    }
  }

  /** Open streams now (all tokens). */
  get open(): number {
    return this.#open;
  }
}

function tooMany(reason: string): ProblemError {
  return ProblemError.of(
    ERROR_CODES.TOO_MANY_STREAMS,
    `${reason}; close another event stream to free a slot, then retry`,
  );
}
