// Errors as RFC 9457 problem documents: every code answers with the HTTP
// status error-catalogue.ts gives it; anything unexpected is a 500 that carries only a request id
// (the api log holds the redacted details under it).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { z } from 'zod';
import {
  ERROR_CODES,
  SwitchyardError,
  codeForStatus,
  httpStatusOf,
  isErrorCode,
  type ErrorCode,
} from '../core/platform/index.js';
import { redact, redactDeep } from '../core/safety/index.js';
import { isRedisUnavailable, ReplicaAckTimeoutError } from '../core/redis/index.js';
import type { Role } from '../core/access/index.js';
import { BODY_LIMIT } from './request-limits.js';

export interface ProblemExtra {
  /** Server errors carry the request id under which the api logged them. */
  requestId?: string;
  /** The stable machine name (error-catalogue.ts). */
  code?: string;
  /** 403: the role the request needs. */
  requiredRole?: Role;
}

export class ProblemError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors?: { field: string; message: string }[],
    readonly extra: ProblemExtra = {},
  ) {
    super(message);
  }

  /** A problem with its catalogue code, answered with the catalogue's HTTP status for it. */
  static of(
    code: ErrorCode,
    message: string,
    extra: Omit<ProblemExtra, 'code'> & { errors?: { field: string; message: string }[] } = {},
  ): ProblemError {
    const { errors, ...rest } = extra;
    return new ProblemError(httpStatusOf(code), message, errors, { ...rest, code });
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
  throw ProblemError.of(
    ERROR_CODES.INVALID_INPUT,
    `invalid ${where}: ${errors.map((error) => `${error.field}: ${error.message}`).join('; ')}`,
    { errors },
  );
}

export function toProblem(error: unknown, request: FastifyRequest, logger: Logger): ProblemError {
  if (error instanceof ProblemError) return error;
  if (isRedisUnavailable(error))
    return ProblemError.of(ERROR_CODES.REDIS_UNREACHABLE, 'Redis cannot be reached; try again shortly', {
      requestId: request.id,
    });
  if (error instanceof ReplicaAckTimeoutError)
    return ProblemError.of(error.code, `${error.message}; retry with the same Idempotency-Key`, {
      requestId: request.id,
    });
  // A core error: its status is the catalogue's.
  if (error instanceof SwitchyardError && isErrorCode(error.code))
    return ProblemError.of(error.code, error.message);
  const code = (error as { code?: string }).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return ProblemError.of(ERROR_CODES.BODY_TOO_LARGE, `the request body is larger than ${BODY_LIMIT} bytes`);
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return ProblemError.of(ERROR_CODES.UNSUPPORTED_MEDIA_TYPE, 'send the body as application/json');
  if (code === 'FST_ERR_BAD_URL')
    return ProblemError.of(ERROR_CODES.BAD_URL, `${(error as Error).message}; encode a % in the path as %25`);
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
  return ProblemError.of(
    ERROR_CODES.INTERNAL,
    `internal error (request ${request.id}); the api log has the details under this request id`,
    { requestId: request.id },
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

export function problemCode(problem: ProblemError): string {
  return problem.extra.code ?? codeForStatus(problem.status);
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
