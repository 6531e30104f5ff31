// Response bodies of the HTTP API as zod schemas, typed against the core's own
// types (a field added in the core without one here fails to compile). The
// OpenAPI document's response schemas come from these (z.toJSONSchema: no
// additional properties); the CLI's remote backend parses every answer with
// them, dropping fields it does not know (an api newer than the CLI).
import { z } from 'zod';
import {
  CAPABILITIES,
  HEALTH_STATUSES,
  OPERATE_STATUSES,
  SCOPES,
  type InspectResult,
  type OperateResult,
} from '@switchyard/plugin-sdk/protocol';
import type { AuditEntry, TokenView } from '../access/index.js';
import type { BatchDiff, BatchView } from '../work/batches/index.js';
import { BATCH_STATES } from '../work/batches/index.js';
import { OPERATION_STATES, type OperationView } from '../work/operations/index.js';
import {
  PREVIEW_OUTPUT_MAX_CHARS,
  ROLLOUT_PROJECT_STATES,
  ROLLOUT_STATES,
  type RolloutProjectView,
  type RolloutListItem,
  type RolloutView,
} from '../work/rollouts/index.js';
import type { PluginDetail, PluginView } from '../plugins/index.js';
import type { Project, ProjectListing, ScanReport } from '../projects/index.js';
import type { QueueView, Schedule, ScheduleView } from '../work/upkeep/index.js';
import {
  DELIVERY_EVENTS,
  DELIVERY_STATES,
  WEBHOOK_EVENTS,
  type DeliveryRecord,
  type DeliveryView,
  type WebhookView,
} from '../work/notify/index.js';
import { ROLES } from '../access/index.js';

const time = z.string().describe('RFC 3339 time');
const json = z.json();

const fact = z.object({
  id: z.string(),
  label: z.string(),
  value: z.string(),
  source: z.string(),
  warning: z.string().exactOptional(),
});
const inspectResult: z.ZodType<InspectResult> = z.object({
  summary: z.string(),
  facts: z.array(fact),
  actions: z.array(z.object({ id: z.string(), name: z.string(), description: z.string(), risk: z.string() })),
  warnings: z.array(z.string()),
  observedAt: time,
  redacted: z.literal(true).exactOptional().describe('a secret in the result was replaced by [REDACTED]'),
});
const operateResult: z.ZodType<OperateResult> = z.object({
  status: z.enum(OPERATE_STATUSES),
  summary: z.string(),
  output: json,
  redacted: z.literal(true).exactOptional().describe('a secret in the result was replaced by [REDACTED]'),
});

const pluginShape = {
  id: z.string(),
  name: z.string(),
  version: z.string(),
  protocolVersion: z.string(),
  fingerprint: z.string().nullable(),
  capabilities: z.array(z.enum(CAPABILITIES)),
  requestedScopes: z.array(z.enum(SCOPES)),
  grantedScopes: z.array(z.enum(SCOPES)),
  trust: z.enum(['untrusted', 'trusted', 'changed']),
  enabled: z.boolean(),
  health: z.enum(['unknown', 'healthy', 'degraded', 'unhealthy']),
  available: z.boolean(),
  error: z.string().exactOptional(),
};
export const pluginView: z.ZodType<PluginView> = z.object(pluginShape);
const pluginDetailShape = {
  ...pluginShape,
  trustedFingerprint: z.string().exactOptional(),
  trustedBy: z.string().exactOptional(),
  trustedAt: time.exactOptional(),
  lastError: z.string().exactOptional(),
  healthCheckedAt: time.exactOptional(),
  manifestPath: z.string(),
  packageDir: z.string(),
  executable: z.string(),
  treeDigest: z
    .string()
    .exactOptional()
    .describe('SHA-256 over every path, type, mode and content hash of the package (PROTOCOL §4)'),
  trustedTreeDigest: z
    .string()
    .exactOptional()
    .describe('the tree digest reviewed with the trusted fingerprint'),
  files: z
    .array(
      z.object({
        path: z.string(),
        type: z.string(),
        mode: z.string(),
        size: z.number().int(),
        target: z.string().exactOptional().describe("a symlink's target, as it reads"),
      }),
    )
    .describe('every file, directory and symlink of the package, as the last discovery saw it'),
  changedFiles: z
    .array(z.string())
    .exactOptional()
    .describe('while changed: the files that differ from the reviewed ones'),
  packageLimits: z
    .object({ entries: z.number().int(), bytes: z.number().int() })
    .describe('the most entries and bytes a package may hold'),
  timeLimits: z.object({
    inspectMs: z.number().int(),
    operateMs: z.number().int(),
    healthMs: z.number().int(),
  }),
  policy: z.object({
    network: z.enum(['allow', 'none']),
    networkReason: z.string(),
    allowRead: z.array(z.string()),
    allowWrite: z.array(z.string()),
    limits: z.object({
      memoryBytes: z.number().int(),
      cpuMs: z.number().int(),
      fileSizeBytes: z.number().int(),
      openFiles: z.number().int(),
      processes: z.number().int(),
      diskBytes: z.number().int(),
    }),
  }),
  retention: z
    .object({
      batches: z.number().int().describe('the newest finished batches kept however old'),
      days: z
        .number()
        .int()
        .exactOptional()
        .describe("finished batches younger than this are kept (unset: the host's)"),
    })
    .describe('plugin set --retention-batches/--retention-days'),
  caps: z
    .object({
      maxConcurrency: z.number().int().nullable().describe('most calls at once across the installation'),
      rate: z.string().nullable().describe('most calls started per second or minute: 20/s, 600/m'),
    })
    .describe('plugin set --max-concurrency/--rate; null: no cap'),
  containment: z.object({
    mechanism: z.enum(['subreaper', 'process-group']),
    detail: z.string(),
    enforced: z.array(z.string()).describe('each mechanism in force for calls of this process'),
    missing: z.array(z.string()).describe('each mechanism not in force here, and why'),
    seenBy: z.string().describe('the process whose view this is (the api, for this route)'),
    workers: z
      .array(
        z.object({
          worker: z.string(),
          mechanism: z.enum(['subreaper', 'process-group']),
          enforced: z.array(z.string()),
          missing: z.array(z.string()),
          required: z.boolean(),
          at: z.string(),
        }),
      )
      .describe("each running worker's own report: what its host enforces for plugin calls"),
  }),
};
/** What `plugin set` returns: the detail without the reviewer texts GET adds. */
export const pluginDetailCore: z.ZodType<PluginDetail> = z.object(pluginDetailShape);
export const pluginDetail = z.object({
  ...pluginDetailShape,
  osTrustBoundary: z.string(),
  scopeDescriptions: z.record(z.string(), z.string()),
});
export const healthResult = z.object({
  status: z.enum(HEALTH_STATUSES),
  message: z.string().exactOptional(),
  checkedAt: time,
});
export const logEntry = z.object({
  at: time,
  source: z.enum(['stderr', 'host']),
  line: z.string(),
  id: z.string().exactOptional(),
  operationId: z.string().exactOptional(),
});

const projectShape = {
  id: z.string(),
  displayName: z.string(),
  root: z.string(),
  trusted: z.boolean(),
  labels: z.array(z.string()),
};
export const project: z.ZodType<Project> = z.object(projectShape);
/** A `GET /projects` item: whether the api's host finds its root missing. */
export const projectListing: z.ZodType<ProjectListing> = z.object({
  ...projectShape,
  rootMissing: z.boolean(),
});
/** What a scan registered and what it refused, with the reason. */
export const scanReport: z.ZodType<ScanReport> = z.object({
  registered: z.array(
    z.object({
      ...projectShape,
      scan: z.enum(['new', 'known']).describe('new: registered now; known: registered before'),
    }),
  ),
  refused: z.array(z.object({ path: z.string(), reason: z.string() })),
  missing: z
    .array(project)
    .describe('projects registered under the directory whose own directory is gone (renamed or deleted)'),
  pruned: z.array(z.string()).describe('with prune: the missing ones, forgotten now'),
});

const batchShape = {
  batchId: z.string(),
  pluginId: z.string(),
  state: z.enum(BATCH_STATES),
  total: z.number().int(),
  pending: z.number().int(),
  succeeded: z.number().int(),
  failed: z.number().int(),
  cancelled: z.number().int(),
  createdAt: time,
  createdBy: z.string(),
  finishedAt: time.exactOptional(),
  cancelledAt: time.exactOptional(),
  cancelledBy: z.string().exactOptional(),
  retryOf: z.string().exactOptional(),
  /** Its class in the fair queue; absent: normal. */
  priority: z.enum(['high', 'low']).exactOptional(),
  /** Whose share its calls count to, when not createdBy (a schedule's batch: the schedule's owner). */
  requester: z.string().exactOptional(),
  scheduleId: z.string().exactOptional().describe('the schedule that started it'),
  partial: z
    .literal(true)
    .exactOptional()
    .describe('it covers part of the fleet (named projects or a label), not --all'),
};
export const batchSummary = z.object(batchShape);
/** One project's outcome in a batch (a `results` item; the `outcomes` event's items). */
export const projectOutcome = z.object({
  projectId: z.string(),
  status: z.enum(['succeeded', 'failed', 'cancelled']),
  result: inspectResult.exactOptional(),
  error: z.object({ code: z.string(), message: z.string() }).exactOptional(),
});
export const batchView: z.ZodType<BatchView> = z.object({
  ...batchShape,
  results: z.array(projectOutcome).exactOptional(),
});

/** What an id reference (a prefix, latest~N) names. */
export const resolvedId = z.object({ id: z.string() });

/** GET /batches/:id/results: the batch's counts and one page of its rows (`pending`: no outcome yet). */
export const batchResults = z.object({
  batch: batchSummary,
  items: z.array(
    z.union([projectOutcome, z.object({ projectId: z.string(), status: z.literal('pending') })]),
  ),
  total: z.number().int().describe('rows matching the status filter'),
  offset: z.number().int(),
  limit: z.number().int(),
});

export const previousBatch = z.object({ previous: batchSummary.nullable() });

const diffStatus = z.enum(['succeeded', 'failed', 'cancelled', 'pending', 'absent']);
export const batchDiff: z.ZodType<BatchDiff> = z.object({
  from: z.string(),
  to: z.string(),
  projects: z.array(
    z.object({
      projectId: z.string(),
      added: z.array(fact),
      removed: z.array(fact),
      changed: z.array(
        z.object({
          id: z.string(),
          from: z.string(),
          to: z.string(),
          warning: z.object({ from: z.string().nullable(), to: z.string().nullable() }).exactOptional(),
        }),
      ),
      status: z.object({ from: diffStatus, to: diffStatus }),
    }),
  ),
});

export const operationView: z.ZodType<OperationView> = z.object({
  id: z.string(),
  pluginId: z.string(),
  projectId: z.string(),
  action: z.string(),
  state: z.enum(OPERATION_STATES),
  errorCode: z.string().exactOptional(),
  errorMessage: z.string().exactOptional(),
  outcomeUnknown: z.literal(true).exactOptional(),
  result: operateResult.exactOptional(),
  requestedAt: time,
  startedAt: time.exactOptional(),
  finishedAt: time.exactOptional(),
  timeoutMs: z.number().int().exactOptional(),
  input: json.exactOptional().describe('the action input as requested, redacted'),
  requestedBy: z
    .string()
    .exactOptional()
    .describe('who requested it: token:<name> (api) or user:<name>@<host> (local CLI)'),
  cancelledBy: z.string().exactOptional().describe('who asked first to cancel it'),
  worker: z.string().exactOptional().describe('the worker that ran it: worker:<host>:<pid>'),
  durationMs: z.number().int().exactOptional().describe('from started to finished'),
  waiting: z
    .string()
    .exactOptional()
    .describe(
      "while running: its call waits for the plugin's caps (plugin set --max-concurrency/--rate), and why",
    ),
  workerLost: z
    .strictObject({
      worker: z.string(),
      silentForMs: z.number().int(),
      lockExpiresInMs: z.number().int().describe('0: the lock lapsed; a stalled check ends it any moment'),
      message: z.string(),
    })
    .exactOptional()
    .describe(
      'while running (one operation read only): its worker sent no heartbeat for a while; it ends failed OUTCOME_UNKNOWN once its job lock lapses',
    ),
});

const rolloutCounts = z.object({
  pending: z.number().int(),
  running: z.number().int(),
  succeeded: z.number().int(),
  failed: z.number().int(),
  cancelled: z.number().int(),
  outcome_unknown: z.number().int(),
});

const rolloutFields = {
  id: z.string(),
  name: z.string(),
  pluginId: z.string(),
  action: z.string(),
  input: json.describe('the action input, redacted'),
  state: z.enum(ROLLOUT_STATES),
  risk: z.string().describe("the action's risk as the selected projects' latest inspections advertised it"),
  createdBy: z.string(),
  approvedBy: z.string().exactOptional(),
  total: z.number().int().describe('projects selected to run (skipped ones apart)'),
  skipped: z.array(z.object({ projectId: z.string(), reason: z.string() })),
  waves: z.array(
    z.object({
      index: z.number().int().describe('from 1'),
      size: z.number().int(),
      state: z.enum(['pending', 'running', 'paused', 'done', 'cancelled']),
    }),
  ),
  counts: rolloutCounts,
  maxFailures: z.number().int().describe('failures (failed and outcome_unknown) allowed before it pauses'),
  concurrency: z.number().int(),
  pauseBetween: z.boolean(),
  createdAt: time,
  startedAt: time.exactOptional(),
  finishedAt: time.exactOptional(),
  pausedReason: z.string().exactOptional(),
  cancelledBy: z.string().exactOptional(),
  retryOf: z.string().exactOptional().describe('the rollout whose failed projects this one retries'),
  previewAction: z.string().exactOptional().describe('the action of risk none run first on every project'),
  previewCounts: rolloutCounts.exactOptional().describe('how the previews stand, as counts for the real run'),
};

/** A rollout in GET /rollouts: all but its selection (GET /rollouts/:id has it). */
export const rolloutListItem: z.ZodType<RolloutListItem> = z.object(rolloutFields);

export const rolloutView: z.ZodType<RolloutView> = z.object({
  ...rolloutFields,
  selection: z.array(z.string()).describe('how the projects were chosen'),
});

export const rolloutProject: z.ZodType<RolloutProjectView> = z.object({
  projectId: z.string(),
  wave: z.number().int().describe('from 1'),
  operationId: z.string().exactOptional(),
  state: z.enum(ROLLOUT_PROJECT_STATES),
  errorCode: z.string().exactOptional(),
  errorMessage: z.string().exactOptional(),
  preview: z
    .object({
      state: z.enum(ROLLOUT_PROJECT_STATES),
      operationId: z.string().exactOptional(),
      summary: z.string().exactOptional(),
      output: json
        .exactOptional()
        .describe(`redacted; at most ${PREVIEW_OUTPUT_MAX_CHARS} characters of JSON`),
      outputTruncated: z
        .literal(true)
        .exactOptional()
        .describe('the output was longer: `output` is the beginning of its JSON, as a string'),
      errorCode: z.string().exactOptional(),
      errorMessage: z.string().exactOptional(),
    })
    .exactOptional()
    .describe("with a preview action: this project's preview"),
});

const slotView = z.object({
  slot: z.number().int(),
  state: z.enum(['idle', 'waiting', 'running']),
  pluginId: z.string().exactOptional(),
  kind: z.string().exactOptional().describe('inspect, operate or health'),
  projectId: z.string().exactOptional(),
  batchId: z.string().exactOptional(),
  operationId: z.string().exactOptional(),
  since: time.describe('when its call (or its idle spell) began'),
  reason: z.string().exactOptional().describe("why a waiting call waits (its plugin's caps)"),
  lastTookAt: time.exactOptional().describe('when this slot last took a call'),
});
const queueWork = z.object({
  kind: z.enum(['batch', 'operation']),
  id: z.string(),
  pluginId: z.string(),
  requester: z.string(),
  waiting: z
    .number()
    .int()
    .describe('calls not started (a batch: projects without an outcome, less those running)'),
  running: z.number().int(),
  waitingForCaps: z.number().int().describe("calls on a worker held back by the plugin's caps"),
  share: z.number().describe('its running calls over every running call'),
  reason: z.string().exactOptional(),
  since: time,
});
export const queueView: z.ZodType<QueueView> = z.object({
  at: time,
  running: z.number().int().describe('calls running on every worker now'),
  requesters: z.array(
    z.object({
      requester: z.string(),
      waiting: z.number().int(),
      running: z.number().int(),
      share: z.number(),
      work: z.array(queueWork),
    }),
  ),
  workers: z.array(
    z.object({
      worker: z.string(),
      host: z.string(),
      slots: z.array(slotView),
      lastTookAt: time.exactOptional(),
    }),
  ),
});

export const auditEntry: z.ZodType<AuditEntry> = z.object({
  id: z.string(),
  at: time,
  actor: z.string(),
  action: z.string(),
  target: z.string(),
  detail: z.record(z.string(), json),
});

const tokenShape = {
  id: z.string(),
  name: z.string(),
  role: z.enum(ROLES),
  createdAt: time,
  createdBy: z.string(),
  expiresAt: time.exactOptional(),
  lastUsedAt: time.exactOptional(),
  team: z.string().exactOptional().describe('its team in the fair share of the workers'),
};
export const tokenView: z.ZodType<TokenView> = z.object(tokenShape);
/** A team in the fair share of the workers (GET /teams). */
export const teamView = z.object({
  team: z.string(),
  weight: z.number().int(),
  tokens: z.array(z.string()).describe("the names of the team's tokens"),
});
export const createdToken = z.object({ ...tokenShape, token: z.string().describe('shown once') });
/** DELETE /tokens/:id: the removed token's view (never its secret), and `revoked: true`. */
export const revokedToken = z.object({ ...tokenShape, revoked: z.literal(true) });
export const me = z.object({
  id: z.string(),
  name: z.string(),
  role: z.enum(ROLES),
  expiresAt: time.exactOptional(),
});

const scheduleShape = {
  id: z.string(),
  name: z.string(),
  pluginId: z.string(),
  projects: z.union([z.literal('all'), z.array(z.string()), z.object({ label: z.string() })]),
  everyMs: z.number().int().exactOptional(),
  cron: z.string().exactOptional(),
  priority: z
    .enum(['high', 'low'])
    .exactOptional()
    .describe("its batches' class in the fair queue; absent: normal"),
  pausedAt: time.exactOptional().describe('set while paused: no run starts'),
  pausedBy: z.string().exactOptional(),
  createdBy: z.string(),
  createdAt: time,
  updatedBy: z.string().exactOptional(),
  updatedAt: time.exactOptional(),
};
export const schedule: z.ZodType<Schedule> = z.object(scheduleShape);
/** GET /schedules: each schedule with its next run and what its last run did. */
export const scheduleView: z.ZodType<ScheduleView> = z.object({
  ...scheduleShape,
  nextRunAt: time.exactOptional().describe('absent while paused'),
  lastRun: z
    .object({
      at: time,
      outcome: z.enum(['started', 'skipped', 'failed']),
      batchId: z
        .string()
        .exactOptional()
        .describe('started: the new batch; skipped: the batch still running'),
      skips: z
        .number()
        .int()
        .exactOptional()
        .describe('skipped: how many runs in a row skipped for this batch (audited once)'),
      skippingSince: time.exactOptional().describe('skipped: when the first of them was'),
      batch: z
        .object({
          state: z.string(),
          total: z.number().int(),
          pending: z.number().int(),
          succeeded: z.number().int(),
          failed: z.number().int(),
          cancelled: z.number().int(),
        })
        .exactOptional()
        .describe('that batch as it is now'),
      error: z.object({ code: z.string(), message: z.string() }).exactOptional().describe('failed: why'),
    })
    .exactOptional(),
});
/** POST /batches/cancel: the batches cancelled, as each cancel answers. */
export const cancelledBatches = z.object({ cancelled: z.array(batchSummary) });
export const removedSchedule = z.object({
  id: z.string(),
  removed: z.literal(true),
  cancelledBatches: z.array(z.string()).describe('its running batch, cancelled with it'),
});

/** One project's latest successful result of a plugin (GET /plugins/:id/facts). */
export const fleetRow = z.object({
  projectId: z.string(),
  batchId: z.string().describe('the batch that produced it'),
  at: z.string(),
  facts: z.record(z.string(), z.object({ value: z.string(), warning: z.string().exactOptional() })),
});
/** GET /plugins/:id/facts/counts: value → projects, most common first; `null`: projects without the fact. */
export const fleetCounts = z.object({
  fact: z.string(),
  total: z.number().int(),
  counts: z.array(z.object({ value: z.string().nullable(), count: z.number().int() })),
});
/** A webhook as every answer shows it: never its secret. */
export const webhookView: z.ZodType<WebhookView> = z.strictObject({
  id: z.string(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  pluginId: z.string().exactOptional().describe('only this plugin’s events'),
  createdAt: time,
  createdBy: z.string(),
  active: z.boolean().describe('false: no new event is delivered to it (ping and redeliver still send)'),
  previousSecretUntil: time
    .exactOptional()
    .describe('a rotated secret signs too (X-Switchyard-Signature-256-Previous) until then'),
});
export const removedWebhook = z.object({ id: z.string(), removed: z.literal(true) });
const deliveryFields = {
  deliveryId: z.string().describe('also sent as X-Switchyard-Delivery'),
  webhookId: z.string(),
  event: z.enum(DELIVERY_EVENTS).describe('an event, or ping (webhook ping)'),
  url: z.string(),
  createdAt: time,
  state: z.enum(DELIVERY_STATES),
  attempts: z.array(
    z.strictObject({
      at: time,
      durationMs: z.number().int(),
      statusCode: z.number().int().exactOptional(),
      error: z.string().exactOptional(),
      response: z
        .strictObject({
          headers: z.record(z.string(), z.string()),
          body: z.string().describe('the start of the body (2 KiB at most), control characters escaped'),
          truncated: z.boolean(),
        })
        .exactOptional()
        .describe("the receiver's answer: a few headers and the start of its body, redacted"),
    }),
  ),
  redeliveryOf: z.string().exactOptional().describe('a redelivery: the delivery it sends again'),
};
/** One delivery of one event to one webhook, with every attempt. */
export const deliveryView: z.ZodType<DeliveryView> = z.strictObject(deliveryFields);
/** One delivery with the exact body that was signed and sent. */
export const deliveryRecord: z.ZodType<DeliveryRecord> = z.strictObject({
  ...deliveryFields,
  body: z.string().describe('the JSON body exactly as signed and sent'),
});

/** One batch of a plugin's trend (GET /plugins/:id/trend). */
export const trendPoint = z.object({
  batchId: z.string(),
  createdAt: z.string(),
  state: z.enum(['running', 'succeeded', 'failed', 'cancelled']),
  total: z.number().int(),
  succeeded: z.number().int(),
  failed: z.number().int(),
  cancelled: z.number().int(),
  newFailures: z
    .number()
    .int()
    .describe("failed here, and not in the project's own previous result (not failed, or never inspected)"),
  partial: z.boolean().describe("the batch covers part of the fleet: its counts are not the fleet's"),
  distribution: z.array(z.object({ value: z.string(), count: z.number().int() })).exactOptional(),
});

/** One batch's result for one project (GET /projects/:id/history). */
export const advertisedActions = z.object({
  pluginId: z.string(),
  projectId: z.string(),
  batchId: z.string().exactOptional(),
  inspectedAt: time
    .exactOptional()
    .describe("when the plugin's latest inspection of the project was recorded"),
  actions: z.array(z.object({ id: z.string(), name: z.string(), description: z.string(), risk: z.string() })),
});

export const historyEntry = z.object({
  batchId: z.string(),
  at: z.string().describe('when the batch was created'),
  status: z.enum(['succeeded', 'failed', 'cancelled', 'pending']),
  summary: z.string().exactOptional().describe("the inspection's summary, where it succeeded"),
  facts: z.record(z.string(), z.object({ value: z.string(), warning: z.string().exactOptional() })),
  warnings: z.array(z.string()),
  error: z.object({ code: z.string(), message: z.string() }).exactOptional(),
});

/** A cursor page of a list (GET /batches, /operations, /audit): `nextCursor` absent on the last page. */
export function page<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), nextCursor: z.string().exactOptional() });
}

export const openApi = z.looseObject({
  openapi: z.string(),
  info: z.looseObject({}),
  paths: z.record(z.string(), z.looseObject({})),
});

export const problem = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  code: z
    .string()
    .exactOptional()
    .describe('stable machine name of the error, as the CLI prints with --json'),
  requiredRole: z.enum(ROLES).exactOptional().describe('403: the role the request needs'),
  errors: z.array(z.object({ field: z.string(), message: z.string() })).exactOptional(),
});

/** An RFC 9457 problem document as the api sends it. */
export type Problem = z.output<typeof problem>;
