// The composition root: builds everything a process needs from its
// configuration — the core, the BullMQ queues, the batch and operation services, the token
// and schedule stores, and the identity the process acts as. Each process
// shell (CLI command, api, worker, scheduler) calls this once, through
// process-runtime.ts, and constructs no store of its own.
import type { Redis } from 'ioredis';
import { createCore, type Core, type CoreConfig } from './core-services.js';
import { EventHub, closeRedis, createRedis } from '../redis/index.js';
import { createQueues, retentionFromEnv, type Queues, type RetentionConfig } from '../redis/index.js';
import { ScheduleStore } from '../work/upkeep/index.js';
import { TokenStore } from '../access/index.js';
import { BatchService } from '../work/batches/index.js';
import { OperationService } from '../work/operations/index.js';
import { Notifier } from '../work/notify/index.js';

export interface Runtime {
  core: Core;
  queues: Queues;
  /** Inspection batches: create, read, follow, cancel, retry, diff, export. */
  batches: BatchService;
  /** Durable operations: request, read, follow, wait, cancel, logs. */
  operations: OperationService;
  /** The one pub/sub subscriber every live follower of this process shares. */
  events: EventHub;
  tokens: TokenStore;
  schedules: ScheduleStore;
  /** Webhooks: their store, and the events the other services publish (work/notify). */
  notifier: Notifier;
  /** Who this process acts as when it decides on its own (`worker:<host>:<pid>`, …). */
  identity: string;
  /** The connection BullMQ uses (maxRetriesPerRequest: null). */
  bullConnection: Redis;
  retention: RetentionConfig;
  close(): Promise<void>;
}

export type RuntimeConfig = CoreConfig & { retention?: RetentionConfig };

export async function createRuntime(config: RuntimeConfig): Promise<Runtime> {
  const core = await createCore(config);
  const bullConnection = createRedis(config.redisUrl, {
    forBullmq: true,
    answersRequests: config.answersRequests ?? false,
  });
  const retention = config.retention ?? retentionFromEnv();
  const queues = createQueues(bullConnection, core.keys, retention);
  const events = new EventHub(core.redis);
  const deps = { redis: core.redis, keys: core.keys, plugins: core.plugins, queues, events };
  const notifier = new Notifier(core.redis, core.keys, queues.notify);
  return {
    core,
    queues,
    notifier,
    batches: new BatchService({ ...deps, projects: core.projects, notices: notifier }),
    operations: new OperationService({ ...deps, notices: notifier }),
    events,
    tokens: new TokenStore(core.redis, core.keys),
    schedules: new ScheduleStore(core.redis, core.keys),
    identity: core.plugins.options.processActor,
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
