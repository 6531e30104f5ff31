// The HTTP API (/api/v1) and the review web UI, over the same core services as
// the CLI. Every /api/v1 route needs a bearer token with a sufficient role.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { z } from 'zod';
import { OS_TRUST_BOUNDARY_STATEMENT, SCOPE_DESCRIPTIONS } from '@switchyard/plugin-sdk/protocol';
import { Readable } from 'node:stream';
import { queryAudit } from '../core/audit.js';
import { followBatchLive } from '../core/batch-follow.js';
import { type BatchView } from '../core/batches.js';
import { IdempotencyConflictError, NotFoundError, SwitchyardError } from '../core/errors.js';
import { ReplicaAckTimeoutError } from '../core/replica-ack.js';
import { liveness } from '../core/liveness.js';
import { createLogger } from '../core/log.js';
import { isTerminal } from '../core/operations.js';
import { redact, redactDeep } from '../core/redact.js';
import { isRedisUnavailable } from '../core/redis.js';
import type { Runtime } from '../core/runtime.js';
import { addSchedule, removeSchedule } from '../core/schedule-service.js';
import { TokenStore, roleAllows, type Role, type TokenView } from '../core/tokens.js';
import { renderMetrics } from './metrics.js';
import * as responses from './responses.js';
import {
  auditQuery,
  batchesQuery,
  bodies,
  diffQuery,
  exportQuery,
  jsonDepthExceeds,
  limitQuery,
  openApiDocument,
  operationsQuery,
  type RouteDoc,
} from './schemas.js';

export const BODY_LIMIT = 64 * 1024;
/** Deeper JSON bodies are refused before parsing (a deep body would overflow the stack later). */
export const MAX_JSON_DEPTH = 64;

/** Every request gets an id; a 500 carries it and the api log files the error under it. */
export function newRequestId(): string {
  return `req_${randomUUID()}`;
}
const UI_DIR = fileURLToPath(new URL('../../src/api/ui/', import.meta.url));
const UI_FILE = /^[a-z0-9][a-z0-9._-]*\.(html|js|css|svg|png)$/;
const CONTENT_TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
};
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

declare module 'fastify' {
  interface FastifyRequest {
    token?: TokenView;
  }
}

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

export interface ApiDeps {
  runtime: Runtime;
  tokens: TokenStore;
}

export async function buildApi(
  runtime: Runtime,
  tokens = runtime.tokens,
  instance?: FastifyInstance,
  logger: Logger = createLogger('api'),
) {
  const app = instance ?? Fastify({ logger: false, bodyLimit: BODY_LIMIT, genReqId: newRequestId });
  const { core, work } = runtime;
  const docs: RouteDoc[] = [];

  app.addHook('onSend', async (_request, reply) => {
    reply.header('content-security-policy', CSP);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('x-frame-options', 'DENY');
    reply.header('cache-control', 'no-store');
  });

  // JSON bodies: an empty body counts as {} so routes that take nothing accept a bare POST.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, {});
    if (jsonDepthExceeds(text, MAX_JSON_DEPTH))
      return done(new ProblemError(400, `the request body nests deeper than ${MAX_JSON_DEPTH} levels`));
    try {
      done(null, JSON.parse(text));
    } catch {
      done(
        new ProblemError(400, 'the request body is not valid JSON', undefined, { code: 'INVALID_INPUT' }),
        undefined,
      );
    }
  });

  app.setErrorHandler((error, request, reply) => sendProblem(reply, toProblem(error, request, logger)));
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, new ProblemError(404, `no route ${request.method} ${request.url.split('?')[0]}`)),
  );

  /** Same-origin only: a browser request from another origin is refused. */
  app.addHook('onRequest', async (request) => {
    const origin = request.headers.origin;
    if (origin && request.url.startsWith('/api/')) {
      const host = request.headers.host;
      if (!host || (origin !== `http://${host}` && origin !== `https://${host}`)) {
        throw new ProblemError(403, `cross-origin requests are refused (origin ${origin})`);
      }
    }
  });

  const authenticate = async (request: FastifyRequest, needed: Role) => {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match)
      throw new ProblemError(
        401,
        'no token: send Authorization: Bearer <token> (the first admin token is in <data-dir>/api-token)',
        undefined,
        { code: 'UNAUTHENTICATED' },
      );
    const check = await tokens.check(match[1]!);
    if (!check.ok && check.reason === 'expired')
      throw new ProblemError(
        401,
        `token ${check.token.name} expired at ${check.token.expiresAt}; ask an admin for a new one`,
        undefined,
        { code: 'TOKEN_EXPIRED' },
      );
    if (!check.ok)
      throw new ProblemError(401, 'unknown or revoked token', undefined, { code: 'UNAUTHENTICATED' });
    const token = check.token;
    if (!roleAllows(token.role, needed)) {
      throw new ProblemError(
        403,
        `this needs the ${needed} role; token ${token.name} has ${token.role}`,
        undefined,
        { code: 'FORBIDDEN', requiredRole: needed },
      );
    }
    request.token = token;
  };
  const actorOf = (request: FastifyRequest) => `token:${request.token?.name ?? 'unknown'}`;

  type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
  const route = (
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    role: Role,
    summary: string,
    handler: Handler,
    options: {
      body?: z.ZodType;
      status?: number;
      raw?: boolean;
      /** The response body's schema (none: a Server-Sent Events stream). */
      response?: z.ZodType;
      /** Other success statuses with the same body (an idempotent replay: 200). */
      alsoStatus?: number;
      /** Media types of a streamed body other than Server-Sent Events. */
      streams?: string[];
    } = {},
  ) => {
    docs.push({
      method,
      path: `/api/v1${path}`,
      role,
      summary,
      status: options.status ?? 200,
      ...(options.alsoStatus ? { alsoStatus: options.alsoStatus } : {}),
      ...(options.body ? { body: options.body } : {}),
      ...(options.response ? { response: options.response } : {}),
      ...(options.streams ? { streams: options.streams } : {}),
    });
    app.route({
      method,
      url: `/api/v1${path}`,
      handler: async (request, reply) => {
        await authenticate(request, role);
        const result = await handler(request, reply);
        if (options.raw) return reply;
        return reply.code(options.status ?? 200).send(result);
      },
    });
  };
  const body = <T>(schema: z.ZodType<T>, request: FastifyRequest): T =>
    parseOrProblem(schema, request.body ?? {}, 'body');
  const query = <T>(schema: z.ZodType<T>, request: FastifyRequest): T =>
    parseOrProblem(schema, request.query ?? {}, 'query');
  const param = (request: FastifyRequest, name: string) => (request.params as Record<string, string>)[name]!;

  // ---- plugins ----
  route('GET', '/plugins', 'viewer', 'list plugins', () => core.plugins.list(), {
    response: z.array(responses.pluginView),
  });
  route(
    'GET',
    '/plugins/:id',
    'viewer',
    'everything a reviewer needs',
    async (request) => ({
      ...(await core.plugins.show(param(request, 'id'))),
      osTrustBoundary: OS_TRUST_BOUNDARY_STATEMENT,
      scopeDescriptions: SCOPE_DESCRIPTIONS,
    }),
    { response: responses.pluginDetail },
  );
  route(
    'POST',
    '/plugins/refresh',
    'admin',
    'rediscover packages',
    async (request) => {
      body(bodies.empty, request);
      return core.plugins.refresh(actorOf(request));
    },
    { body: bodies.empty, response: z.array(responses.pluginView) },
  );
  route(
    'POST',
    '/plugins/:id/trust',
    'admin',
    'trust the exact reviewed fingerprint',
    async (request) =>
      core.plugins.trust(param(request, 'id'), body(bodies.trust, request).fingerprint, actorOf(request)),
    { body: bodies.trust, response: responses.pluginView },
  );
  route(
    'POST',
    '/plugins/:id/enable',
    'admin',
    'grant a subset of the requested scopes',
    async (request) =>
      core.plugins.enable(param(request, 'id'), body(bodies.enable, request).scopes, actorOf(request)),
    { body: bodies.enable, response: responses.pluginView },
  );
  route(
    'POST',
    '/plugins/:id/disable',
    'admin',
    'revoke every grant',
    async (request) => {
      body(bodies.empty, request);
      return core.plugins.disable(param(request, 'id'), actorOf(request));
    },
    { body: bodies.empty, response: responses.pluginView },
  );
  route(
    'POST',
    '/plugins/:id/health',
    'operator',
    'one supervised health check now',
    async (request) => {
      body(bodies.empty, request);
      return core.plugins.health(param(request, 'id'));
    },
    { body: bodies.empty, response: responses.healthResult },
  );
  route(
    'POST',
    '/plugins/:id/limits',
    'admin',
    "the host's time limits for this plugin's calls (plugin set)",
    async (request) => {
      const limits = body(bodies.timeLimits, request);
      return core.plugins.setTimeLimits(
        param(request, 'id'),
        {
          ...(limits.inspectTimeoutMs !== undefined ? { inspectMs: limits.inspectTimeoutMs } : {}),
          ...(limits.operateTimeoutMs !== undefined ? { operateMs: limits.operateTimeoutMs } : {}),
        },
        actorOf(request),
      );
    },
    { body: bodies.timeLimits, response: responses.pluginDetailCore },
  );
  // Redacted again as they are read: entries stored before a pattern existed, and
  // tokens this api knows (registered as it verified them), never reach a viewer.
  route(
    'GET',
    '/plugins/:id/logs',
    'viewer',
    'newest redacted log entries',
    async (request) =>
      redactDeep(await core.plugins.logs(param(request, 'id'), query(limitQuery, request).limit ?? 100)),
    { response: z.array(responses.logEntry) },
  );

  // ---- projects ----
  route('GET', '/projects', 'viewer', 'list projects', () => core.projects.list(), {
    response: z.array(responses.project),
  });
  route(
    'POST',
    '/projects',
    'admin',
    'add a project',
    async (request) => {
      const input = body(bodies.addProject, request);
      return core.projects.add(input.path, input, actorOf(request));
    },
    { body: bodies.addProject, status: 201, response: responses.project },
  );
  route(
    'POST',
    '/projects/scan',
    'admin',
    'add each immediate subdirectory',
    async (request) => {
      const input = body(bodies.scanProjects, request);
      return core.projects.scan(input.dir, input, actorOf(request));
    },
    { body: bodies.scanProjects, status: 201, response: z.array(responses.project) },
  );
  for (const [name, trusted] of [
    ['trust', true],
    ['untrust', false],
  ] as const) {
    route(
      'POST',
      `/projects/:id/${name}`,
      'admin',
      `${name} a project`,
      async (request) => {
        body(bodies.empty, request);
        return core.projects.setTrusted(param(request, 'id'), trusted, actorOf(request));
      },
      { body: bodies.empty, response: responses.project },
    );
  }
  route(
    'DELETE',
    '/projects/:id',
    'admin',
    'forget a project',
    async (request) => core.projects.remove(param(request, 'id'), actorOf(request)),
    { response: responses.project },
  );

  // ---- batches ----
  route(
    'POST',
    '/batches',
    'operator',
    'start a batch inspection',
    async (request) => {
      const input = body(bodies.createBatch, request);
      return work.createBatch(input.pluginId, input.projects, actorOf(request));
    },
    { body: bodies.createBatch, status: 202, response: responses.batchView },
  );
  route(
    'GET',
    '/batches',
    'viewer',
    'newest batches, filtered (state, pluginId), paginated',
    async (request) => {
      const page = await work.listBatches(query(batchesQuery, request));
      return { ...page, items: page.items.map(({ results: _results, ...rest }) => rest) };
    },
    { response: responses.page(responses.batchSummary) },
  );
  route(
    'GET',
    '/batches/:id',
    'viewer',
    'a batch with its results',
    (request) => work.getBatch(param(request, 'id')),
    { response: responses.batchView },
  );
  route(
    'GET',
    '/batches/:id/events',
    'viewer',
    'live progress (Server-Sent Events)',
    async (request, reply) => {
      const id = param(request, 'id');
      await work.getBatch(id);
      await stream(request, reply, async (send, signal) => {
        const finished = await followBatchLive(work, id, (batch) => send('progress', batch), {
          signal,
          onOutcomes: (outcomes) => send('outcomes', outcomes),
        });
        if (finished) send('done', finished);
      });
    },
    { raw: true },
  );

  // ---- batch control: cancel, retry, diff, export (issue 13) ----
  route(
    'POST',
    '/batches/:id/cancel',
    'operator',
    'cancel a batch: queued inspections never start, running ones are killed (idempotent)',
    async (request) => {
      body(bodies.empty, request);
      return withoutResults(await work.control.cancel(param(request, 'id'), actorOf(request)));
    },
    { body: bodies.empty, response: responses.batchSummary },
  );
  route(
    'POST',
    '/batches/:id/retry',
    'operator',
    'a new batch over the same plugin and projects ({failedOnly: true}: only failed and cancelled ones)',
    async (request) => {
      const input = body(bodies.retryBatch, request);
      return work.control.retry(
        param(request, 'id'),
        { failedOnly: input.failedOnly === true },
        actorOf(request),
      );
    },
    { body: bodies.retryBatch, status: 202, response: responses.batchView },
  );
  route(
    'GET',
    '/batches/:id/previous',
    'viewer',
    'the newest earlier batch of the same plugin: {previous: batch | null}',
    async (request) => {
      const previous = await work.control.previous(param(request, 'id'));
      return { previous: previous ? withoutResults(previous) : null };
    },
    { response: responses.previousBatch },
  );
  route(
    'GET',
    '/batches/:id/diff',
    'viewer',
    'what changed from batch ?from=<id> to this one (facts added/removed/changed, status)',
    async (request) => work.control.diff(query(diffQuery, request).from, param(request, 'id')),
    { response: responses.batchDiff },
  );
  route(
    'GET',
    '/batches/:id/export',
    'viewer',
    'the results, streamed: ?format=jsonl (one line per project) or csv (one row per fact)',
    async (request, reply) => {
      const { format } = query(exportQuery, request);
      const chunks = await work.control.export(param(request, 'id'), format);
      return reply
        .type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
        .send(Readable.from(chunks));
    },
    { raw: true, streams: ['application/x-ndjson', 'text/csv'] },
  );

  // ---- operations ----
  route(
    'POST',
    '/operations',
    'operator',
    'queue one durable operation',
    async (request, reply) => {
      const input = body(bodies.createOperation, request);
      const key = request.headers['idempotency-key'];
      const { operation, created } = await work.createOperation(
        {
          pluginId: input.pluginId,
          projectId: input.projectId,
          action: input.action,
          input: (input.input ?? null) as never,
          ...(typeof key === 'string' ? { idempotencyKey: key } : {}),
          ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
        },
        actorOf(request),
      );
      return reply.code(created ? 202 : 200).send(operation);
    },
    {
      body: bodies.createOperation,
      status: 202,
      alsoStatus: 200,
      raw: true,
      response: responses.operationView,
    },
  );
  route(
    'GET',
    '/operations',
    'viewer',
    'newest operations, filtered (projectId, pluginId, state), paginated',
    async (request) => work.listOperations(withoutUndefined(query(operationsQuery, request))),
    { response: responses.page(responses.operationView) },
  );
  route(
    'GET',
    '/operations/:id',
    'viewer',
    'one operation',
    (request) => work.getOperation(param(request, 'id')),
    { response: responses.operationView },
  );
  route(
    'GET',
    '/operations/:id/logs',
    'viewer',
    "the operation's redacted stderr so far, oldest first (written while its call runs)",
    (request) => work.operationLogs(param(request, 'id')),
    { response: z.array(responses.logEntry) },
  );
  route(
    'POST',
    '/operations/:id/cancel',
    'operator',
    'cancel an operation',
    async (request) => {
      body(bodies.empty, request);
      return work.cancelOperation(param(request, 'id'), actorOf(request));
    },
    { body: bodies.empty, response: responses.operationView },
  );
  route(
    'GET',
    '/operations/:id/events',
    'viewer',
    'state changes (Server-Sent Events)',
    async (request, reply) => {
      const id = param(request, 'id');
      await work.getOperation(id);
      // Operations publish no state changes yet (only cancel requests): polled.
      await stream(request, reply, async (send, signal) => {
        let last = '';
        while (!signal.aborted) {
          const operation = await work.getOperation(id);
          if (operation.state !== last) send('state', operation);
          last = operation.state;
          if (isTerminal(operation.state)) return send('done', operation);
          await sleep(250);
        }
      });
    },
    { raw: true },
  );

  // ---- schedules ----
  route('GET', '/schedules', 'viewer', 'recurring inspections', () => runtime.schedules.list(), {
    response: z.array(responses.schedule),
  });
  route(
    'POST',
    '/schedules',
    'admin',
    'add a recurring inspection (an interval or a cron pattern)',
    async (request) => addSchedule(runtime, body(bodies.addSchedule, request), actorOf(request)),
    { body: bodies.addSchedule, status: 201, response: responses.schedule },
  );
  route(
    'DELETE',
    '/schedules/:id',
    'admin',
    'stop a recurring inspection',
    async (request) => removeSchedule(runtime, param(request, 'id'), actorOf(request)),
    { response: responses.removedSchedule },
  );

  // ---- audit and tokens ----
  route(
    'GET',
    '/audit',
    'viewer',
    'newest audit entries, filtered (actor, action prefix, excludeAction prefix, target, since), paginated',
    async (request) => {
      const { since, ...filters } = query(auditQuery, request);
      const page = await queryAudit(core.redis, core.keys, {
        ...withoutUndefined(filters),
        ...(since !== undefined ? { withinMs: since } : {}),
      });
      // Details redacted again as read (entries written before redaction covered them);
      // actors (`token:<name>`) are names, not secrets.
      return { ...page, items: page.items.map((entry) => ({ ...entry, detail: redactDeep(entry.detail) })) };
    },
    { response: responses.page(responses.auditEntry) },
  );
  route('GET', '/tokens', 'admin', 'list tokens (with expiry and last use)', () => tokens.list(), {
    response: z.array(responses.tokenView),
  });
  route(
    'POST',
    '/tokens',
    'admin',
    'create a token (its secret is shown once)',
    async (request) => {
      const input = body(bodies.createToken, request);
      return tokens.create(input.name, input.role, actorOf(request), {
        ...(input.expiresInMs !== undefined ? { expiresInMs: input.expiresInMs } : {}),
      });
    },
    { body: bodies.createToken, status: 201, response: responses.createdToken },
  );
  route(
    'DELETE',
    '/tokens/:id',
    'admin',
    'revoke a token',
    async (request) => {
      const revoked = await tokens.revoke(param(request, 'id'), actorOf(request));
      return { id: revoked.id, revoked: true };
    },
    { response: responses.revokedToken },
  );
  route(
    'GET',
    '/me',
    'viewer',
    'the token making this request: its name, role and expiry',
    async (request) => {
      const { id, name, role, expiresAt } = request.token!;
      return { id, name, role, ...(expiresAt ? { expiresAt } : {}) };
    },
    { response: responses.me },
  );
  route('GET', '/openapi.json', 'viewer', 'this document', async () => openApiDocument(docs), {
    response: responses.openApi,
  });

  // ---- unauthenticated ----
  app.get('/healthz', async (_request, reply) => {
    // liveness() answers redis:false at once while Redis is unreachable (no offline queue).
    const state = await liveness(core.redis, core.keys, runtime.queues);
    return reply
      .code(state.ok ? 200 : 503)
      .send({ status: state.ok ? 'ok' : 'starting', api: true, ...state });
  });
  app.get('/metrics', async (_request, reply) =>
    reply.type('text/plain; version=0.0.4; charset=utf-8').send(await renderMetrics(runtime)),
  );
  app.get('/', (_request, reply) => sendUiFile(reply, 'index.html'));
  app.get('/:file', (request, reply) => sendUiFile(reply, (request.params as { file: string }).file));

  return app;
}

async function sendUiFile(reply: FastifyReply, file: string) {
  if (!UI_FILE.test(file)) throw new ProblemError(404, `no file ${file}`);
  let content: Buffer;
  try {
    content = await readFile(new URL(file, `file://${UI_DIR}`));
  } catch {
    throw new ProblemError(404, `no file ${file}`);
  }
  return reply.type(CONTENT_TYPES[file.split('.').pop()!] ?? 'application/octet-stream').send(content);
}

function parseOrProblem<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
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

function toProblem(error: unknown, request: FastifyRequest, logger: Logger): ProblemError {
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
    return new ProblemError(413, `the request body is larger than ${BODY_LIMIT} bytes`);
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return new ProblemError(415, 'send the body as application/json');
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

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/** RFC 9457 problem document; detail and field messages redacted (they can quote plugin output). */
function sendProblem(reply: FastifyReply, problem: ProblemError) {
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
      ...(problem.extra.code ? { code: problem.extra.code } : {}),
      ...(problem.extra.requiredRole ? { requiredRole: problem.extra.requiredRole } : {}),
      ...(problem.errors ? { errors: redactDeep(problem.errors) } : {}),
      ...(problem.extra.requestId ? { requestId: problem.extra.requestId } : {}),
    });
}

/** A Server-Sent Events response; ends when `body` returns or the client goes away. */
function withoutResults({ results: _results, ...batch }: BatchView): Omit<BatchView, 'results'> {
  return batch;
}

/** Optional query fields that were not given, left out (exactOptionalPropertyTypes). */
function withoutUndefined<T extends object>(value: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as never;
}

async function stream(
  request: FastifyRequest,
  reply: FastifyReply,
  body: (send: (event: string, data: unknown) => void, signal: AbortSignal) => Promise<void>,
): Promise<void> {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
  });
  let open = true;
  const gone = new AbortController();
  raw.on('close', () => {
    open = false;
    gone.abort();
  });
  const send = (event: string, data: unknown) => {
    if (open) raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  try {
    await body((event, data) => {
      if (!open) throw new Error('client gone');
      send(event, data);
    }, gone.signal);
  } catch {
    // the client went away, or the record vanished: just end the stream
  } finally {
    raw.end();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export type Api = FastifyInstance;
