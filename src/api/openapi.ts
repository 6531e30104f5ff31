// The OpenAPI document (/api/v1/openapi.json), generated from the contract's
// route table as the route kit registered it: the same zod schemas the api
// validates with (z.toJSONSchema).
import { z } from 'zod';
import { problem, type HttpRoute } from '../core/contract/index.js';

/** A registered route: its contract entry, and the problem statuses it answers beyond the common ones. */
export interface RouteDoc extends HttpRoute {
  errors?: Record<string, string>;
}

/** JSON Schema (2020-12) of a zod schema, as the response or the request body is sent. */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  return z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
}

const problemContent = { 'application/problem+json': { schema: jsonSchemaOf(problem, 'output') } };
const ERRORS: Record<string, string> = {
  '400': 'invalid request',
  '401': 'no token, or an unknown, revoked or expired one',
  '403': 'the role lacks the permission (requiredRole names the one needed)',
  '404': 'unknown id',
  '409': 'conflict with the current state',
  '429':
    'TOO_MANY_REQUESTS: the token (without one, the address) sent more requests than its rate limit; see Retry-After',
  '503': 'Redis cannot be reached, or REQUEST_TOO_SLOW: the request took longer than its time budget',
};

export function openApiDocument(routes: readonly RouteDoc[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = `/api/v1${route.path}`.replace(/:(\w+)/g, '{$1}');
    const parameters: Record<string, unknown>[] = [...route.path.matchAll(/:(\w+)/g)].map((match) => ({
      name: match[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    if (route.query) {
      const query = jsonSchemaOf(route.query, 'input') as {
        properties?: Record<string, unknown>;
        required?: string[];
      };
      for (const [name, schema] of Object.entries(query.properties ?? {}))
        parameters.push({ name, in: 'query', required: query.required?.includes(name) ?? false, schema });
    }
    paths[path] ??= {};
    const status = route.status ?? 200;
    paths[path][route.method.toLowerCase()] = {
      summary: route.summary,
      description: `Requires role: ${route.role}.`,
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(route.body
        ? {
            requestBody: {
              required: true,
              content: { 'application/json': { schema: jsonSchemaOf(route.body, 'input') } },
            },
          }
        : {}),
      responses: {
        ...Object.fromEntries(
          [status, ...(route.alsoStatus ? [route.alsoStatus] : [])].map((status) => [
            String(status),
            {
              description: 'OK',
              content: route.response
                ? { 'application/json': { schema: jsonSchemaOf(route.response, 'output') } }
                : Object.fromEntries(
                    (route.streams ?? ['text/event-stream']).map((type) => [
                      type,
                      { schema: { type: 'string' } },
                    ]),
                  ),
            },
          ]),
        ),
        ...Object.fromEntries(
          Object.entries({ ...ERRORS, ...route.errors }).map(([status, description]) => [
            status,
            { description, content: problemContent },
          ]),
        ),
      },
      security: [{ bearer: [] }],
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Switchyard API', version: 'v1' },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    paths,
  };
}
