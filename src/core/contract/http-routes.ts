// Every route of the HTTP API (/api/v1), once: method, path, the role it
// needs, what it does, and the schemas of its body, query, answer and (for
// event streams) events. The api registers its handlers against these
// entries (they validate and document), the CLI's remote backend calls them
// and parses the answers with the same schemas, and the web UI's JSDoc types
// come from the same names.
import { z } from 'zod';
import type { Role } from '../access/index.js';
import { bodies, queries } from './request-schemas.js';
import * as responses from './response-schemas.js';

export interface HttpRoute {
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** Under /api/v1; `:name` segments are path parameters. */
  readonly path: string;
  /** The least role a token needs. */
  readonly role: Role;
  readonly summary: string;
  readonly body?: z.ZodType;
  readonly query?: z.ZodType;
  /** The answer's schema (none: a streamed body, `streams` or Server-Sent Events). */
  readonly response?: z.ZodType;
  /** The success status (200 unless named). */
  readonly status?: number;
  /** Another success status with the same body (an idempotent replay: 200). */
  readonly alsoStatus?: number;
  /** Media types of a streamed body other than Server-Sent Events. */
  readonly streams?: readonly string[];
  /** Server-Sent Events: each event name's data. */
  readonly events?: Readonly<Record<string, z.ZodType>>;
}

const define = <const R extends HttpRoute>(route: R): R => route;

/** The path parameter names of a route path: '/plugins/:id/trust' → 'id'. */
export type PathParams<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | PathParams<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;

/** What a route's body, query and answer are, on either side of the wire. */
export type BodyIn<R> = R extends { body: infer B extends z.ZodType } ? z.input<B> : undefined;
export type BodyOut<R> = R extends { body: infer B extends z.ZodType } ? z.output<B> : undefined;
export type QueryIn<R> = R extends { query: infer Q extends z.ZodType } ? z.input<Q> : undefined;
export type QueryOut<R> = R extends { query: infer Q extends z.ZodType } ? z.output<Q> : undefined;
export type Answer<R> = R extends { response: infer A extends z.ZodType } ? z.output<A> : undefined;
export type EventData<R, E extends string> = R extends {
  events: Record<E, infer D extends z.ZodType>;
}
  ? z.output<D>
  : never;

const operationEvents = { state: responses.operationView, done: responses.operationView };

export const routes = {
  // ---- plugins: review, trust, grants, health, time limits, logs ----
  listPlugins: define({
    method: 'GET',
    path: '/plugins',
    role: 'viewer',
    summary: 'list plugins',
    response: z.array(responses.pluginView),
  }),
  showPlugin: define({
    method: 'GET',
    path: '/plugins/:id',
    role: 'viewer',
    summary: 'everything a reviewer needs',
    response: responses.pluginDetail,
  }),
  refreshPlugins: define({
    method: 'POST',
    path: '/plugins/refresh',
    role: 'admin',
    summary: 'rediscover packages',
    body: bodies.empty,
    response: z.array(responses.pluginView),
  }),
  trustPlugin: define({
    method: 'POST',
    path: '/plugins/:id/trust',
    role: 'admin',
    summary: 'trust the exact reviewed fingerprint',
    body: bodies.trust,
    response: responses.pluginView,
  }),
  enablePlugin: define({
    method: 'POST',
    path: '/plugins/:id/enable',
    role: 'admin',
    summary: 'grant a subset of the requested scopes',
    body: bodies.enable,
    response: responses.pluginView,
  }),
  disablePlugin: define({
    method: 'POST',
    path: '/plugins/:id/disable',
    role: 'admin',
    summary: 'revoke every grant',
    body: bodies.empty,
    response: responses.pluginView,
  }),
  checkPluginHealth: define({
    method: 'POST',
    path: '/plugins/:id/health',
    role: 'operator',
    summary: 'one supervised health check now',
    body: bodies.empty,
    response: responses.healthResult,
  }),
  setPluginLimits: define({
    method: 'POST',
    path: '/plugins/:id/limits',
    role: 'admin',
    summary:
      "the host's policy for this plugin's calls: time limits, network, paths, resource limits (plugin set)",
    body: bodies.pluginSettings,
    response: responses.pluginDetailCore,
  }),
  pluginLogs: define({
    method: 'GET',
    path: '/plugins/:id/logs',
    role: 'viewer',
    summary: 'newest redacted log entries',
    query: queries.limit,
    response: z.array(responses.logEntry),
  }),
  pluginFacts: define({
    method: 'GET',
    path: '/plugins/:id/facts',
    role: 'viewer',
    summary:
      "the plugin's fleet: each project's latest successful result, filtered (where NAME=VALUE, !=, ~REGEX, <, <=, >, >= version-aware; label), by project id, paginated",
    query: queries.fleet,
    response: responses.page(responses.fleetRow),
  }),
  pluginTrend: define({
    method: 'GET',
    path: '/plugins/:id/trend',
    role: 'viewer',
    summary:
      "the plugin's newest kept batches, oldest first: counts, new failures and (with fact) that fact's distribution",
    query: queries.trend,
    response: z.array(responses.trendPoint),
  }),
  pluginFactCounts: define({
    method: 'GET',
    path: '/plugins/:id/facts/counts',
    role: 'viewer',
    summary: "how many of the plugin's projects have each value of one fact (same filters)",
    query: queries.fleetCounts,
    response: responses.fleetCounts,
  }),

  // ---- projects ----
  listProjects: define({
    method: 'GET',
    path: '/projects',
    role: 'viewer',
    summary: 'list projects, each with whether its root is missing',
    response: z.array(responses.projectListing),
  }),
  addProject: define({
    method: 'POST',
    path: '/projects',
    role: 'admin',
    summary: 'add a project',
    body: bodies.addProject,
    status: 201,
    response: responses.project,
  }),
  scanProjects: define({
    method: 'POST',
    path: '/projects/scan',
    role: 'admin',
    summary: 'add each immediate subdirectory it can; report each one refused',
    body: bodies.scanProjects,
    status: 201,
    response: responses.scanReport,
  }),
  trustProject: define({
    method: 'POST',
    path: '/projects/:id/trust',
    role: 'admin',
    summary: 'trust a project',
    body: bodies.empty,
    response: responses.project,
  }),
  untrustProject: define({
    method: 'POST',
    path: '/projects/:id/untrust',
    role: 'admin',
    summary: 'untrust a project',
    body: bodies.empty,
    response: responses.project,
  }),
  labelProject: define({
    method: 'POST',
    path: '/projects/:id/labels',
    role: 'admin',
    summary: 'add labels to a project',
    body: bodies.labelProject,
    response: responses.project,
  }),
  unlabelProject: define({
    method: 'DELETE',
    path: '/projects/:id/labels/:label',
    role: 'admin',
    summary: 'remove a label from a project',
    response: responses.project,
  }),
  removeProject: define({
    method: 'DELETE',
    path: '/projects/:id',
    role: 'admin',
    summary: 'forget a project',
    response: responses.project,
  }),
  projectHistory: define({
    method: 'GET',
    path: '/projects/:id/history',
    role: 'viewer',
    summary: "the project's result in each of the plugin's kept batches, newest first",
    query: queries.history,
    response: z.array(responses.historyEntry),
  }),
  projectActions: define({
    method: 'GET',
    path: '/projects/:id/actions',
    role: 'viewer',
    summary: 'the actions the plugin advertised in its latest inspection of the project, each with its risk',
    query: queries.actions,
    response: responses.advertisedActions,
  }),

  // ---- batches: inspections, their progress, control, diff and export ----
  createBatch: define({
    method: 'POST',
    path: '/batches',
    role: 'operator',
    summary: 'start a batch inspection',
    body: bodies.createBatch,
    status: 202,
    response: responses.batchView,
  }),
  listBatches: define({
    method: 'GET',
    path: '/batches',
    role: 'viewer',
    summary: 'newest batches, filtered (state, pluginId), paginated',
    query: queries.batches,
    response: responses.page(responses.batchSummary),
  }),
  resolveBatch: define({
    method: 'GET',
    path: '/batches/resolve',
    role: 'viewer',
    summary:
      'the batch id a reference names: ?ref= a whole id, a unique hex prefix, latest or latest~N (of ?pluginId=); 400 listing the matches when ambiguous',
    query: queries.batchRef,
    response: responses.resolvedId,
  }),
  getBatch: define({
    method: 'GET',
    path: '/batches/:id',
    role: 'viewer',
    summary: 'a batch with its results',
    response: responses.batchView,
  }),
  batchResults: define({
    method: 'GET',
    path: '/batches/:id/results',
    role: 'viewer',
    summary:
      "the batch's counts and one page of its per-project rows, failures first (?status=failed|cancelled|pending|succeeded&offset=&limit=); a page ends early once it holds 4 MiB of results (the next starts at offset + items.length)",
    query: queries.batchResults,
    response: responses.batchResults,
  }),
  batchEvents: define({
    method: 'GET',
    path: '/batches/:id/events',
    role: 'viewer',
    summary:
      'live progress (Server-Sent Events): progress (counts), outcomes (recorded results, a few at a time), done (counts; the results are GET /batches/:id)',
    events: {
      progress: responses.batchView,
      outcomes: z.array(responses.projectOutcome),
      done: responses.batchView,
    },
  }),
  cancelBatch: define({
    method: 'POST',
    path: '/batches/:id/cancel',
    role: 'operator',
    summary: 'cancel a batch: queued inspections never start, running ones are killed (idempotent)',
    body: bodies.empty,
    response: responses.batchSummary,
  }),
  cancelBatches: define({
    method: 'POST',
    path: '/batches/cancel',
    role: 'operator',
    summary:
      'cancel every running batch ({state: "running"}), or those one schedule started ({schedule: id or name})',
    body: bodies.cancelBatches,
    response: responses.cancelledBatches,
  }),
  retryBatch: define({
    method: 'POST',
    path: '/batches/:id/retry',
    role: 'operator',
    summary:
      'a new batch over the same plugin and projects ({failedOnly: true}: only failed and cancelled ones)',
    body: bodies.retryBatch,
    status: 202,
    response: responses.batchView,
  }),
  previousBatch: define({
    method: 'GET',
    path: '/batches/:id/previous',
    role: 'viewer',
    summary: 'the newest earlier batch of the same plugin: {previous: batch | null}',
    response: responses.previousBatch,
  }),
  diffBatches: define({
    method: 'GET',
    path: '/batches/:id/diff',
    role: 'viewer',
    summary: 'what changed from batch ?from=<id> to this one (facts added/removed/changed, status)',
    query: queries.diff,
    response: responses.batchDiff,
  }),
  exportBatch: define({
    method: 'GET',
    path: '/batches/:id/export',
    role: 'viewer',
    summary: 'the results, streamed: ?format=jsonl (one line per project) or csv (one row per fact)',
    query: queries.export,
    streams: ['application/x-ndjson', 'text/csv'],
  }),

  // ---- operations ----
  createOperation: define({
    method: 'POST',
    path: '/operations',
    role: 'operator',
    summary: 'queue one durable operation',
    body: bodies.createOperation,
    status: 202,
    alsoStatus: 200,
    response: responses.operationView,
  }),
  listOperations: define({
    method: 'GET',
    path: '/operations',
    role: 'viewer',
    summary: 'newest operations, filtered (projectId, pluginId, state), paginated',
    query: queries.operations,
    response: responses.page(responses.operationView),
  }),
  resolveOperation: define({
    method: 'GET',
    path: '/operations/resolve',
    role: 'viewer',
    summary:
      'the operation id a reference names: ?ref= a whole id, a unique hex prefix, latest or latest~N (of ?pluginId=, ?projectId=); 400 listing the matches when ambiguous',
    query: queries.operationRef,
    response: responses.resolvedId,
  }),
  getOperation: define({
    method: 'GET',
    path: '/operations/:id',
    role: 'viewer',
    summary: 'one operation',
    response: responses.operationView,
  }),
  operationLogs: define({
    method: 'GET',
    path: '/operations/:id/logs',
    role: 'viewer',
    summary: "the operation's redacted stderr so far, oldest first (written while its call runs)",
    response: z.array(responses.logEntry),
  }),
  cancelOperation: define({
    method: 'POST',
    path: '/operations/:id/cancel',
    role: 'operator',
    summary: 'cancel an operation',
    body: bodies.empty,
    response: responses.operationView,
  }),
  operationEvents: define({
    method: 'GET',
    path: '/operations/:id/events',
    role: 'viewer',
    summary: 'state changes (Server-Sent Events)',
    events: operationEvents,
  }),

  // ---- schedules (`:id` is a schedule's id or its name) ----
  listSchedules: define({
    method: 'GET',
    path: '/schedules',
    role: 'viewer',
    summary: 'recurring inspections, each with its next run and its last run',
    response: z.array(responses.scheduleView),
  }),
  addSchedule: define({
    method: 'POST',
    path: '/schedules',
    role: 'operator',
    summary:
      'add a recurring inspection (an interval or a cron pattern, no more often than the host minimum)',
    body: bodies.addSchedule,
    status: 201,
    response: responses.schedule,
  }),
  editSchedule: define({
    method: 'POST',
    path: '/schedules/:id',
    role: 'operator',
    summary: 'change the name, projects, interval or cron pattern of a schedule',
    body: bodies.editSchedule,
    response: responses.schedule,
  }),
  pauseSchedule: define({
    method: 'POST',
    path: '/schedules/:id/pause',
    role: 'operator',
    summary: 'pause a schedule: its job scheduler is removed, no run starts',
    body: bodies.empty,
    response: responses.schedule,
  }),
  resumeSchedule: define({
    method: 'POST',
    path: '/schedules/:id/resume',
    role: 'operator',
    summary: 'resume a paused schedule',
    body: bodies.empty,
    response: responses.schedule,
  }),
  removeSchedule: define({
    method: 'DELETE',
    path: '/schedules/:id',
    role: 'operator',
    summary: 'stop a recurring inspection',
    response: responses.removedSchedule,
  }),

  // ---- webhooks (admin): events delivered signed by the workers ----
  listWebhooks: define({
    method: 'GET',
    path: '/webhooks',
    role: 'admin',
    summary: 'webhooks (never their secrets)',
    response: z.array(responses.webhookView),
  }),
  addWebhook: define({
    method: 'POST',
    path: '/webhooks',
    role: 'admin',
    summary: 'add a webhook: an http(s) URL, the events it gets, optionally one plugin, the signing secret',
    body: bodies.addWebhook,
    status: 201,
    response: responses.webhookView,
  }),
  removeWebhook: define({
    method: 'DELETE',
    path: '/webhooks/:id',
    role: 'admin',
    summary: 'remove a webhook (its pending deliveries are dropped)',
    response: responses.removedWebhook,
  }),
  editWebhook: define({
    method: 'POST',
    path: '/webhooks/:id',
    role: 'admin',
    summary: 'change a webhook’s URL, events or whether it is active',
    body: bodies.editWebhook,
    response: responses.webhookView,
  }),
  rotateWebhookSecret: define({
    method: 'POST',
    path: '/webhooks/:id/secret',
    role: 'admin',
    summary:
      'a new signing secret; the old one signs too (X-Switchyard-Signature-256-Previous) for a window, 24 hours unless given',
    body: bodies.rotateWebhookSecret,
    response: responses.webhookView,
  }),
  pingWebhook: define({
    method: 'POST',
    path: '/webhooks/:id/ping',
    role: 'admin',
    summary: 'queue a signed ping event to one webhook (active or not); answers the delivery',
    body: bodies.empty,
    status: 202,
    response: responses.deliveryRecord,
  }),
  showDelivery: define({
    method: 'GET',
    path: '/webhooks/deliveries/:id',
    role: 'admin',
    summary: 'one delivery: the body as signed and sent, each attempt with the receiver’s answer',
    response: responses.deliveryRecord,
  }),
  redeliverDelivery: define({
    method: 'POST',
    path: '/webhooks/deliveries/:id/redeliver',
    role: 'admin',
    summary:
      'send a delivered or failed delivery’s event again, under a new delivery id, to its webhook as it is now',
    body: bodies.empty,
    status: 202,
    response: responses.deliveryRecord,
  }),
  listDeliveries: define({
    method: 'GET',
    path: '/webhooks/deliveries',
    role: 'admin',
    summary: 'the newest deliveries of every webhook, each with its attempts',
    response: z.array(responses.deliveryView),
  }),
  webhookDeliveries: define({
    method: 'GET',
    path: '/webhooks/:id/deliveries',
    role: 'admin',
    summary: 'the newest deliveries of one webhook, each with its attempts',
    response: z.array(responses.deliveryView),
  }),

  // ---- audit ----
  queue: define({
    method: 'GET',
    path: '/queue',
    role: 'viewer',
    summary:
      'what waits and runs: per requester and batch or operation (waiting, running, share), per worker slot (plugin, project, since, last took work)',
    response: responses.queueView,
  }),
  audit: define({
    method: 'GET',
    path: '/audit',
    role: 'viewer',
    summary:
      'newest audit entries, filtered (actor, action prefix, excludeAction prefix, target, since), paginated',
    query: queries.audit,
    response: responses.page(responses.auditEntry),
  }),

  // ---- teams: weights in the fair share of the workers ----
  listTeams: define({
    method: 'GET',
    path: '/teams',
    role: 'viewer',
    summary: 'teams (named by tokens or given a weight) with their weights and tokens',
    response: z.array(responses.teamView),
  }),
  setTeam: define({
    method: 'POST',
    path: '/teams/:team',
    role: 'admin',
    summary: "set a team's weight in the fair share (default 1)",
    body: bodies.setTeam,
    response: responses.teamView,
  }),

  // ---- tokens and the caller's own ----
  listTokens: define({
    method: 'GET',
    path: '/tokens',
    role: 'admin',
    summary: 'list tokens (with expiry and last use)',
    response: z.array(responses.tokenView),
  }),
  createToken: define({
    method: 'POST',
    path: '/tokens',
    role: 'admin',
    summary: 'create a token (its secret is shown once)',
    body: bodies.createToken,
    status: 201,
    response: responses.createdToken,
  }),
  revokeToken: define({
    method: 'DELETE',
    path: '/tokens/:id',
    role: 'admin',
    summary: "revoke a token, by id or name: the removed token's view",
    response: responses.revokedToken,
  }),
  me: define({
    method: 'GET',
    path: '/me',
    role: 'viewer',
    summary: 'the token making this request: its name, role and expiry',
    response: responses.me,
  }),

  // ---- rollouts ----
  createRollout: define({
    method: 'POST',
    path: '/rollouts',
    role: 'operator',
    summary:
      'run one action on a selection of projects (all, labels, where, advertised, ids: their intersection), in waves within a failure budget; risk none starts at once, any other waits for an admin; with an Idempotency-Key header, the same key and body answer 200 and the rollout it made',
    body: bodies.createRollout,
    status: 201,
    alsoStatus: 200,
    response: responses.rolloutView,
  }),
  listRollouts: define({
    method: 'GET',
    path: '/rollouts',
    role: 'viewer',
    summary:
      'newest rollouts, filtered (state, pluginId), paginated; each without its selection (GET /rollouts/:id has it)',
    query: queries.rollouts,
    response: responses.page(responses.rolloutListItem),
  }),
  resolveRollout: define({
    method: 'GET',
    path: '/rollouts/resolve',
    role: 'viewer',
    summary:
      'the rollout id a reference names: ?ref= a whole id, a unique hex prefix, latest or latest~N (of ?pluginId=); 400 listing the matches when ambiguous',
    query: queries.rolloutRef,
    response: responses.resolvedId,
  }),
  getRollout: define({
    method: 'GET',
    path: '/rollouts/:id',
    role: 'viewer',
    summary: 'one rollout: state, waves, counts, skipped projects',
    response: responses.rolloutView,
  }),
  rolloutProjects: define({
    method: 'GET',
    path: '/rollouts/:id/projects',
    role: 'viewer',
    summary: "the rollout's projects in wave order (?state=), each with its operation and error, paginated",
    query: queries.rolloutProjects,
    response: responses.page(responses.rolloutProject),
  }),
  approveRollout: define({
    method: 'POST',
    path: '/rollouts/:id/approve',
    role: 'admin',
    summary: 'start a rollout awaiting approval (an admin other than its creator)',
    body: bodies.empty,
    response: responses.rolloutView,
  }),
  pauseRollout: define({
    method: 'POST',
    path: '/rollouts/:id/pause',
    role: 'operator',
    summary: 'start no new operation; the running ones end',
    body: bodies.empty,
    response: responses.rolloutView,
  }),
  resumeRollout: define({
    method: 'POST',
    path: '/rollouts/:id/resume',
    role: 'operator',
    summary: 'go on from a pause (past a failure budget: admin only)',
    body: bodies.empty,
    response: responses.rolloutView,
  }),
  cancelRollout: define({
    method: 'POST',
    path: '/rollouts/:id/cancel',
    role: 'operator',
    summary: 'projects not started never start; running operations are cancelled',
    body: bodies.empty,
    response: responses.rolloutView,
  }),
  retryRollout: define({
    method: 'POST',
    path: '/rollouts/:id/retry',
    role: 'operator',
    summary:
      "a new rollout of this one's failed projects (never its outcome_unknown ones), with the same action, input, concurrency and budget; with an Idempotency-Key header, the same key answers 200 and the rollout it made",
    body: bodies.retryRollout,
    status: 201,
    alsoStatus: 200,
    response: responses.rolloutView,
  }),
  exportRollout: define({
    method: 'GET',
    path: '/rollouts/:id/export',
    role: 'viewer',
    summary: "the rollout's projects: ?format=jsonl (one line per project) or csv (one row per project)",
    query: queries.rolloutExport,
    streams: ['application/x-ndjson', 'text/csv'],
  }),

  openApi: define({
    method: 'GET',
    path: '/openapi.json',
    role: 'viewer',
    summary: 'this document',
    response: responses.openApi,
  }),
};

export type RouteName = keyof typeof routes;

/** The answer of a route by name (the web UI's JSDoc: `AnswerOf<'getOperation'>`). */
export type AnswerOf<N extends RouteName> = Answer<(typeof routes)[N]>;
/** The data of one event of a route's stream by name (`EventOf<'batchEvents', 'progress'>`). */
export type EventOf<N extends RouteName, E extends string> = EventData<(typeof routes)[N], E>;
