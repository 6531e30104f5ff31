// Builds everything a process needs from its configuration: the core, the
// BullMQ queues and the work services. Each process shell calls this once.
import type { Redis } from 'ioredis';
import { createCore, type Core, type CoreConfig } from './context.js';
import { createQueues, retentionFromEnv, type Queues, type RetentionConfig } from './jobs.js';
import { closeRedis, createRedis } from './redis.js';
import { WorkService } from './work.js';

export interface Runtime {
  core: Core;
  queues: Queues;
  work: WorkService;
  /** The connection BullMQ uses (maxRetriesPerRequest: null). */
  bullConnection: Redis;
  retention: RetentionConfig;
  close(): Promise<void>;
}

export async function createRuntime(config: CoreConfig & { retention?: RetentionConfig }): Promise<Runtime> {
  const core = await createCore(config);
  const bullConnection = createRedis(config.redisUrl, {
    forBullmq: true,
    answersRequests: config.answersRequests ?? false,
  });
  const retention = config.retention ?? retentionFromEnv();
  const queues = createQueues(bullConnection, core.keys, retention);
  const work = new WorkService(core.redis, core.keys, core.plugins, core.projects, queues);
  return {
    core,
    queues,
    work,
    bullConnection,
    retention,
    async close() {
      await queues.close();
      await closeRedis(bullConnection);
      await core.close();
    },
  };
}
