// Strict zod schemas for every message of switchyard.plugin/v1. Strict means an
// unknown field is an error at every level, as the Go original's decoder does.
// zod/mini keeps a bundled plugin's start-up cheap (see bench/cold-start).
import * as z from 'zod/mini';
import { CAPABILITIES, MANIFEST_SCHEMA_VERSION, PROTOCOL_VERSION, SCOPES } from './constants.js';

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

export const rfc3339Time = z.string().check(
  z.refine((value) => RFC3339.test(value) && !Number.isNaN(Date.parse(value)), {
    message: 'must be an RFC 3339 time such as 2026-12-02T15:04:05Z',
  }),
);

const notBlank = (max: number) =>
  z.string().check(
    z.refine((value) => value.trim() !== '', { message: 'must not be blank' }),
    z.maxLength(max, { message: `must be at most ${max} characters` }),
  );

function uniqueArray<T extends z.core.SomeType>(item: T, min: number, max: number) {
  return z.array(item).check(
    z.minLength(min, { message: `must have at least ${min} value${min === 1 ? '' : 's'}` }),
    z.maxLength(max, { message: `must have at most ${max} values` }),
    z.refine((values) => new Set(values).size === values.length, {
      message: 'must not repeat a value',
    }),
  );
}

export const capabilitySchema = z.enum(CAPABILITIES);
export const scopeSchema = z.enum(SCOPES);

export const PLUGIN_ID_PATTERN = /^[a-z][a-z0-9.-]{0,63}$/;

const utf8Length = (value: string) => Buffer.byteLength(value, 'utf8');

/** The identity fields: what `initialize` echoes (no executable, no arguments). */
const identityShape = {
  schemaVersion: z.literal(MANIFEST_SCHEMA_VERSION, {
    message: `must be exactly ${MANIFEST_SCHEMA_VERSION}`,
  }),
  id: z.string().check(
    z.regex(PLUGIN_ID_PATTERN, {
      message: 'must match ^[a-z][a-z0-9.-]{0,63}$ (lower-case letter first, then a-z 0-9 . -)',
    }),
  ),
  name: notBlank(120),
  version: notBlank(64),
  protocolVersion: z.string(),
  capabilities: uniqueArray(capabilitySchema, 1, 16),
  requestedScopes: uniqueArray(scopeSchema, 0, 16),
};

export const pluginIdentitySchema = z.strictObject(identityShape);

export const manifestSchema = z.strictObject({
  ...identityShape,
  executable: z
    .string()
    .check(z.minLength(1, { message: 'is required: the path of the executable inside the package' })),
  arguments: z.optional(
    z
      .array(
        z.string().check(
          z.refine((value) => utf8Length(value) <= 4096, {
            message: 'must be at most 4,096 bytes',
          }),
          z.refine((value) => !value.includes('\0'), { message: 'must not contain NUL' }),
        ),
      )
      .check(z.maxLength(32, { message: 'must have at most 32 entries' })),
  ),
});

export type Manifest = z.infer<typeof manifestSchema>;
export type PluginIdentity = z.infer<typeof pluginIdentitySchema>;

export const initializeParamsSchema = z.strictObject({
  protocolVersion: z.string(),
  hostVersion: z.string(),
  grantedScopes: z.array(scopeSchema).check(
    z.refine((values) => new Set(values).size === values.length, {
      message: 'must not repeat a scope',
    }),
  ),
});
export type InitializeParams = z.infer<typeof initializeParamsSchema>;

export const initializeResultSchema = z.strictObject({
  protocolVersion: z.string(),
  plugin: pluginIdentitySchema,
  grantedScopes: z.array(scopeSchema),
});
export type InitializeResult = z.infer<typeof initializeResultSchema>;

export const healthParamsSchema = z.strictObject({});
export const HEALTH_STATUSES = ['healthy', 'degraded', 'unhealthy'] as const;
export const healthResultSchema = z.strictObject({
  status: z.enum(HEALTH_STATUSES),
  message: z.optional(z.string()),
  checkedAt: rfc3339Time,
});
export type HealthResult = z.infer<typeof healthResultSchema>;

export const projectSchema = z.strictObject({
  id: z.string(),
  displayName: z.string(),
  root: z.optional(z.string()),
});
export type Project = z.infer<typeof projectSchema>;

export const factSchema = z.strictObject({
  id: z.string(),
  label: z.string(),
  value: z.string(),
  source: z.string(),
  warning: z.optional(z.string()),
});
export type Fact = z.infer<typeof factSchema>;

export const actionSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  risk: z.string(),
});
export type Action = z.infer<typeof actionSchema>;

export const inspectParamsSchema = z.strictObject({ project: projectSchema });
export type InspectParams = z.infer<typeof inspectParamsSchema>;

export const inspectResultSchema = z.strictObject({
  summary: z.string(),
  facts: z.array(factSchema),
  actions: z.array(actionSchema),
  warnings: z.array(z.string()),
  observedAt: rfc3339Time,
});
export type InspectResult = z.infer<typeof inspectResultSchema>;

/** Any JSON value (what JSON.parse can return). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
const jsonValueSchema = z.custom<JsonValue>((value) => value !== undefined, {
  message: 'is required (any JSON value)',
});

export const operateParamsSchema = z.strictObject({
  project: projectSchema,
  action: z.string(),
  input: jsonValueSchema,
});
export type OperateParams = z.infer<typeof operateParamsSchema>;

export const OPERATE_STATUSES = ['succeeded', 'partially_succeeded', 'failed'] as const;
export const operateResultSchema = z.strictObject({
  status: z.enum(OPERATE_STATUSES),
  summary: z.string(),
  output: jsonValueSchema,
});
export type OperateResult = z.infer<typeof operateResultSchema>;

/** JSON-RPC ids: present, not null; the host sends integers from 1. */
export const requestIdSchema = z.union([z.number(), z.string()]);
export type RequestId = z.infer<typeof requestIdSchema>;

export const requestSchema = z.strictObject({
  jsonrpc: z.literal('2.0'),
  id: requestIdSchema,
  method: z.string(),
  params: z.optional(z.record(z.string(), z.unknown())),
});
export type Request = z.infer<typeof requestSchema>;

export const rpcErrorSchema = z.strictObject({
  code: z.int(),
  message: z.string(),
});
export type RpcError = z.infer<typeof rpcErrorSchema>;

export const successResponseSchema = z.strictObject({
  jsonrpc: z.literal('2.0'),
  id: z.union([requestIdSchema, z.null()]),
  result: z.custom<unknown>((value) => value !== undefined, { message: 'is required' }),
});
export const errorResponseSchema = z.strictObject({
  jsonrpc: z.literal('2.0'),
  id: z.union([requestIdSchema, z.null()]),
  error: rpcErrorSchema,
});

/** Params and result schema of each method, in one place for server and client. */
export const methodSchemas = {
  initialize: { params: initializeParamsSchema, result: initializeResultSchema },
  'plugin.health': { params: healthParamsSchema, result: healthResultSchema },
  'project.inspect': { params: inspectParamsSchema, result: inspectResultSchema },
  'project.operate': { params: operateParamsSchema, result: operateResultSchema },
} as const;

/** The methods of switchyard.plugin/v1: exactly those with schemas above. */
export type Method = keyof typeof methodSchemas;
export const METHODS = Object.keys(methodSchemas) as Method[];
export type MethodParams<M extends Method> = z.infer<(typeof methodSchemas)[M]['params']>;
export type MethodResult<M extends Method> = z.infer<(typeof methodSchemas)[M]['result']>;

export { PROTOCOL_VERSION };

/** Parse options that keep each issue's input, so a missing field can be told from a mistyped one. */
export const REPORT_INPUT = { reportInput: true } as const;

/** "field.path: message" for each zod issue, the form every error here uses. */
export function describeIssues(error: z.core.$ZodError, prefix = ''): string[] {
  return error.issues.map((issue) => {
    const path = [prefix, ...issue.path.map(String)].filter((part) => part !== '').join('.');
    const message = describeIssue(issue);
    return path === '' ? message : `${path}: ${message}`;
  });
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    return `unknown field${issue.keys.length === 1 ? '' : 's'} ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}`;
  }
  if (issue.code === 'invalid_type') {
    const expected = issue.expected === 'record' ? 'object' : issue.expected;
    return issue.input === undefined
      ? `is required (${expected})`
      : `must be ${/^[aeiou]/.test(expected) ? 'an' : 'a'} ${expected}, not ${describeType(issue.input)}`;
  }
  if (issue.code === 'invalid_value' && issue.values.length > 1) {
    return `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
  }
  return issue.message;
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
