// Errors as RFC 9457 problem documents: core errors map to their HTTP status
// here, once; anything unexpected is a 500 that carries only a request id
// (the api log holds the redacted details under it).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { IdempotencyConflictError, NotFoundError, SwitchyardError } from '../core/platform/index.js';
import { redact, redactDeep } from '../core/safety/index.js';
import { isRedisUnavailable, ReplicaAckTimeoutError } from '../core/redis/index.js';
import type { Role } from '../core/access/index.js';
import { BODY_LIMIT } from './request-limits.js';

export class ProblemError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors?: { field: string; message: string }[],
    /** Server errors carry the request id under which the api logged them, and more. */
    readonly extra: {
      requestId?: string;
      /** The stable machine name (the core error's code; UNAUTHENTICATED, FORBIDDEN, …). */
      code?: string;
      /** 403: the role the request needs. */
      requiredRole?: Role;
    } = {},
  ) {
    super(message);
  }
}

/** The parsed value, or a 400 naming every field that is wrong. */
export function parseOrProblem<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const errors = parsed.error.issues.flatMap((issue) => {
    const path = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: [...path, key].join('.'), message: 'unknown field' }));
    }
    return [{ field: path.length > 0 ? path.join('.') : where, message: issue.message }];
  });
  throw new ProblemError(
    400,
    `invalid ${where}: ${errors.map((error) => `${error.field}: ${error.message}`).join('; ')}`,
    errors,
    { code: 'INVALID_INPUT' },
  );
}

export function toProblem(error: unknown, request: FastifyRequest, logger: Logger): ProblemError {
  if (error instanceof ProblemError) return error;
  if (isRedisUnavailable(error))
    return new ProblemError(503, 'Redis cannot be reached; try again shortly', undefined, {
      requestId: request.id,
      code: 'REDIS_UNAVAILABLE',
    });
  if (error instanceof NotFoundError)
    return new ProblemError(404, error.message, undefined, { code: error.code });
  if (error instanceof IdempotencyConflictError)
    return new ProblemError(409, error.message, undefined, { code: error.code });
  if (error instanceof ReplicaAckTimeoutError)
    return new ProblemError(503, `${error.message}; retry with the same Idempotency-Key`, undefined, {
      requestId: request.id,
      code: 'REPLICA_ACK_TIMEOUT',
    });
  if (error instanceof SwitchyardError) {
    if (error.badInput) return new ProblemError(400, error.message, undefined, { code: error.code });
    return new ProblemError(error.callFailure ? 502 : 409, error.message, undefined, { code: error.code });
  }
  const code = (error as { code?: string }).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return new ProblemError(413, `the request body is larger than ${BODY_LIMIT} bytes`, undefined, {
      code: 'BODY_TOO_LARGE',
    });
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return new ProblemError(415, 'send the body as application/json', undefined, {
      code: 'UNSUPPORTED_MEDIA_TYPE',
    });
  if (code === 'FST_ERR_BAD_URL')
    return new ProblemError(400, `${(error as Error).message}; encode a % in the path as %25`, undefined, {
      code: 'BAD_URL',
    });
  const status = (error as { statusCode?: number }).statusCode;
  if (status && status >= 400 && status < 500) return new ProblemError(status, (error as Error).message);
  // The caller gets the request id only; the api log holds the (redacted) error under it.
  logger.error(
    {
      event: 'internal-error',
      requestId: request.id,
      method: request.method,
      url: redact(request.url),
      error: redact(error instanceof Error ? (error.stack ?? error.message) : String(error)),
    },
    `internal error answering ${request.method} ${redact(request.url.split('?')[0] ?? '')}`,
  );
  return new ProblemError(
    500,
    `internal error (request ${request.id}); the api log has the details under this request id`,
    undefined,
    { requestId: request.id, code: 'INTERNAL' },
  );
}

export const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/**
 * The code of a problem raised without one (a framework error, a 4xx the
 * framework answered itself): HTTP-API.md promises every error a `code`.
 */
const CODE_BY_STATUS: Record<number, string> = {
  400: 'INVALID_INPUT',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'BODY_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL',
  502: 'BAD_GATEWAY',
  503: 'UNAVAILABLE',
};

export function problemCode(problem: ProblemError): string {
  return problem.extra.code ?? CODE_BY_STATUS[problem.status] ?? `HTTP_${problem.status}`;
}

/** RFC 9457 problem document; detail and field messages redacted (they can quote plugin output). */
export function sendProblem(reply: FastifyReply, problem: ProblemError) {
  if (problem.status === 401) reply.header('www-authenticate', 'Bearer');
  if (problem.status === 503) reply.header('retry-after', '1');
  if (problem.extra.requestId) reply.header('x-request-id', problem.extra.requestId);
  return reply
    .code(problem.status)
    .type('application/problem+json')
    .send({
      type: 'about:blank',
      title: TITLES[problem.status] ?? 'Error',
      status: problem.status,
      detail: redact(problem.message),
      code: problemCode(problem),
      ...(problem.extra.requiredRole ? { requiredRole: problem.extra.requiredRole } : {}),
      ...(problem.errors ? { errors: redactDeep(problem.errors) } : {}),
      ...(problem.extra.requestId ? { requestId: problem.extra.requestId } : {}),
    });
}
