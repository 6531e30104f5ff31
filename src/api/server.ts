// The HTTP API (/api/v1) and the review web UI, over the same core services as
// the CLI. This module builds the Fastify instance: security headers, body
// parsing, problem answers, and the routes — each area's in ./routes, each
// /api/v1 route behind a bearer token with a sufficient role (authentication.ts).
import { randomUUID } from 'node:crypto';
import helmet from '@fastify/helmet';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ERROR_CODES, createLogger } from '../core/platform/index.js';
import type { Runtime } from '../core/runtime/index.js';
import { authenticator, tokenStillValid } from './authentication.js';
import { renderMetrics } from './metrics.js';
import { ProblemError, sendProblem, toProblem } from './problems.js';
import { BODY_LIMIT } from './request-limits.js';
import { limitRequestRates, requestBudgetFromEnv, type RequestBudget } from './request-budget.js';
import { routes } from '../core/contract/index.js';
import { answerJsonWithProblems, registerApiRoutes } from './api-routes.js';
import { openApiDocument } from './openapi.js';
import { BEFORE_HOOKS_HEADERS, CACHE_HEADERS, HELMET_OPTIONS } from './security-headers.js';
import { keepAliveMsFromEnv, streamLimitsFromEnv, type StreamLimits } from './stream-limits.js';
import { sendUiFile } from './ui-files.js';
import { hostAllowed, hostnameOf } from './host-allowlist.js';

export { BODY_LIMIT, MAX_JSON_DEPTH } from './request-limits.js';
export { ProblemError } from './problems.js';
export type { ApiDeps } from './route-kit.js';

/** Every request gets an id; a 500 carries it and the api log files the error under it. */
export function newRequestId(): string {
  return `req_${randomUUID()}`;
}

export interface BuildOptions {
  /** Open event streams per token and per process (default: streamLimitsFromEnv()). */
  streamLimits?: Partial<StreamLimits>;
  /** How often an event stream sends a keep-alive comment (default: keepAliveMsFromEnv()). */
  streamKeepAliveMs?: number;
  /** Serve HTTPS with this certificate and key (PEM). */
  https?: { cert: Buffer; key: Buffer };
  /** Host names /healthz and /metrics answer besides IP literals and loopback names (host-allowlist.ts). */
  allowedHosts?: Iterable<string>;
  /** Requests per token and window, and one request's time (default: requestBudgetFromEnv()). */
  requestBudget?: Partial<RequestBudget>;
}

export async function buildApi(
  runtime: Runtime,
  tokens = runtime.tokens,
  logger: Logger = createLogger('api'),
  options: BuildOptions = {},
) {
  const app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT,
    genReqId: newRequestId,
    ...(options.https ? { https: options.https } : {}),
    // A URL the router cannot decode (`%zz`) is answered before any hook: a problem too.
    // `void`: the reply sent is a thenable Fastify does not await here; nothing is left to wait for.
    frameworkErrors: (error, request, reply) => {
      void sendProblem(reply.headers(BEFORE_HOOKS_HEADERS), toProblem(error, request, logger));
    },
  }) as FastifyInstance;

  await app.register(helmet, HELMET_OPTIONS);
  app.addHook('onRequest', async (_request, reply) => {
    // On the raw response, as helmet's: a hijacked event stream keeps it.
    for (const [name, value] of Object.entries(CACHE_HEADERS)) reply.raw.setHeader(name, value);
  });

  answerJsonWithProblems(app, logger);

  /** Same-origin only: a browser request from another origin is refused. */
  app.addHook('onRequest', async (request) => {
    const origin = request.headers.origin;
    if (origin && request.url.startsWith('/api/')) {
      const host = request.headers.host;
      if (!host || (origin !== `http://${host}` && origin !== `https://${host}`)) {
        throw ProblemError.of(
          ERROR_CODES.CROSS_ORIGIN_REFUSED,
          `cross-origin requests are refused (origin ${origin})`,
        );
      }
    }
  });

  // ---- /api/v1: registration order is route order in the OpenAPI document ----
  const budget = { ...requestBudgetFromEnv(), ...options.requestBudget };
  await limitRequestRates(app, budget);
  // Each keep-alive also asks again whether the stream's token is valid (a revoked one loses its streams).
  const kit = registerApiRoutes(app, {
    runtime,
    tokens,
    authenticate: authenticator(tokens),
    budgetMs: budget.requestMs,
    streamLimits: { ...streamLimitsFromEnv(), ...options.streamLimits },
    keepAliveMs: options.streamKeepAliveMs ?? keepAliveMsFromEnv(),
    stillAllowed: tokenStillValid(tokens),
  });
  kit.route(routes.openApi, () => openApiDocument(kit.docs));

  // ---- unauthenticated: only for a Host that names this api (DNS rebinding) ----
  const allowedHosts = new Set(options.allowedHosts ?? []);
  const unauthenticated = { onRequest: refuseForeignHost(allowedHosts) };
  app.get('/healthz', unauthenticated, async (_request, reply) => {
    // liveness() answers redis:false at once while Redis is unreachable (no offline queue).
    const state = await runtime.maintenance.liveness();
    return reply
      .code(state.ok ? 200 : 503)
      .send({ status: state.ok ? 'ok' : 'starting', api: true, ...state });
  });
  app.get('/metrics', unauthenticated, async (_request, reply) =>
    reply.type('text/plain; version=0.0.4; charset=utf-8').send(await renderMetrics(runtime)),
  );
  app.get('/', (_request, reply) => sendUiFile(reply, 'index.html'));
  app.get('/:file', (request, reply) => sendUiFile(reply, (request.params as { file: string }).file));

  return app;
}

export type Api = FastifyInstance;

function refuseForeignHost(allowed: ReadonlySet<string>) {
  return async (request: { headers: { host?: string | undefined } }) => {
    const { host } = request.headers;
    if (hostAllowed(host, allowed)) return;
    const name = hostnameOf(host);
    throw ProblemError.of(
      ERROR_CODES.HOST_NOT_ALLOWED,
      name === undefined
        ? 'this route needs a Host header that names this api'
        : `this api does not answer for the host ${JSON.stringify(name)} here; an administrator can allow it with --allowed-host ${name}`,
    );
  };
}
