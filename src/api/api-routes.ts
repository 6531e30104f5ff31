// What the api and the CLI's in-process api (in-process.ts) share: JSON bodies
// in, problem documents out, and the /api/v1 routes of each area (./routes)
// over the core services, behind the `authenticate` each of them brings.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ERROR_CODES } from '../core/platform/index.js';
import type { Runtime } from '../core/runtime/index.js';
import type { TokenStore } from '../core/access/index.js';
import { ProblemError, sendProblem, toProblem } from './problems.js';
import { MAX_JSON_DEPTH, jsonDepthExceeds } from './request-limits.js';
import { createRouteKit, type ApiDeps, type Authenticate, type RouteKit } from './route-kit.js';
import { registerAuditRoutes } from './routes/audit-routes.js';
import { registerBatchRoutes } from './routes/batch-routes.js';
import { registerOperationRoutes } from './routes/operation-routes.js';
import { registerPluginRoutes } from './routes/plugin-routes.js';
import { registerProjectRoutes } from './routes/project-routes.js';
import { registerRolloutRoutes } from './routes/rollout-routes.js';
import { registerScheduleRoutes } from './routes/schedule-routes.js';
import { registerWebhookRoutes } from './routes/webhook-routes.js';
import { registerTokenRoutes } from './routes/token-routes.js';
import { serveEventStreams, type StillAllowed } from './sse.js';
import { StreamSlots, type StreamLimits } from './stream-limits.js';

/**
 * JSON bodies only (Fastify's own text/plain parser would hand a route a string: a 400
 * instead of the 415 any other media type gets); an empty body counts as {} so routes
 * that take nothing accept a bare POST. Every error is answered as a problem document.
 */
export function answerJsonWithProblems(
  app: FastifyInstance,
  logger: Logger,
  /** Hears each error before it is answered (the in-process api keeps the core's own errors). */
  onError: (error: unknown, request: FastifyRequest) => void = () => {},
): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, {});
    if (jsonDepthExceeds(text, MAX_JSON_DEPTH))
      return done(
        ProblemError.of(
          ERROR_CODES.JSON_TOO_DEEP,
          `the request body nests deeper than ${MAX_JSON_DEPTH} levels`,
        ),
      );
    try {
      done(null, JSON.parse(text));
    } catch {
      done(ProblemError.of(ERROR_CODES.INVALID_INPUT, 'the request body is not valid JSON'), undefined);
    }
  });

  app.setErrorHandler((error, request, reply) => {
    onError(error, request);
    return sendProblem(reply, toProblem(error, request, logger));
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      reply,
      ProblemError.of(ERROR_CODES.ROUTE_NOT_FOUND, `no route ${request.method} ${request.url.split('?')[0]}`),
    ),
  );
}

export interface ApiRoutesOptions {
  runtime: Runtime;
  tokens: TokenStore;
  authenticate: Authenticate;
  /** One request's time budget; undefined: none. */
  budgetMs: number | undefined;
  streamLimits: StreamLimits;
  /** How often an event stream sends a keep-alive comment and asks `stillAllowed`. */
  keepAliveMs: number;
  stillAllowed: StillAllowed;
}

/** Registers every /api/v1 route of the areas (registration order is route order in the OpenAPI document). */
export function registerApiRoutes(app: FastifyInstance, options: ApiRoutesOptions): RouteKit {
  const kit = createRouteKit(app, options.authenticate, options.budgetMs);
  const streams = new StreamSlots(options.streamLimits);
  // Open event streams end when the app closes, so stopping the api never waits for one.
  serveEventStreams(app, { keepAliveMs: options.keepAliveMs, stillAllowed: options.stillAllowed });
  const deps: ApiDeps = { runtime: options.runtime, tokens: options.tokens, streams };
  registerPluginRoutes(kit, deps);
  registerProjectRoutes(kit, deps);
  registerBatchRoutes(kit, deps);
  registerOperationRoutes(kit, deps);
  registerRolloutRoutes(kit, deps);
  registerScheduleRoutes(kit, deps);
  registerWebhookRoutes(kit, deps);
  registerAuditRoutes(kit, deps);
  registerTokenRoutes(kit, deps);
  return kit;
}
