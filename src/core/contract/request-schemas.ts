// Request bodies and query strings of the HTTP API, strict (unknown fields
// rejected). The api validates with these, the CLI's remote backend sends
// their input types, and the OpenAPI document is generated from them.
import { z } from 'zod';
import { SCOPES } from '@switchyard/plugin-sdk/protocol';
import ms from 'ms';
import { EXPORT_FORMATS, BATCH_STATES, RESULT_STATUSES } from '../work/batches/index.js';
import { MAX_LIST_LIMIT } from '../platform/index.js';
import { OPERATION_FILTERS } from '../work/operations/index.js';
import { MAX_ROTATION_WINDOW_MS, WEBHOOK_EVENTS } from '../work/notify/index.js';
import { ROLLOUT_EXPORT_FORMATS, ROLLOUT_PROJECT_STATES, ROLLOUT_STATES } from '../work/rollouts/index.js';
import { MAX_PAGE_LIMIT } from '../redis/index.js';
import { MAX_EXPIRY_MS, ROLES } from '../access/index.js';
import {
  LIMIT_BOUNDS,
  MAX_ALLOW_READ,
  MAX_LIMIT_MS,
  MAX_RETENTION_BATCHES,
  MAX_RETENTION_DAYS,
  MIN_RETENTION_BATCHES,
  MAX_CONCURRENCY_CAP,
  type ResourceLimits,
} from '../plugins/index.js';

const json: z.ZodType<unknown> = z.json();
// The api's own working directory means nothing to a caller: paths must be absolute.
const absolutePath = z.string().refine((value) => value.startsWith('/'), 'must be an absolute path');
const projectSelection = z.union([z.literal('all'), z.array(z.string().min(1)).min(1)]);
// The same rule as the projects room's LABEL (checked there again).
const label = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9._-]{0,62}$/,
    'must be 1–63 lower-case characters: a-z or 0-9 first, then a-z 0-9 . _ -',
  );
/** A batch's projects: every trusted one, these ids, or those with a label (resolved at creation). */
const batchSelection = z.union([projectSelection, z.strictObject({ label })]);

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
  scanProjects: z.strictObject({
    dir: absolutePath,
    trust: z.boolean().optional(),
    labels: z.array(label).max(64).optional(),
    prune: z.boolean().optional(),
  }),
  labelProject: z.strictObject({ labels: z.array(label).min(1).max(64) }),
  createBatch: z.strictObject({
    pluginId: z.string().min(1),
    projects: batchSelection,
    /** Its class in the fair queue (default normal; high needs an admin token). */
    priority: z.enum(['high', 'normal', 'low']).optional(),
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
  /** A rollout: the selection (the intersection of those given), the plan; each checked again by the core. */
  createRollout: z.strictObject({
    pluginId: z.string().min(1),
    action: z.string().min(1),
    input: z.record(z.string(), json).optional(),
    name: z.string().min(1).max(100).optional(),
    all: z.boolean().optional(),
    labels: z.array(label).max(64).optional(),
    where: z.array(z.string().min(1).max(500)).max(64).optional(),
    advertised: z.boolean().optional(),
    projects: z.array(z.string().min(1)).max(100_000).optional(),
    waves: z.string().min(1).max(200).optional().describe('cumulative counts or shares: 1,10%,100%'),
    concurrency: z.number().int().min(1).max(100).optional(),
    maxFailures: z.string().min(1).max(20).optional().describe('N or P%'),
    pauseBetween: z.boolean().optional(),
    previewAction: z
      .string()
      .min(1)
      .optional()
      .describe(
        'an action of the same plugin, of risk none, run first on every project; then it awaits approval',
      ),
  }),
  /** POST /rollouts/:id/retry: which projects (only the failed ones, so far). */
  retryRollout: z.strictObject({ failed: z.literal(true) }),
  // The same names as the detail's `timeLimits`, `policy` and the core's settings.
  pluginSettings: z.strictObject({
    inspectMs: z.number().int().min(1_000).max(MAX_LIMIT_MS).optional(),
    operateMs: z.number().int().min(1_000).max(MAX_LIMIT_MS).optional(),
    network: z.enum(['allow', 'none']).optional(),
    allowRead: z.array(z.string().min(1).max(4096)).max(MAX_ALLOW_READ).optional(),
    allowWrite: z.array(z.string().min(1).max(4096)).max(MAX_ALLOW_READ).optional(),
    ...limitFields(),
    retentionBatches: z.number().int().min(MIN_RETENTION_BATCHES).max(MAX_RETENTION_BATCHES).optional(),
    retentionDays: z.number().int().min(0).max(MAX_RETENTION_DAYS).optional(),
    /** null clears the cap (plugin-caps.ts). */
    maxConcurrency: z.number().int().min(1).max(MAX_CONCURRENCY_CAP).nullable().optional(),
    rate: z
      .string()
      .max(32)
      .regex(/^\d+\/(s|m)$/, 'a rate is calls per second or minute: 20/s, 600/m')
      .nullable()
      .optional(),
  }),
  retryBatch: z.strictObject({ failedOnly: z.boolean().optional() }),
  setTeam: z.strictObject({ weight: z.number().int().min(1).max(1_000) }),
  createToken: z.strictObject({
    name: z.string().min(1).max(64),
    role: z.enum(ROLES),
    expiresInMs: z.number().int().min(60_000).max(MAX_EXPIRY_MS).optional(),
    /** Its team in the fair share of the workers (none: its own team of weight 1). */
    team: z.string().min(1).max(64).optional(),
  }),
  // The same checks as the store's (schedule-store.ts) run again there; these name the field.
  addSchedule: z.strictObject({
    pluginId: z.string().min(1),
    projects: batchSelection,
    everyMs: z.number().int().min(0).optional(),
    cron: z.string().min(1).optional(),
    name: z.string().min(1).max(64).optional(),
    /** Its batches' class in the fair queue (default normal; high needs an admin token). */
    priority: z.enum(['high', 'normal', 'low']).optional(),
  }),
  // What is given changes; an interval replaces a cron pattern and the other way round.
  editSchedule: z.strictObject({
    name: z.string().min(1).max(64).optional(),
    projects: batchSelection.optional(),
    everyMs: z.number().int().min(0).optional(),
    cron: z.string().min(1).optional(),
    /** normal removes the class set before; high needs an admin token. */
    priority: z.enum(['high', 'normal', 'low']).optional(),
  }),
  /** A webhook: the URL and events are checked again by the store (http/https only); the secret is never returned. */
  addWebhook: z.strictObject({
    url: z.string().min(1).max(2048),
    events: z.array(z.enum(WEBHOOK_EVENTS)).min(1),
    pluginId: z.string().min(1).optional(),
    secret: z.string().min(1).max(1024).describe('the HMAC-SHA256 signing key; stored, never returned'),
  }),
  /** What is given changes; at least one. */
  editWebhook: z.strictObject({
    url: z.string().min(1).max(2048).optional(),
    events: z.array(z.enum(WEBHOOK_EVENTS)).min(1).optional(),
    active: z.boolean().optional(),
  }),
  rotateWebhookSecret: z.strictObject({
    secret: z.string().min(1).max(1024).describe('the new HMAC-SHA256 signing key; stored, never returned'),
    previousValidForMs: z
      .number()
      .int()
      .min(0)
      .max(MAX_ROTATION_WINDOW_MS)
      .optional()
      .describe('how long the old secret signs too (default 24 hours; 0: not at all)'),
  }),
  /** Cancels every running batch, or only those a schedule (id or name) started. */
  cancelBatches: z.strictObject({
    state: z.literal('running'),
    schedule: z.string().min(1).max(200).optional(),
  }),
};

const limit = (max: number) => z.coerce.number().int().min(1).max(max).optional();
export const limitQuery = z.strictObject({ limit: limit(MAX_LIST_LIMIT) });

/** A query field given once or repeated (`?where=a&where=b`): always a list once parsed. */
function oneOrMany<T extends z.ZodType<string>>(item: T) {
  return z
    .union([item, z.array(item).max(20)])
    .transform((value) => (Array.isArray(value) ? value : [value]));
}

// ---- lists that scale: filters and cursor pagination (pages.ts) ----
const pageQuery = z.strictObject({
  limit: limit(MAX_PAGE_LIMIT),
  cursor: z.string().min(1).max(500).optional(),
});
const id = z.string().min(1).max(200);
/** `30s`, `15m`, `2h`, `7d` (the ms package's forms) or a number of milliseconds. */
const duration = z.union([z.number(), z.string()]).transform((given, context) => {
  const text = String(given);
  const value = /^\d+$/.test(text) ? Number(text) : ms(text as ms.StringValue);
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    context.addIssue({ code: 'custom', message: 'must be a duration such as 30s, 15m, 2h or 7d' });
    return z.NEVER;
  }
  return value;
});
/** A time as epoch milliseconds: an ISO 8601 date or time, or a duration back from now (`2h`). */
const pointInTime = z.union([z.number(), z.string()]).transform((given, context) => {
  const text = String(given).trim();
  const at = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isFinite(at)) return at;
  const back = /^\d+$/.test(text) ? Number(text) : ms(text as ms.StringValue);
  if (typeof back !== 'number' || !Number.isFinite(back) || back < 0) {
    context.addIssue({
      code: 'custom',
      message: 'must be a date or time (2026-11-01T09:30Z) or a duration ago (2h)',
    });
    return z.NEVER;
  }
  return Date.now() - back;
});
export const queries = {
  limit: limitQuery,
  batches: pageQuery.extend({
    state: z.enum(BATCH_STATES).optional(),
    pluginId: id.optional(),
  }),
  operations: pageQuery.extend({
    projectId: id.optional(),
    pluginId: id.optional(),
    state: z.enum(OPERATION_FILTERS).optional(),
    requestedBy: id.optional(),
  }),
  rollouts: pageQuery.extend({
    state: z.enum(ROLLOUT_STATES).optional(),
    pluginId: id.optional(),
  }),
  rolloutProjects: pageQuery.extend({ state: z.enum(ROLLOUT_PROJECT_STATES).optional() }),
  rolloutRef: z.strictObject({ ref: id, pluginId: id.optional() }),
  rolloutExport: z.strictObject({ format: z.enum(ROLLOUT_EXPORT_FORMATS) }),
  audit: pageQuery.extend({
    actor: id.optional(),
    action: id.optional(),
    excludeAction: id.optional(),
    target: id.optional(),
    /** Not older than this (the core's AuditQuery.since, in milliseconds once parsed). */
    since: duration.optional(),
    /** Not newer than this (the core's AuditQuery.until, epoch milliseconds once parsed). */
    until: pointInTime.optional(),
  }),
  /** GET /plugins/:id/facts: each `where` NAME<op>VALUE (fleet-facts.ts), each `label` carried. */
  fleet: pageQuery.extend({
    where: oneOrMany(z.string().min(1).max(500)).optional(),
    label: oneOrMany(label).optional(),
    fact: oneOrMany(z.string().min(1).max(128))
      .optional()
      .describe(
        'fact ids the caller will show: one no project has is refused (400), as an unknown where name is',
      ),
    sort: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe('a fact id: rows by its value (none: by project id)'),
    order: z
      .enum(['asc', 'desc'])
      .optional()
      .describe('with sort; rows without the fact come last either way'),
  }),
  fleetCounts: z.strictObject({
    fact: z.string().min(1).max(128),
    where: oneOrMany(z.string().min(1).max(500)).optional(),
    label: oneOrMany(label).optional(),
  }),
  /** GET /projects/:id/history: the plugin's batches, at most `limit` of them. */
  history: z.strictObject({ plugin: id, limit: limit(MAX_PAGE_LIMIT) }),
  /** GET /projects/:id/actions: the plugin whose latest inspection of the project is read. */
  actions: z.strictObject({ plugin: id }),
  /** GET /plugins/:id/trend: the newest `batches` kept batches (default 10), one fact's distribution. */
  trend: z.strictObject({
    batches: z.coerce.number().int().min(1).max(100).optional(),
    fact: z.string().min(1).max(128).optional(),
  }),
  /** GET /batches/:id/results: one status or all, failures first, `offset` rows skipped. */
  batchResults: z.strictObject({
    status: z.enum(RESULT_STATUSES).optional(),
    offset: z.coerce.number().int().min(0).max(10_000_000).optional(),
    limit: limit(MAX_PAGE_LIMIT),
  }),
  diff: z.strictObject({ from: id }),
  batchRef: z.strictObject({ ref: id, pluginId: id.optional() }),
  operationRef: z.strictObject({ ref: id, pluginId: id.optional(), projectId: id.optional() }),
  export: z.strictObject({ format: z.enum(EXPORT_FORMATS) }),
};

/** Each resource limit a `plugin set` may change, within the bounds the core checks again. */
function limitFields() {
  const entries = (Object.keys(LIMIT_BOUNDS) as (keyof ResourceLimits)[]).map((name) => {
    const { min, max } = LIMIT_BOUNDS[name];
    return [name, z.number().int().min(min).max(max).optional()] as const;
  });
  return Object.fromEntries(entries) as Record<keyof ResourceLimits, z.ZodOptional<z.ZodNumber>>;
}
