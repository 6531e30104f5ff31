// Request bodies of the HTTP API, strict (unknown fields rejected), and the
// OpenAPI document generated from these and the response schemas
// (responses.ts), both with z.toJSONSchema.
import { z } from 'zod';
import { SCOPES } from '@switchyard/plugin-sdk/protocol';
import ms from 'ms';
import { EXPORT_FORMATS, BATCH_STATES } from '../core/work/batches/index.js';
import { MAX_LIST_LIMIT } from '../core/platform/index.js';
import { OPERATION_STATES } from '../core/work/operations/index.js';
import { MAX_PAGE_LIMIT } from '../core/redis/index.js';
import { MAX_EXPIRY_MS, ROLES } from '../core/access/index.js';
import { MAX_LIMIT_MS } from '../core/plugins/index.js';
import { problem } from './responses.js';

const json: z.ZodType<unknown> = z.json();
// The api's own working directory means nothing to a caller: paths must be absolute.
const absolutePath = z.string().refine((value) => value.startsWith('/'), 'must be an absolute path');

export const bodies = {
  empty: z.strictObject({}),
  trust: z.strictObject({
    fingerprint: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'must be the 64 lower-case hex characters of the fingerprint'),
  }),
  enable: z.strictObject({ scopes: z.array(z.enum(SCOPES)).min(1, 'grant at least one scope') }),
  addProject: z.strictObject({
    path: absolutePath,
    id: z.string().min(1).optional(),
    name: z.string().min(1).optional(),
    trust: z.boolean().optional(),
  }),
  scanProjects: z.strictObject({ dir: absolutePath, trust: z.boolean().optional() }),
  createBatch: z.strictObject({
    pluginId: z.string().min(1),
    projects: z.union([z.literal('all'), z.array(z.string().min(1)).min(1)]),
  }),
  createOperation: z.strictObject({
    pluginId: z.string().min(1),
    projectId: z.string().min(1),
    action: z.string().min(1),
    /** One JSON object ({} when absent), as the original host requires. */
    input: z.record(z.string(), json).optional(),
    /** May only shorten the plugin's operate limit (400 naming the limit otherwise). */
    timeoutMs: z.number().int().min(1).optional(),
  }),
  timeLimits: z.strictObject({
    inspectTimeoutMs: z.number().int().min(1_000).max(MAX_LIMIT_MS).optional(),
    operateTimeoutMs: z.number().int().min(1_000).max(MAX_LIMIT_MS).optional(),
  }),
  retryBatch: z.strictObject({ failedOnly: z.boolean().optional() }),
  createToken: z.strictObject({
    name: z.string().min(1).max(64),
    role: z.enum(ROLES),
    expiresInMs: z.number().int().min(60_000).max(MAX_EXPIRY_MS).optional(),
  }),
  // The same checks as the store's (schedules.ts) run again there; these name the field.
  addSchedule: z.strictObject({
    pluginId: z.string().min(1),
    projects: z.union([z.literal('all'), z.array(z.string().min(1)).min(1)]),
    everyMs: z.number().int().min(1_000).optional(),
    cron: z.string().min(1).optional(),
  }),
};

export const limitQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(MAX_LIST_LIMIT).optional(),
});

// ---- lists that scale: filters and cursor pagination (pages.ts) ----
const pageQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_LIMIT).optional(),
  cursor: z.string().min(1).max(500).optional(),
});
const id = z.string().min(1).max(200);
/** `30s`, `15m`, `2h`, `7d` (the ms package's forms) or a bare number of milliseconds. */
const duration = z.string().transform((text, context) => {
  const value = /^\d+$/.test(text) ? Number(text) : ms(text as ms.StringValue);
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    context.addIssue({ code: 'custom', message: 'must be a duration such as 30s, 15m, 2h or 7d' });
    return z.NEVER;
  }
  return value;
});
export const batchesQuery = pageQuery.extend({
  state: z.enum(BATCH_STATES).optional(),
  pluginId: id.optional(),
});
export const operationsQuery = pageQuery.extend({
  projectId: id.optional(),
  pluginId: id.optional(),
  state: z.enum(OPERATION_STATES).optional(),
});
export const auditQuery = pageQuery.extend({
  actor: id.optional(),
  action: id.optional(),
  excludeAction: id.optional(),
  target: id.optional(),
  since: duration.optional(),
});
export const diffQuery = z.strictObject({ from: id });
export const exportQuery = z.strictObject({ format: z.enum(EXPORT_FORMATS) });

export interface RouteDoc {
  method: string;
  path: string;
  role: string;
  summary: string;
  body?: z.ZodType;
  response?: z.ZodType;
  /** Media types of a streamed (non-JSON) body; none and no response: Server-Sent Events. */
  streams?: string[];
  status: number;
  alsoStatus?: number;
  /** Problem statuses beyond the common ones (ERRORS), with what each means. */
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
  '503': 'Redis cannot be reached',
};

export function openApiDocument(routes: RouteDoc[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    const parameters = [...route.path.matchAll(/:(\w+)/g)].map((match) => ({
      name: match[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    paths[path] ??= {};
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
          [route.status, ...(route.alsoStatus ? [route.alsoStatus] : [])].map((status) => [
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

/**
 * True when a JSON text nests objects and arrays deeper than `max`. Scanned
 * without parsing or recursion, so a body 100,000 levels deep costs one pass.
 */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text.charCodeAt(index);
    if (inString) {
      if (char === 0x5c)
        index++; // backslash: skip the escaped character
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) inString = true;
    else if (char === 0x7b || char === 0x5b) {
      if (++depth > max) return true;
    } else if (char === 0x7d || char === 0x5d) depth--;
  }
  return false;
}
