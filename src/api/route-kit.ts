// How a route module registers its routes: `route(contract entry, handler)`
// authenticates with the role the entry names, validates the body and query
// with the entry's schemas (a 400 naming every wrong field otherwise), hands
// the handler the typed input, answers with its result, and records the
// entry for the OpenAPI document (/api/v1/openapi.json) in registration order.
// Each handler runs within the request's time budget (request-budget.ts),
// event streams aside: their handler lasts as long as the stream.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Runtime } from '../core/runtime/index.js';
import type { Role, TokenStore, TokenView } from '../core/access/index.js';
import type { BodyOut, HttpRoute, PathParams, QueryOut } from '../core/contract/index.js';
import type { RouteDoc } from './openapi.js';
import { parseOrProblem } from './problems.js';
import { withinBudget } from './request-budget.js';
import type { StreamSlots } from './stream-limits.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the request is (authentication.ts; in-process.ts): its role decides what a route shows. */
    token?: TokenView;
  }
}

/** What the route modules work on: the core services, the token store, the event stream slots. */
export interface ApiDeps {
  runtime: Runtime;
  tokens: TokenStore;
  streams: StreamSlots;
}

/** A handler's input: the validated body and query, and the path parameters. */
export interface RouteInput<R extends HttpRoute> {
  body: BodyOut<R>;
  query: QueryOut<R>;
  params: Record<PathParams<R['path']>, string>;
  /** The audit actor of the authenticated request: `token:<name>` (in-process: the local OS user). */
  actor: string;
  /** Aborts when the request's time budget is spent (never, for an event stream or in-process). */
  signal: AbortSignal;
}

export type Handler<R extends HttpRoute> = (
  input: RouteInput<R>,
  request: FastifyRequest,
  reply: FastifyReply,
) => unknown;

export interface RouteOptions {
  /**
   * The handler answers itself (reply.send, a stream): its result is not sent. One that sends a
   * body stream must not return the reply (a reply settles when its body ends: the request's time
   * budget would cover the whole body).
   */
  raw?: boolean;
  /** Problem statuses this route answers beyond the common ones, with what each means. */
  errors?: Record<string, string>;
}

export interface RouteKit {
  /** Registers `/api/v1<path>` of the contract entry for tokens with at least its role, and documents it. */
  route<R extends HttpRoute>(contract: R, handler: Handler<R>, options?: RouteOptions): void;
  /** Every route registered so far, for the OpenAPI document. */
  readonly docs: readonly RouteDoc[];
}

/**
 * Who may call a route: throws the 401/403 problem, or answers the request's
 * audit actor. The api's is the bearer token (authentication.ts); the CLI's
 * in-process api's is the local OS user (in-process.ts).
 */
export type Authenticate = (request: FastifyRequest, needed: Role) => Promise<string>;

/** `budgetMs` undefined: no time budget (the in-process api: local work takes as long as it takes). */
export function createRouteKit(
  app: FastifyInstance,
  authenticate: Authenticate,
  budgetMs: number | undefined,
): RouteKit {
  const docs: RouteDoc[] = [];
  return {
    docs,
    route(contract, handler, options = {}) {
      docs.push({ ...contract, ...(options.errors ? { errors: options.errors } : {}) });
      app.route({
        method: contract.method,
        url: `/api/v1${contract.path}`,
        handler: async (request, reply) => {
          const unbounded = contract.events !== undefined || budgetMs === undefined;
          const signal = unbounded ? new AbortController().signal : AbortSignal.timeout(budgetMs);
          const answer = async () => {
            const actor = await authenticate(request, contract.role);
            const input = {
              body: contract.body ? parseOrProblem(contract.body, request.body ?? {}, 'body') : undefined,
              query: contract.query
                ? parseOrProblem(contract.query, request.query ?? {}, 'query')
                : undefined,
              params: request.params,
              actor,
              signal,
            } as RouteInput<typeof contract>;
            return handler(input, request, reply);
          };
          const result = unbounded ? await answer() : await withinBudget(answer(), signal, budgetMs);
          if (options.raw) return reply;
          return reply.code(contract.status ?? 200).send(result);
        },
      });
    },
  };
}
