// How a route module registers its routes: `route(...)` authenticates with the
// role it names, answers with the handler's result, and records the route for
// the OpenAPI document (/api/v1/openapi.json) in registration order.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Runtime } from '../core/runtime/index.js';
import type { Role, TokenStore } from '../core/access/index.js';
import { parseOrProblem } from './problems.js';
import type { RouteDoc } from './schemas.js';
import type { StreamSlots } from './stream-limits.js';

/** What the route modules work on: the core services, the token store, the event stream slots. */
export interface ApiDeps {
  runtime: Runtime;
  tokens: TokenStore;
  streams: StreamSlots;
}

export type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

export interface RouteOptions {
  body?: z.ZodType;
  status?: number;
  /** The handler answers itself (reply.send, a stream): its result is not sent. */
  raw?: boolean;
  /** The response body's schema (none: a Server-Sent Events stream). */
  response?: z.ZodType;
  /** Other success statuses with the same body (an idempotent replay: 200). */
  alsoStatus?: number;
  /** Media types of a streamed body other than Server-Sent Events. */
  streams?: string[];
  /** Problem statuses this route answers beyond the common ones, with what each means. */
  errors?: Record<string, string>;
}

export interface RouteKit {
  /** Registers `/api/v1<path>` for tokens with at least `role`, and documents it. */
  route(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    role: Role,
    summary: string,
    handler: Handler,
    options?: RouteOptions,
  ): void;
  /** The request body, validated (a 400 problem otherwise). */
  body<T>(schema: z.ZodType<T>, request: FastifyRequest): T;
  /** The query string, validated (a 400 problem otherwise). */
  query<T>(schema: z.ZodType<T>, request: FastifyRequest): T;
  param(request: FastifyRequest, name: string): string;
  /** The audit actor of an authenticated request: `token:<name>`. */
  actorOf(request: FastifyRequest): string;
  /** Every route registered so far, for the OpenAPI document. */
  readonly docs: readonly RouteDoc[];
}

export function createRouteKit(
  app: FastifyInstance,
  authenticate: (request: FastifyRequest, needed: Role) => Promise<void>,
): RouteKit {
  const docs: RouteDoc[] = [];
  return {
    docs,
    route(method, path, role, summary, handler, options = {}) {
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
        ...(options.errors ? { errors: options.errors } : {}),
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
    },
    body: (schema, request) => parseOrProblem(schema, request.body ?? {}, 'body'),
    query: (schema, request) => parseOrProblem(schema, request.query ?? {}, 'query'),
    param: (request, name) => (request.params as Record<string, string>)[name]!,
    actorOf: (request) => `token:${request.token?.name ?? 'unknown'}`,
  };
}

/** Optional query fields that were not given, left out (exactOptionalPropertyTypes). */
export function withoutUndefined<T extends object>(value: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as never;
}
