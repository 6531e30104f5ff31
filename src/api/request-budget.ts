// What one client may ask of the api in time: each token (each client address
// without a token) a number of /api/ requests per window, over it 429
// TOO_MANY_REQUESTS with Retry-After; and each request (event streams aside,
// stream-limits.ts bounds those) a time budget, past it 503 REQUEST_TOO_SLOW.
// /healthz, /metrics and the web UI's files are outside the rate limit, so a
// token that floods the api cannot starve a probe.
import { createHash } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ERROR_CODES, readWholeNumberEnv } from '../core/platform/index.js';
import { ProblemError } from './problems.js';

export interface RequestBudget {
  /** Requests one token (or client address) may make per window. */
  ratePerWindow: number;
  rateWindowMs: number;
  /** How long one request may take, in milliseconds. */
  requestMs: number;
}

export const DEFAULT_REQUEST_BUDGET: RequestBudget = {
  ratePerWindow: 1_200,
  rateWindowMs: 60_000,
  requestMs: 10_000,
};

/** The budget from SWITCHYARD_API_RATE_LIMIT, _RATE_WINDOW_MS and _REQUEST_BUDGET_MS (else the defaults). */
export function requestBudgetFromEnv(env: NodeJS.ProcessEnv = process.env): RequestBudget {
  const fallback = DEFAULT_REQUEST_BUDGET;
  return {
    ratePerWindow: readWholeNumberEnv('SWITCHYARD_API_RATE_LIMIT', fallback.ratePerWindow, env),
    rateWindowMs: readWholeNumberEnv('SWITCHYARD_API_RATE_WINDOW_MS', fallback.rateWindowMs, env),
    requestMs: readWholeNumberEnv('SWITCHYARD_API_REQUEST_BUDGET_MS', fallback.requestMs, env),
  };
}

/**
 * Whom a request counts against: its bearer token, hashed (so a client that
 * does not hold a token cannot spend that token's requests by naming its id),
 * else its address.
 */
function rateKey(request: FastifyRequest): string {
  const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  if (bearer === undefined) return `address:${request.ip}`;
  return `token:${createHash('sha256').update(bearer).digest('base64url')}`;
}

/** Registers the rate limit on every /api/ route registered after it. */
export async function limitRequestRates(app: FastifyInstance, budget: RequestBudget): Promise<void> {
  const seconds = Math.ceil(budget.rateWindowMs / 1000);
  await app.register(rateLimit, {
    global: true,
    max: budget.ratePerWindow,
    timeWindow: budget.rateWindowMs,
    keyGenerator: rateKey,
    allowList: (request) => !request.url.startsWith('/api/'),
    errorResponseBuilder: (_request, context) =>
      ProblemError.of(
        ERROR_CODES.TOO_MANY_REQUESTS,
        `more than ${context.max} requests in ${seconds} s from this token (or, without one, this address); retry after ${context.after}`,
      ),
  });
}

/**
 * `work` (a route handler's answer), or a 503 REQUEST_TOO_SLOW problem once
 * `signal` (the request's deadline) aborts first. The handler is handed the
 * same signal, so work that checks it stops too.
 */
export function withinBudget<T>(work: Promise<T>, signal: AbortSignal, budgetMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const late = () =>
      reject(
        ProblemError.of(
          ERROR_CODES.REQUEST_TOO_SLOW,
          `the request took longer than the ${budgetMs} ms one request may take; narrow it (a filter, a smaller page) or retry`,
        ),
      );
    if (signal.aborted) return late();
    signal.addEventListener('abort', late, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', late));
  });
}
