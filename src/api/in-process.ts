// The api's routes built inside the CLI's own process for local mode: the same
// contract, route handlers and problem answers as `switchyard api`, reached
// through Fastify's inject (light-my-request), never a socket. Only what the
// routes need is built (no security headers, rate limit, UI, /healthz, OpenAPI
// document), and only when a command first calls.
//
// Who calls is the local OS user with the authority local mode has always had
// (admin: it holds Redis and the data dir anyway). That identity is given here
// and nowhere else: this app never listens, and a request that did not come
// through inject (one that came over a connection) is refused all the same.
// The HTTP api's authenticator knows only bearer tokens.
import type { IncomingMessage } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { pino } from 'pino';
import type { TokenView } from '../core/access/index.js';
import { ERROR_CODES } from '../core/platform/index.js';
import type { Runtime } from '../core/runtime/index.js';
import { answerJsonWithProblems, registerApiRoutes } from './api-routes.js';
import { ProblemError } from './problems.js';
import { BODY_LIMIT } from './request-limits.js';
import { DEFAULT_KEEP_ALIVE_MS } from './stream-limits.js';

export interface InProcessApi {
  readonly app: FastifyInstance;
  /**
   * The error a failed request's handler threw, when it is the core's own (not
   * one of the api's problems): the CLI raises it as local mode always did,
   * message and all, rather than its problem document (which hides a 500's).
   */
  thrownBy(request: IncomingMessage): unknown;
}

/** A request light-my-request made (app.inject); one from a socket has no such mark. */
function injected(request: FastifyRequest): boolean {
  return Object.hasOwn(request.raw, '_lightMyRequest');
}

/** The routes over `runtime`, every call acting as `actor` (the local OS user, `user:<name>@<host>`). */
export async function buildInProcessApi(runtime: Runtime, actor: string): Promise<InProcessApi> {
  const app = Fastify({ logger: false, bodyLimit: BODY_LIMIT }) as FastifyInstance;
  const thrown = new WeakMap<IncomingMessage, unknown>();
  // The CLI is the one reader of this app's answers: its errors are the CLI's, not a log's.
  answerJsonWithProblems(app, pino({ enabled: false }), (error, request) => {
    if (!(error instanceof ProblemError)) thrown.set(request.raw, error);
  });
  const local: TokenView = {
    // The local OS user's own identity (a rollout's two-person rule and Idempotency-Key scope compare it).
    id: `local:${actor}`,
    name: actor,
    role: 'admin',
    createdAt: new Date(0).toISOString(),
    createdBy: actor,
  };
  registerApiRoutes(app, {
    runtime,
    tokens: runtime.tokens,
    authenticate: async (request) => {
      if (!injected(request))
        throw ProblemError.of(
          ERROR_CODES.UNAUTHENTICATED,
          'the in-process api answers only the command that built it, never a connection',
        );
      request.token = local;
      return actor;
    },
    // Local work was never cut short nor limited: a scan of a big tree takes as long as it takes.
    budgetMs: undefined,
    streamLimits: { perToken: Number.MAX_SAFE_INTEGER, perProcess: Number.MAX_SAFE_INTEGER },
    keepAliveMs: DEFAULT_KEEP_ALIVE_MS,
    stillAllowed: async () => true,
  });
  await app.ready();
  return { app, thrownBy: (request) => thrown.get(request) };
}
