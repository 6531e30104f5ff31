// The composition root: builds everything a process needs from its
// configuration — one service object per room (plugins, projects, batches,
// operations, schedules, webhooks, tokens, audit, maintenance), the plumbing
// under them (Redis, keys, the BullMQ queues, the event hub) and the identity
// the process acts as. Each process shell (CLI command, api, worker,
// scheduler) calls this once, through process-runtime.ts, constructs no store
// of its own and calls the services only.
import type { Redis } from 'ioredis';
import { createCore, type CoreConfig } from './core-services.js';
import {
  EventHub,
  closeRedis,
  createRedis,
  type Keys,
  createQueues,
  retentionFromEnv,
  type Queues,
  type RetentionConfig,
} from '../redis/index.js';
import { MaintenanceService, QueueService, ScheduleService } from '../work/upkeep/index.js';
import { AuditService, TokenStore } from '../access/index.js';
import { BatchService } from '../work/batches/index.js';
import { OperationService } from '../work/operations/index.js';
import { Notifier, WebhookService } from '../work/notify/index.js';
import { RolloutService } from '../work/rollouts/index.js';
import type { PluginService } from '../plugins/index.js';
import type { ProjectService } from '../projects/index.js';

export interface Runtime {
  config: RuntimeConfig;
  /** Plugins: refresh, review, trust, grants, health, policy, logs. */
  plugins: PluginService;
  /** Projects: the registry, trust, labels. */
  projects: ProjectService;
  /** Inspection batches: create, read, follow, cancel, retry, diff, export, the fleet. */
  batches: BatchService;
  /** Durable operations: request, read, follow, wait, cancel, logs. */
  operations: OperationService;
  /** Rollouts: one action over a selection of projects, in waves, within a failure budget, after approval. */
  rollouts: RolloutService;
  /** Recurring inspections: add, edit, pause, remove, list, run; bulk cancel of their batches. */
  schedules: ScheduleService;
  /** Webhooks: add, list, remove, deliveries, one delivery attempt. */
  webhooks: WebhookService;
  tokens: TokenStore;
  /** The audit log as a viewer reads it. */
  audit: AuditService;
  /** What waits and runs now: per requester, batch, operation and worker slot. */
  queue: QueueService;
  /** Time-driven work: the maintenance and health jobs, the scheduler's job schedulers and beat. */
  maintenance: MaintenanceService;
  /** Who this process acts as when it decides on its own (`worker:<host>:<pid>`, …). */
  identity: string;
  // ---- plumbing: for the shells' queue, pub/sub and health wiring, not a way around the services ----
  redis: Redis;
  keys: Keys;
  queues: Queues;
  /** The one pub/sub subscriber every live follower of this process shares. */
  events: EventHub;
  /** The connection BullMQ uses (maxRetriesPerRequest: null). */
  bullConnection: Redis;
  retention: RetentionConfig;
  close(): Promise<void>;
}

export type RuntimeConfig = CoreConfig & { retention?: RetentionConfig };

export async function createRuntime(config: RuntimeConfig): Promise<Runtime> {
  const core = await createCore(config);
  const { redis, keys, plugins, projects } = core;
  const bullConnection = createRedis(config.redisUrl, {
    forBullmq: true,
    answersRequests: config.answersRequests ?? false,
  });
  const retention = config.retention ?? retentionFromEnv();
  const queues = createQueues(bullConnection, keys, retention);
  const events = new EventHub(redis);
  const notices = new Notifier(redis, keys, queues.notify);
  const deps = { redis, keys, plugins, projects, queues, events, notices };
  const batches = new BatchService(deps);
  const operations = new OperationService(deps);
  const schedules = new ScheduleService({ ...deps, batches });
  const rollouts = new RolloutService({ ...deps, batches, operations });
  const identity = plugins.options.processActor;
  return {
    config,
    plugins,
    projects,
    batches,
    operations,
    rollouts,
    schedules,
    webhooks: new WebhookService(notices),
    tokens: new TokenStore(redis, keys),
    audit: new AuditService(redis, keys),
    queue: new QueueService({ redis, keys, batches: batches.store, operations: operations.store }),
    maintenance: new MaintenanceService({ ...deps, batches, operations, schedules, identity }, retention),
    identity,
    redis,
    keys,
    queues,
    events,
    bullConnection,
    retention,
    async close() {
      await events.close();
      await queues.close();
      await closeRedis(bullConnection);
      await core.close();
    },
  };
}
